"""`fallback-doctor` subcommands for the terminal: diagnose (more come with later issues)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fallback_doctor import __version__
from fallback_doctor.cli.common import (
    UsageError,
    default_language,
    install_signal_handlers,
    target_spec,
)
from fallback_doctor.cli.output import text_options, write_error, write_json, write_text
from fallback_doctor.cli.test_inference_model import add_model_arguments, checked_model
from fallback_doctor.core.door import (
    AUTO,
    EXIT_USAGE,
    LANGUAGES,
    CollectRequest,
    DiagnoseRequest,
    NotAnInterpreterError,
    TargetNotFound,
    default_python,
    diagnose,
    diagnosis_document,
    exit_code_for,
    interpreter_of,
    kinds_help,
    render_text,
    target_kinds,
    visible_line,
)
from fallback_doctor.wizard_options import GUI_DESCRIPTION, GUI_HELP, add_wizard_arguments, headless_argv

if TYPE_CHECKING:
    from fallback_doctor.core.door import ExtraMember


OPTIONAL_COMMANDS: dict[str, str] = {
    "explain-log": "fallback_doctor.cli.explain_log",
    "test-inference": "fallback_doctor.cli.test_inference",
    "bundle": "fallback_doctor.cli.bundle",
    "check": "fallback_doctor.cli.check",
    "fleet-summary": "fallback_doctor.cli.fleet",
}
"""Subcommands living in modules of their own, imported only when asked for (start-up time)."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="fallback-doctor",
        description="Find out why ONNX Runtime runs on the CPU when it was asked for the GPU.",
        epilog="Without a subcommand the wizard opens (or, without a display, `diagnose` runs).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_diagnose(subparsers)
    _add_gui(subparsers)
    _add_optional_commands(subparsers, only)
    return parser


