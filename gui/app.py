"""The desktop window: ``fallback-doctor`` (no subcommand) and ``fallback-doctor gui [options]``.

Only Qt, pyqtgraph and the wizard's own modules are imported here (pyqtgraph before the window
exists, on this thread: imported on a pool thread while Qt ran, it crashed the wizard); the core,
NVML and ONNX Runtime load when a step needs them (in a child process for the steps themselves), so the
window appears in about a second (benchmarks/bench_gui_startup.py measures it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fallback_doctor.gui.wizard import DoctorWizard
    from PySide6.QtCore import QCoreApplication

from fallback_doctor.wizard_options import GUI_DESCRIPTION, add_wizard_arguments

__all__ = ["build_parser", "make_application", "probe_options_from_args", "run", "target_from_args"]


def build_parser() -> argparse.ArgumentParser:
    """The options of ``fallback-doctor gui`` (launcher/wizard_options.py: shared with the CLI)."""
    parser = argparse.ArgumentParser(prog="fallback-doctor gui", description=GUI_DESCRIPTION)
    add_wizard_arguments(parser)
    return parser


def target_from_args(args: argparse.Namespace) -> dict[str, object]:
    """The wizard's target dict from the options (empty values left out)."""
    from fallback_doctor.core import facade

    kind = args.target
    if args.bundle:
        kind = "bundle"
    elif kind is None:
        # The first kind (in the registry's order) whose page-1 field the options fill.
        given = {"bareun_root": args.bareun_root, "config": args.config, "python": args.python,
                 "logs": args.log, "lib_dir": args.lib_dir}  # fmt: skip
        filled = [
            p.kind
            for p in facade.wizard_profiles()
            if any(given.get(k) for k in facade.wizard_field(p).fills_from)
        ]
        kind = filled[0] if filled else "auto"
    target = {
        "kind": kind,
        "bareun_root": args.bareun_root,
        "python": args.python,
        "config": args.config,
        "logs": list(args.log),
        "pid": args.pid,
        "lib_dir": args.lib_dir,
        "bundle": args.bundle,
    }
    return {key: value for key, value in target.items() if value}


def probe_options_from_args(args: argparse.Namespace) -> dict[str, object] | str:
    """The wizard's probe options from ``--model`` and ``--dim`` (the model field starts with them),
    or the usage error for a ``--dim`` that is not NAME=VALUE."""
    from fallback_doctor.gui.model_field import dims_from_text

    dims, bad = dims_from_text(" ".join(args.dim or ()))
    if bad is not None:
        return f"--dim {bad}: expected NAME=VALUE with a positive integer, e.g. --dim batch=4"
    options: dict[str, object] = {"dims": dims} if dims else {}
    if args.model:
        options["model"] = args.model
    return options


def make_application() -> QCoreApplication:
    """The QApplication (high-DPI rounding that keeps fractional scales sharp)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    existing = QApplication.instance()
    if existing is not None:
        return existing
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication([sys.argv[0]])
    app.setApplicationName("GPU Fallback Doctor")
    app.setOrganizationName("fallback-doctor")
    app.setDesktopFileName("fallback-doctor")
    return app


def run(argv: Sequence[str]) -> int:
    """Open the wizard; returns the application's exit status."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    options = probe_options_from_args(args)
    if isinstance(options, str):
        parser.error(options)
    app = make_application()
    import pyqtgraph  # noqa: F401 - here, before the window: never on a pool thread while Qt runs
    from fallback_doctor.gui.wizard import DoctorWizard

    wizard = DoctorWizard(target_from_args(args), lang=args.lang, probe_options=options)
    wizard.show()
    status = int(app.exec())
    close_window(wizard)
    return status


def close_window(wizard: DoctorWizard) -> None:
    """The window stopped and deleted before the application is: in the other order (the
    interpreter's teardown picks one) Qt crashed at exit now and then (SIGSEGV, no Python frame)."""
    import shiboken6

    wizard.shutdown()
    shiboken6.delete(wizard)
