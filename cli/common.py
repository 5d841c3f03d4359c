"""Small helpers shared by the subcommands."""

from __future__ import annotations

import argparse

from fallback_doctor.core.targets.spec import TargetKind, TargetSpec
from fallback_doctor.core.texts import system_language


class UsageError(Exception):
    """A usage problem the user can fix (a missing file, a bad value): exit status 2."""


def default_language() -> str:
    """ "ko" when the locale is Korean, else "en" (core/texts.py decides, for every front end)."""
    return system_language()


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: the run stops the way Ctrl-C stops it (children ended, exit 130)."""


def install_signal_handlers() -> None:
    """Handle SIGTERM and SIGHUP like SIGINT, so every child we started ends when we stop.

    The interrupt unwinds the run (each child's supervisor kills it and what it started); what
    is still running at exit is ended by core/probes/reaper.py. Only the main thread can do this.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, _frame: object) -> None:
        raise Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, stop)


def target_spec(args: argparse.Namespace) -> TargetSpec:
    """The TargetSpec of the target options ``diagnose`` and ``check`` share."""
    return TargetSpec(
        kind=TargetKind(args.target),
        python=args.python,
        bareun_root=args.bareun_root,
        config=args.config,
        logs=tuple(args.log or ()),
        pid=args.pid,
        lib_dir=getattr(args, "lib_dir", None),
    )
