"""The desktop window: ``fallback-doctor`` (no subcommand) and ``fallback-doctor gui [options]``.

Only Qt and the wizard's own modules are imported here; the core, pyqtgraph, NVML and ONNX
Runtime load when a step needs them (in a child process for the steps themselves), so the
window appears in about a second (benchmarks/bench_gui_startup.py measures it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from fallback_doctor.wizard_options import GUI_DESCRIPTION, add_wizard_arguments

__all__ = ["build_parser", "make_application", "run", "target_from_args"]


def build_parser() -> argparse.ArgumentParser:
    """The options of ``fallback-doctor gui`` (launcher/wizard_options.py: shared with the CLI)."""
    parser = argparse.ArgumentParser(prog="fallback-doctor gui", description=GUI_DESCRIPTION)
    add_wizard_arguments(parser)
    return parser


def target_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The wizard's target dict from the options (empty values left out)."""
    from fallback_doctor.core import facade

    kind = args.target
    if args.bundle:
        kind = "bundle"
    elif kind is None:
        # The first kind (in the registry's order) whose page-1 field the options fill.
        given = {"bareun_root": args.bareun_root, "config": args.config, "python": args.python,
                 "logs": args.log, "lib_dir": args.lib_dir}  # fmt: skip
        filled = [p.kind for p in facade.wizard_profiles() if any(given.get(k) for k in p.wizard.fills_from)]
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


def make_application() -> Any:
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
    args = build_parser().parse_args(list(argv))
    app = make_application()
    from fallback_doctor.gui.wizard import DoctorWizard

    wizard = DoctorWizard(target_from_args(args), lang=args.lang)
    wizard.show()
    return int(app.exec())
