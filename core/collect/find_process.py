"""Finding the running server: ``--pid``, else by executable, by library, by port. Read-only.

By hand: ``pgrep -af /opt/bareun``, ``grep -l /opt/bareun/lib /proc/*/maps``, ``ss -ltnp 'sport = :5656'``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from fallback_doctor.core.collect.proc_maps import mapped_paths
from fallback_doctor.core.facts.files import read_regular_file
from fallback_doctor.core.facts.target import TargetFacts

PROC = "/proc"
MAX_READ = 4 * 1024 * 1024


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


def _under(path: str | None, root: str | None) -> bool:
    if not path or not root:
        return False
    root = os.path.normpath(root)
    if root in ("/", ""):
        return False
    path = os.path.normpath(path)
    return path == root or path.startswith(root.rstrip("/") + "/")


def config_port(config_path: str | None) -> int | None:
    """The port a configuration gives (``address.port``, ``port``, ``grpcPort``), None if none."""
    if not config_path:
        return None
    try:
        data = json.loads(read_regular_file(config_path, 4 << 20).decode("utf-8-sig"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    candidates: list[Any] = []
    address = data.get("address")
    if isinstance(address, dict):
        candidates.append(address.get("port"))
    candidates.extend(data.get(key) for key in ("port", "grpcPort", "servicePort"))
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536:
            return value
        if isinstance(value, str) and value.isdigit() and 0 < int(value) < 65536:
            return int(value)
    return None


def _pids(proc: str) -> list[int]:
    try:
        return sorted(int(entry) for entry in os.listdir(proc) if entry.isdigit())
    except OSError:
        return []


def _start_ticks(pid: int, proc: str) -> int:
    text = _read_text(os.path.join(proc, str(pid), "stat")) or ""
    fields = text.rpartition(")")[2].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return sys.maxsize


def _listening_pid(port: int) -> int | None:
    try:
        import psutil

        for connection in psutil.net_connections(kind="inet"):
            listening = connection.status == psutil.CONN_LISTEN and connection.laddr
            if listening and connection.laddr.port == port and connection.pid:
                return int(connection.pid)
    except Exception:  # noqa: BLE001 - not allowed or not supported: no answer by port
        pass
    return None


def find_server_process(target: TargetFacts, pid: int | None, *, proc: str = PROC) -> int | None:
    """The running server's pid: ``--pid``; else by executable; else by library; else by port.

    By executable: a process whose exe or command line is under ``target.root``. By library: a
    process that maps a file under ``target.lib_path``. By port: the process listening on the
    port the configuration gives. Several matches: the oldest (the service, not a helper).
    Read-only. By hand: ``pgrep -af /opt/bareun``, ``grep -l /opt/bareun/lib /proc/*/maps``,
    ``ss -ltnp 'sport = :5656'``.
    """
    if pid is not None:
        return pid if os.path.isdir(os.path.join(proc, str(pid))) else None
    me = os.getpid()
    by_exe: list[int] = []
    by_lib: list[int] = []
    for candidate in _pids(proc):
        if candidate == me:
            continue
        base = os.path.join(proc, str(candidate))
        if target.root:
            exe: str | None
            try:
                exe = os.readlink(os.path.join(base, "exe"))
            except OSError:
                exe = None
            raw = _read_text(os.path.join(base, "cmdline")) or ""
            args = [part for part in raw.split("\0") if part]
            if _under(exe, target.root) or any(_under(arg, target.root) for arg in args[:2]):
                by_exe.append(candidate)
                continue
        if target.lib_path:
            maps = _read_text(os.path.join(base, "maps"))
            if maps and any(_under(path, target.lib_path) for path in mapped_paths(maps)):
                by_lib.append(candidate)
    for found in (by_exe, by_lib):
        if found:
            return min(found, key=lambda item: (_start_ticks(item, proc), item))
    port = config_port(target.config_path)
    if port is not None:
        return _listening_pid(port)
    return None
