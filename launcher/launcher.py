"""The `fallback-doctor` command: the wizard when there is a screen, the terminal otherwise.

This module decides between the GUI and the CLI so that neither has to know the other:
the CLI never imports Qt, and the GUI is only imported when a display is there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence


def display_problem(env: Mapping[str, str], platform: str = sys.platform) -> str | None:
    """Why no window can be shown here, or None when one can.

    Qt aborts the whole process (not an exception) when it cannot reach a display,
    so this is decided before Qt is imported.
    """
    if env.get("QT_QPA_PLATFORM", "").split(":")[0] in {"offscreen", "minimal", "vnc", "eglfs"}:
        return None
    if platform in {"win32", "darwin"}:
        return None
    wayland = env.get("WAYLAND_DISPLAY")
    if wayland:
        runtime_dir = env.get("XDG_RUNTIME_DIR", "")
        path = wayland if os.path.isabs(wayland) else os.path.join(runtime_dir, wayland)
        if os.path.exists(path):
            return None
    display = env.get("DISPLAY")
    if not display:
        return "no display (DISPLAY is not set)"
    if _x_display_reachable(display):
        return None
    return f"the display {display} cannot be reached"


def _x_display_reachable(display: str) -> bool:
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return False
    if host in {"", "unix"}:
        return os.path.exists(f"/tmp/.X11-unix/X{number}")
    import socket  # only for a display over TCP (about 10 ms of every command's start-up)

    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=0.5):
            return True
    except OSError:
        return False


def _wanted_python(args: list[str]) -> str:
    from fallback_doctor.core.readers.collect.early import wanted_python

    return wanted_python(args)


def _start_listing_early(args: list[str]) -> None:
    """Start the application interpreter's package listing and the native child before the
    core is imported.

    Their start-up (Python interpreters) then overlaps with ours; the collector takes it over
    when the interpreter and environment match, and it is killed at exit otherwise.
    """
    from fallback_doctor.core.readers.collect.early import start_diagnose_children

    try:
        start_diagnose_children(_wanted_python(args), dict(os.environ))
    except OSError:
        pass  # the collector starts it itself, and reports why it could not


def _exit_now(code: int) -> None:
    """Exit without the interpreter's teardown of every module (about 20 ms of `diagnose`).

    The exit handlers still run (early children are killed, logging is flushed) and the
    output is flushed first; only the freeing of memory the process gives back anyway is skipped.
    """
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed pipe: the normal exit would not write it either
    atexit._run_exitfuncs()
    os._exit(code)


def _caused_by_interrupt(error: BaseException) -> bool:
    """Whether ``error`` was raised because of a KeyboardInterrupt (our signal handlers raise it)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _run_cli(args: list[str]) -> int:
    """A subcommand: signals handled first, the listing started early for ``diagnose``."""
    from fallback_doctor.signals import install_signal_handlers

    install_signal_handlers()
    if args[0] == "diagnose" and "--target" not in args and os.path.exists(_wanted_python(args)):
        _start_listing_early(args)
    from fallback_doctor.cli.main import main as cli_main

    code: int = cli_main(args)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0].startswith("--run-"):  # a frozen build re-invoked for its own probes
        from fallback_doctor.core.platform.frozen import run_probe_if_asked

        probe_status = run_probe_if_asked(args)
        if probe_status is not None:
            return probe_status
    wants_gui = not args or args[0] == "gui"
    if not wants_gui:
        try:
            code = _run_cli(args)
        except KeyboardInterrupt:  # a signal during start-up, before the CLI's own handling
            print("fallback-doctor: interrupted", file=sys.stderr)
            code = 130
        except Exception as error:
            # A signal inside a class body's __set_name__ (a dataclass field, while importing)
            # reaches us wrapped: RuntimeError("Error calling __set_name__ ...") caused by it.
            if not _caused_by_interrupt(error):
                raise
            print("fallback-doctor: interrupted", file=sys.stderr)
            code = 130
        if argv is None and args[0] == "diagnose":
            _exit_now(code)  # the program itself (not a caller of main): skip the teardown
        return code
    problem = display_problem(os.environ)
    if problem is not None:
        from fallback_doctor.cli.main import main as cli_main

        if not args:
            print(
                f"fallback-doctor: {problem}; running the headless diagnosis instead "
                "(fallback-doctor diagnose).",
                file=sys.stderr,
            )
            return cli_main(["diagnose"])
        if not {"-h", "--help"} & set(args[1:]):
            print(f"fallback-doctor: {problem}, so the wizard cannot open.", file=sys.stderr)
        return cli_main(args)  # `gui` in the CLI: its usage, `bundle show`, or `diagnose`
    from fallback_doctor.gui.app import run

    status: int = run(args[1:])
    return status


if __name__ == "__main__":
    sys.exit(main())
