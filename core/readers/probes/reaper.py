"""Every child we start, and everything it starts, ends when we stop.

Three means, because a child can leave its process group (``setsid``) and its parent:

- each child runs in a session (process group) of its own, killed whole (``killpg``);
- this process is a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a grandchild whose
  parent exits is re-parented to us, not to init, so it can be found and reaped;
- each child's environment carries a token (``FALLBACK_DOCTOR_CHILD=<id>``) that its descendants
  inherit; whatever still carries it when its run ends is killed (``/proc/*/environ``).

:func:`terminate_all` ends every child still running (at exit, on SIGINT, SIGTERM or SIGHUP).
By hand: ``pgrep -af FALLBACK_DOCTOR_CHILD`` finds nothing; ``ps -o pid,ppid,sid,cmd``.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

TOKEN_NAME = "FALLBACK_DOCTOR_CHILD"
_PR_SET_CHILD_SUBREAPER = 36
_PROC = "/proc"

_lock = threading.Lock()
_live: dict[int, tuple[subprocess.Popen[bytes], str, int]] = {}
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); whether that holds."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                _subreaper = False
    return _subreaper


def new_token() -> str:
    """A fresh token for one child (its descendants inherit it in their environment)."""
    return uuid.uuid4().hex


def register(process: subprocess.Popen[bytes], token: str) -> int:
    """Remember a running child, so that :func:`terminate_all` can end it; returns its start time."""
    started = start_ticks(process.pid)
    with _lock:
        _live[process.pid] = (process, token, started)
        _sent.discard(process.pid)  # a new child that has the number of an old one
    return started


def unregister(process: subprocess.Popen[bytes]) -> None:
    """Forget a child that has been waited for."""
    with _lock:
        _live.pop(process.pid, None)


_sent: set[int] = set()
"""Children this process signalled itself (a timeout, a flood, its own exit): their end is ours."""


def sent_by_us(pid: int) -> bool:
    """Whether this process itself signalled the child ``pid`` (its end is then not "from outside")."""
    with _lock:
        return pid in _sent


def kill_process_group(process: subprocess.Popen[bytes], *, only_group: bool = False) -> None:
    """Kill the child and everything in its process group; ignore what is already gone."""
    if process.returncode is None:
        with _lock:
            _sent.add(process.pid)
    if sys.platform == "win32":
        if not only_group and process.poll() is None:
            process.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if not only_group and process.poll() is None:
        process.kill()


def _pids() -> Iterator[int]:
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return
    me = os.getpid()
    uid = os.getuid() if hasattr(os, "getuid") else -1
    for entry in entries:
        if entry.isdigit() and int(entry) != me:
            try:
                if os.stat(os.path.join(_PROC, entry)).st_uid == uid:
                    yield int(entry)
            except OSError:
                continue


def carriers(token: str) -> list[int]:
    """The processes (ours) whose environment holds ``token``: what a child left behind."""
    needle = f"{TOKEN_NAME}={token}".encode()
    found: list[int] = []
    for pid in _pids():
        try:
            with open(os.path.join(_PROC, str(pid), "environ"), "rb") as handle:
                if needle in handle.read(1024 * 1024):
                    found.append(pid)
        except OSError:
            continue
    return found


def _stat(pid: int | str) -> tuple[int, int, int] | None:
    """(parent pid, session id, start time in clock ticks) of a process, from /proc/PID/stat."""
    try:
        with open(os.path.join(_PROC, str(pid), "stat"), "rb") as handle:
            fields = handle.read(4096).rpartition(b")")[2].split()
        return int(fields[1]), int(fields[3]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def start_ticks(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot); 0 when unknown."""
    found = _stat(pid)
    return found[2] if found else 0


def _orphans(since: int) -> list[int]:
    """Processes re-parented to us (we are their subreaper), started since ``since``, in a session
    of their own: what a finished child left behind after ``setsid``. Our other children (in our
    session, or running for another run) are not among them."""
    me = os.getpid()
    ours = _stat(me)
    with _lock:
        live = set(_live)
    found: list[int] = []
    for pid in _pids():
        if pid in live:
            continue
        facts = _stat(pid)
        if facts is None or ours is None:
            continue
        parent, session, started = facts
        if parent == me and session != ours[1] and started >= since:
            found.append(pid)
    return found


def _reap(pids: list[int], deadline_s: float = 1.0) -> None:
    """Collect the exit of each killed pid that is our child (a zombie otherwise)."""
    waiting = set(pids)
    deadline = time.monotonic() + deadline_s
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                waiting.discard(pid)  # not our child: init reaps it
                continue
            except OSError:
                waiting.discard(pid)
                continue
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.01)


def kill_leftovers(token: str, since: int = 0) -> list[int]:
    """Kill what a finished child left behind: its token's carriers, and (when no other run is live)
    the processes re-parented to us that it started after ``since`` (its start, in clock ticks)."""
    if not os.path.isdir(_PROC):
        return []
    victims = carriers(token)
    with _lock:
        others_running = bool(_live)
    if not others_running and _subreaper and since:
        victims += [pid for pid in _orphans(since) if pid not in victims]
    for pid in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _reap(victims)
    return victims


def terminate_all() -> None:
    """End every child still running, and what each left behind (at exit and on a signal)."""
    with _lock:
        running = list(_live.values())
        _live.clear()
    for process, _token, _started in running:
        kill_process_group(process)
    for process, token, started in running:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            process.wait(timeout=2)
        kill_leftovers(token, started)


atexit.register(terminate_all)