def _add_gui(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gui`: listed here so that --help shows it; the launcher opens the wizard when it can.

    Reaching this parser means there is no display: the same options then run in the terminal.
    """
    gui = subparsers.add_parser("gui", help=GUI_HELP, description=GUI_DESCRIPTION)
    add_wizard_arguments(gui)
    gui.set_defaults(handler=run_gui_headless)


def run_gui_headless(args: argparse.Namespace) -> int:
    """`gui` without a display: a bundle is shown (never diagnosed or written), else `diagnose`."""
    argv = headless_argv(args)
    print(f"fallback-doctor: no window here; running: fallback-doctor {' '.join(argv)}", file=sys.stderr)
    return main(argv)


_RUNS_HELP = (
    "timed runs per session in the test inference, exactly N "
    "(default: up to 20, fewer once the median is known within 2%%)"
)


def _add_diagnose(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diag = subparsers.add_parser(
        "diagnose",
        help="inspect driver -> CUDA -> cuDNN -> ONNX Runtime and print the ranked findings",
        description="Inspect the GPU stack layer by layer and print the ranked findings with fixes.",
    )
    diag.add_argument(
        "--target",
        choices=target_kinds(),
        default=AUTO,
        help=f"what to diagnose: {kinds_help()} (default: auto)",
    )
    diag.add_argument(
        "--lib-dir",
        metavar="DIR",
        help="--target native: the application's ONNX Runtime folder (libonnxruntime.so / onnxruntime.dll); "
        "default: from --pid's memory map, else ORT_DYLIB_PATH",
    )
    diag.add_argument(
        "--python",
        metavar="PATH",
        help="the application's Python interpreter (default: the one running this tool)",
    )
    diag.add_argument(
        "--bareun-root",
        metavar="DIR",
        help="the Bareun installation (default: BAREUN_ROOT, else /opt/bareun, /bareun, "
        "C:\\Program Files\\bareun)",
    )
    diag.add_argument(
        "--config",
        metavar="FILE",
        help="the application's configuration file (Bareun: <root>/config/bareun.json)",
    )
    diag.add_argument(
        "--log",
        metavar="FILE",
        action="append",
        default=[],
        help="a log file of the application to read (repeatable; default: the profile's log folder)",
    )
    diag.add_argument(
        "--pid",
        metavar="PID",
        type=_pid,
        help="the running server's process id (default: found by executable, library or port)",
    )
    diag.add_argument(
        "--env-file",
        metavar="FILE",
        help="the environment the application starts with (KEY=VALUE lines, an env file, a systemd "
        "unit's Environment= lines): the diagnosis and the probes run with it",
    )
    diag.add_argument("--json", action="store_true", help="print the versioned JSON report")
    diag.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="the text report with every finding's detail and evidence",
    )
    diag.add_argument("--quick", action="store_true", help="static inspection only (no test inference)")
    diag.add_argument("--runs", type=int, default=None, metavar="N", help=_RUNS_HELP)
    add_model_arguments(diag)
    diag.add_argument(
        "--inference-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the most the whole test inference may take (default 120; 900 with TensorRT first)",
    )
    diag.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=None,
        help="language of the text report (default: from the locale)",
    )
    from fallback_doctor.cli.bundle import add_export_arguments

    add_export_arguments(diag)
    diag.set_defaults(handler=run_diagnose)


def _add_optional_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], only: str | None = None
) -> None:
    """Register the subcommands that live in modules of their own (all of them for --help)."""
    for name, module_name in OPTIONAL_COMMANDS.items():
        if only is not None and only != name:
            continue
        importlib.import_module(module_name).add_parser(subparsers)


def _pid(text: str) -> int:
    """A positive process id (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a process id") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a process id")
    return value


def _say_before_inference(step: str) -> None:
    """Before the test inference: whose code runs and how long it may take (on stderr)."""
    if step.startswith("inference: "):
        print(f"fallback-doctor: {step.removeprefix('inference: ')}", file=sys.stderr, flush=True)


def run_diagnose(args: argparse.Namespace) -> int:
    """`fallback-doctor diagnose`: collect, check, rank, print; exit 0, 1 or 2."""
    if args.python:
        try:
            args.python = interpreter_of(args.python)  # a venv's folder names its interpreter
        except NotAnInterpreterError as error:
            raise UsageError(str(error)) from error
    if args.env_file:
        from fallback_doctor.core.door import read_regular_text, start_environment

        try:  # a regular file only (a FIFO would wait for a writer), at most 1 MiB
            os.environ.update(start_environment({"start_env": read_regular_text(args.env_file, 1 << 20)}))
        except OSError as error:
            raise UsageError(f"--env-file {args.env_file}: {error.strerror or error}") from error
    python = args.python or default_python()
    spec = target_spec(args)
    model, dims = checked_model(args)
    request = DiagnoseRequest(
        collect=CollectRequest(python=python, env=dict(os.environ), target=spec),
        quick=args.quick,
        inference_runs=20 if args.runs is None else max(1, args.runs),
        inference_steady=args.runs is None,
        target={"kind": str(spec.kind), "python": python},
        inference_timeout_s=args.inference_timeout,
        inference_model=model,
        inference_dims=dims,
    )
    try:
        diagnosis = diagnose(request, _say_before_inference)
    except TargetNotFound as error:
        raise UsageError(str(error)) from None
    document = diagnosis_document(diagnosis)
    if args.json:
        if write_json(document):
            return EXIT_USAGE
    else:
        lang = args.lang or default_language()
        write_text(render_text(document, lang, verbose=args.verbose, **text_options()))
    if args.bundle:
        from fallback_doctor.cli.bundle import export_from_cli

        args.lang = args.lang or default_language()
        code = export_from_cli(document, args, bundle_extras(document))
        if code:
            return code
    return exit_code_for(diagnosis.verdict)


def bundle_extras(document: dict[str, Any]) -> list[ExtraMember]:
    """The bundle's members besides the report (core/bundle/members.py: read from the document)."""
    from fallback_doctor.core.door import bundle_members

    return bundle_members(document)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; usage errors exit 2 with a one-line message."""
    install_signal_handlers()
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = next((item for item in arguments if not item.startswith("-")), None)
    parser = build_parser(command if command in OPTIONAL_COMMANDS or command in {"diagnose", "gui"} else None)
    args, unknown = parser.parse_known_args(arguments)
    if unknown:
        # The subcommand says it (``check``: Nagios UNKNOWN, 3), the arguments' escapes shown.
        error = getattr(args, "usage_error", parser.error)
        error(visible_line("unrecognized arguments: " + " ".join(unknown)))
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        code: int = args.handler(args)
    except UsageError as error:
        write_error(f"fallback-doctor: {error}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("fallback-doctor: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
