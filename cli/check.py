"""``fallback-doctor check``: a Nagios plugin and a node_exporter textfile for the silent fallback.

``check [--target …] [--bareun-root DIR] [--config FILE] [--log FILE] [--pid PID]`` prints one
status line with performance data and exits 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN::

    CRITICAL - bareun on the CPU: … | cuda_provider_loaded=0 onnxruntime_loaded=1 gpu_memory_mib=0 time=0.080s

``--prometheus FILE.prom`` also writes the metrics for node_exporter's textfile collector
(atomically). It reads the running process and its log only: no test inference, no CUDA library
loaded (core/watch/check.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from fallback_doctor.cli.common import target_spec
from fallback_doctor.cli.output import write_error
from fallback_doctor.core.door import AUTO, LANGUAGES, kinds_help, target_kinds, visible_line


def _pid(text: str) -> int:
    """A positive process id (argparse type)."""
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a process id")
    return int(text)


def add_parser(subparsers: Any) -> None:
    """Register ``check`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "check",
        help="is the running server on the GPU? (Nagios plugin: exit 0/1/2/3, one status line)",
        description="Look at the running server (the CUDA provider library mapped or not, libcudart "
        "and libcudnn, GPU memory held through NVML, its log since the last start-up) and answer in "
        "the Nagios plugin convention. Cheap enough for every minute: no test inference is run.",
    )
    parser.add_argument(
        "--target",
        choices=target_kinds(),
        default=AUTO,
        help=f"what to check: {kinds_help()}; python needs --pid; log judges the log alone, with no "
        "process of this machine looked at",
    )
    parser.add_argument("--python", metavar="PATH", help="the application's Python interpreter")
    parser.add_argument("--bareun-root", metavar="DIR", help="the Bareun installation")
    parser.add_argument("--config", metavar="FILE", help="the application's configuration file")
    parser.add_argument(
        "--log",
        metavar="FILE",
        action="append",
        default=[],
        help="a log file of the application (repeatable)",
    )
    parser.add_argument("--pid", metavar="PID", type=_pid, help="the server's process id (default: found)")
    parser.add_argument("--name", metavar="NAME", help="what the status line calls the server")
    parser.add_argument("--no-log", action="store_true", help="do not read the log")
    parser.add_argument(
        "--prometheus", metavar="FILE.prom", help="also write a node_exporter textfile (atomically)"
    )
    parser.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the status line")
    # The Nagios convention: a bad command line is UNKNOWN (3), not argparse's 2 (CRITICAL there).
    parser.error = _usage_unknown(parser)
    parser.set_defaults(handler=run, usage_error=parser.error)


def _usage_unknown(parser: argparse.ArgumentParser) -> Callable[[str], NoReturn]:
    def error(message: str) -> NoReturn:
        parser.print_usage(sys.stderr)
        print(f"UNKNOWN - fallback-doctor check: {visible_line(message)}")
        sys.exit(3)

    return error


def run(args: argparse.Namespace) -> int:
    """One check: print the status line, write the textfile if asked, return the Nagios state."""
    from fallback_doctor.core.door import State, WatchResult, run_check, status_line

    try:
        result = run_check(
            target_spec(args), dict(os.environ), name=args.name, lang=args.lang, read_log=not args.no_log
        )
    except Exception as error:  # noqa: BLE001 - a plugin that crashes must still say UNKNOWN
        result = WatchResult(
            State.UNKNOWN, "crashed", f"the check failed: {type(error).__name__}: {error}", "?"
        )
    print(status_line(result))
    if args.prometheus:
        from fallback_doctor.core.door import render_textfile, write_textfile

        try:
            write_textfile(args.prometheus, render_textfile(result, args.name))
        except OSError as error:
            write_error(f"fallback-doctor check: {args.prometheus}: {error}")
            return int(State.UNKNOWN)
    return int(result.state)
