"""The options of `fallback-doctor gui`, in one place for the wizard and the terminal.

Pure argparse (no Qt; of the core only the registry of target kinds, for --target's choices):
the wizard parses them in gui/app.py, and the CLI registers
the same `gui` subcommand so that `fallback-doctor --help` lists it and, without a display,
`gui --help` prints gui's own usage and `gui --bundle ZIP` shows the bundle in the terminal.
"""

from __future__ import annotations

import argparse

from fallback_doctor.core.language.texts import LANGUAGES

GUI_HELP = "open the step-by-step wizard (needs a display; without one: diagnose, or bundle show)"
GUI_DESCRIPTION = (
    "Open the step-by-step wizard, optionally on a given target. Without a display the same "
    "options run the headless diagnosis (fallback-doctor diagnose), and --bundle ZIP prints the "
    "bundle's report in the terminal (fallback-doctor bundle show ZIP) and writes nothing."
)


def add_wizard_arguments(parser: argparse.ArgumentParser) -> None:
    """The wizard's options: the target options of `diagnose`, plus --bundle to open one."""
    from fallback_doctor.core.readers.targets.registry import kinds_help, target_kinds

    parser.add_argument(
        "--target", choices=target_kinds(), default=None, help=f"what to diagnose: {kinds_help()}"
    )
    parser.add_argument("--bareun-root", metavar="DIR", help="the Bareun installation")
    parser.add_argument("--python", metavar="PATH", help="the application's Python interpreter")
    parser.add_argument("--config", metavar="FILE", help="the application's configuration file")
    parser.add_argument("--log", metavar="FILE", action="append", default=[], help="a log file (repeatable)")
    parser.add_argument("--pid", metavar="PID", type=int, help="the running server's process id")
    parser.add_argument(
        "--lib-dir", metavar="DIR", help="--target native: the application's ONNX Runtime folder"
    )
    parser.add_argument("--bundle", metavar="ZIP", help="open a diagnostic bundle (read only)")
    parser.add_argument(
        "--model", metavar="FILE", help="the application's own .onnx model for the test inference"
    )
    parser.add_argument(
        "--dim",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="value of a dynamic dimension of the model (repeatable), e.g. --dim batch=16",
    )
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="language (default: the locale)")


def headless_argv(args: argparse.Namespace) -> list[str]:
    """What `gui` with these options does without a display, as a CLI command line.

    A bundle is shown, never diagnosed: `diagnose --bundle ZIP` would inspect THIS machine and
    write its own bundle over the customer's file.
    """
    lang = ["--lang", args.lang] if args.lang else []
    if args.bundle:
        return ["bundle", "show", args.bundle, *lang]
    argv = ["diagnose"]
    if args.target:
        argv += ["--target", args.target]
    for option, value in (
        ("--bareun-root", args.bareun_root),
        ("--python", args.python),
        ("--config", args.config),
        ("--pid", None if args.pid is None else str(args.pid)),
        ("--lib-dir", args.lib_dir),
    ):
        if value:
            argv += [option, value]
    for log in args.log or ():
        argv += ["--log", log]
    if getattr(args, "model", None):
        argv += ["--model", args.model]
    for dim in getattr(args, "dim", None) or ():
        argv += ["--dim", dim]
    return argv + lang
