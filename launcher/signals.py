"""SIGTERM and SIGHUP end the tool the way Ctrl-C does, from the launcher's first steps on.

The launcher starts the application's package listing before the core is imported; a signal
that arrives then must end the tool, and that child, as one arriving later does. Standard library
only: this runs before everything else.
"""

from __future__ import annotations


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: the run stops the way Ctrl-C stops it (children ended, exit 130)."""


def install_signal_handlers() -> None:
    """Handle SIGTERM and SIGHUP like SIGINT, so every child we started ends when we stop.

    The interrupt unwinds the run (each child's supervisor kills it and what it started); what
    is still running at exit is ended by core/readers/probes/reaper.py. Only the main thread can do this.
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
