"""A running process as the target (``--pid``): its own interpreter, environment and working folder.

``/proc/PID/exe`` of a program in a virtual environment is the base interpreter the environment
was made from (``/usr/bin/python3.11``), not the environment: its ``sys.prefix`` is found from
what the process really loaded (a ``site-packages`` folder in ``/proc/PID/maps``), else its
``VIRTUAL_ENV``, else its command line, else the executable itself. Read-only; a read the system
refuses is said, never guessed around.

By hand: ``readlink /proc/PID/exe /proc/PID/cwd``, ``tr '\\0' ' ' < /proc/PID/cmdline``,
``grep site-packages /proc/PID/maps``, ``tr '\\0' '\\n' < /proc/PID/environ | grep VIRTUAL_ENV``,
``cat PREFIX/pyvenv.cfg``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping

from fallback_doctor.core.model.facts.target import RunningProcess
from fallback_doctor.core.platform.files import read_regular_file

PROC = "/proc"
_MAX_READ = 64 * 1024 * 1024
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?[dmu]*$")
_SITE = re.compile(r"^(?P<prefix>/.+?)/lib(?:64)?/python\d+(?:\.\d+)?t?/(?:site|dist)-packages/")


def _read(path: str) -> bytes | None:
    return read_regular_file(path, _MAX_READ)


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _environ(base: str) -> tuple[dict[str, str] | None, str | None]:
    """The process's environment, or why it could not be read."""
    try:
        data = _read(os.path.join(base, "environ"))
    except PermissionError as error:
        return None, f"PermissionError: {error.strerror or error}"
    except OSError as error:
        return None, f"{type(error).__name__}: {error.strerror or error}"
    env: dict[str, str] = {}
    for item in (data or b"").split(b"\0"):
        key, sep, value = item.decode("utf-8", "replace").partition("=")
        if sep and key:
            env[key] = value
    return env, None


def mapped_prefixes(maps_text: str) -> list[str]:
    """The ``sys.prefix`` folders whose ``site-packages`` the process has files of mapped, in order."""
    found: list[str] = []
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and (match := _SITE.match(parts[5])) and match["prefix"] not in found:
            found.append(match["prefix"])
    return found


def is_python_executable(path: str | None) -> bool:
    """Whether ``path`` names a Python interpreter (``python``, ``python3``, ``python3.11``)."""
    return bool(path) and bool(_PYTHON_NAME.match(os.path.basename(path or "")))


def interpreter_in(prefix: str, hint: str | None = None) -> str | None:
    """The interpreter of the environment at ``prefix``: ``bin/python``, ``python3``, or ``hint``'s name."""
    names = ["python", "python3", *([os.path.basename(hint)] if hint else [])]
    for name in names:
        candidate = os.path.join(prefix, "bin", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _on_path(name: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    """``name`` (argv[0]) as the process's own PATH and working folder resolve it."""
    if "/" in name:
        path = name if os.path.isabs(name) else os.path.join(cwd or "/", name)
        return os.path.normpath(path) if os.path.isfile(path) else None
    for folder in env.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if folder and os.path.isfile(candidate):
            return candidate
    return None


def _interpreter(
    exe: str | None, argv: tuple[str, ...], maps_text: str, env: Mapping[str, str] | None, cwd: str | None
) -> tuple[str | None, str | None, str | None]:
    """(interpreter, prefix, found_by) of a Python process, best evidence first."""
    prefixes = mapped_prefixes(maps_text)
    venvs = [p for p in prefixes if os.path.isfile(os.path.join(p, "pyvenv.cfg"))]
    for prefix in venvs or prefixes:
        if prefix not in venvs and exe and os.path.dirname(exe) == os.path.join(prefix, "bin"):
            return exe, prefix, "maps"  # a system interpreter: itself (/usr/bin/python may be another)
        python = interpreter_in(prefix, exe)
        if python is not None:
            return python, prefix, "maps"
    virtual_env = (env or {}).get("VIRTUAL_ENV")
    if virtual_env and (python := interpreter_in(virtual_env, exe)) is not None:
        return python, virtual_env, "virtual_env"
    if argv and is_python_executable(argv[0]):
        named = _on_path(argv[0], env or {}, cwd)
        prefix = os.path.dirname(os.path.dirname(named)) if named else ""
        venv = os.path.isfile(os.path.join(prefix, "pyvenv.cfg"))
        if named is not None and (venv or os.path.realpath(named) != os.path.realpath(exe or "")):
            return named, prefix, "argv"
    if exe:
        return exe, os.path.dirname(os.path.dirname(exe)), "exe"
    return None, None, None


def read_running_process(pid: int, proc: str = PROC) -> RunningProcess:
    """What ``--pid`` names: the executable, command line, working folder, interpreter and environment.

    By hand: ``readlink /proc/PID/exe /proc/PID/cwd``, ``grep site-packages /proc/PID/maps``.
    """
    base = os.path.join(proc, str(pid))
    exe = _link(os.path.join(base, "exe"))
    try:
        raw = _read(os.path.join(base, "cmdline")) or b""
    except OSError:
        raw = b""
    argv = tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    try:
        maps_text = (_read(os.path.join(base, "maps")) or b"").decode("utf-8", "replace")
    except OSError:
        maps_text = ""
    env, env_error = _environ(base)
    cwd = _link(os.path.join(base, "cwd"))
    is_python = (
        is_python_executable(exe)
        or "/libpython" in maps_text
        or (bool(argv) and is_python_executable(argv[0]) and exe is None)
    )
    interpreter = prefix = found_by = None
    if is_python:
        interpreter, prefix, found_by = _interpreter(exe, argv, maps_text, env, cwd)
    return RunningProcess(
        pid=pid,
        executable=exe,
        argv=argv,
        cwd=cwd,
        is_python=is_python,
        interpreter=interpreter,
        prefix=prefix,
        found_by=found_by,
        environment_read=env is not None,
        environment_error=env_error,
        output_files=output_files(base),
    )


def output_files(base: str) -> tuple[str, ...]:
    """The regular files the process writes its standard output and error to, each once: what it
    prints is its log (a terminal, a pipe, a socket or journald are not files we can read).

    By hand: ``ls -l /proc/PID/fd/1 /proc/PID/fd/2``.
    """
    found: list[str] = []
    for descriptor in ("1", "2"):
        link = os.path.join(base, "fd", descriptor)
        try:
            is_file = stat.S_ISREG(os.stat(link).st_mode)
        except OSError:
            continue
        path = _link(link)
        if (
            is_file
            and path
            and path.startswith("/")
            and not path.endswith(" (deleted)")
            and path not in found
        ):
            found.append(path)
    return tuple(found)


def describe_process(running: RunningProcess) -> dict[str, str]:
    """The report's record of the process (``document["target"]``): codes and paths, no words.

    ``environment`` is ``process`` (its own, read from /proc/PID/environ) or ``unreadable``
    (with ``environment_error``: the technician's shell environment stood in).
    """
    described = {
        "pid": str(running.pid),
        "process": " ".join(running.argv)[:400],
        "executable": running.executable or "",
        "cwd": running.cwd or "",
        "python_found_by": running.found_by or "",
        "prefix": running.prefix or "",
        "environment": "process" if running.environment_read else "unreadable",
        "environment_error": running.environment_error or "",
    }
    if running.is_python and running.interpreter:
        described["python"] = running.interpreter
    return {key: value for key, value in described.items() if value}
