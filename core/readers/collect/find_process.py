"""Finding the running server: ``--pid``, else by executable, by library, by port. Read-only.

By what the process is, never by a path in its arguments. By hand: ``ls -l /proc/*/exe``,
``grep -l /opt/bareun/lib/libonnxruntime /proc/*/maps``, ``ss -ltnp 'sport = :5656'``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.platform.files import read_regular_file
from fallback_doctor.core.readers.collect.proc_maps import classify_mapped, mapped_paths

PROC = "/proc"
MAX_READ = 4 * 1024 * 1024


def _read_text(path: str) -> str | None:
    try:
        return read_regular_file(path, MAX_READ).decode("utf-8", "replace")
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


def _is_onnxruntime(path: str) -> bool:
    """Whether a mapped file is an ONNX Runtime library (its core, a provider, a binding)."""
    mapped = classify_mapped(path)
    return mapped is not None and mapped.family.startswith("ort_")


def find_server_process(target: TargetFacts, pid: int | None, *, proc: str = PROC) -> int | None:
    """The running server's pid: ``--pid``; else by executable; else by library; else by port.

    The server is found by what it is, never by a name in its arguments (``less
    /opt/bareun/config/bareun.json`` is not the server). By executable: a process whose
    executable (/proc/PID/exe) lies under ``target.root``. By library: a process that maps an
    ONNX Runtime library under ``target.lib_path``. By port: the process listening on the port
    the configuration gives. Several matches: the oldest (the service, not a helper).
    Read-only. By hand: ``ls -l /proc/*/exe | grep /opt/bareun``,
    ``grep -l /opt/bareun/lib/libonnxruntime /proc/*/maps``, ``ss -ltnp 'sport = :5656'``.
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
            try:
                exe: str | None = os.readlink(os.path.join(base, "exe"))
            except OSError:
                exe = None
            if _under(exe, target.root):
                by_exe.append(candidate)
                continue
        if target.lib_path:
            maps = _read_text(os.path.join(base, "maps"))
            paths = mapped_paths(maps) if maps else ()
            if any(_under(path, target.lib_path) and _is_onnxruntime(path) for path in paths):
                by_lib.append(candidate)
    for found in (by_exe, by_lib):
        if found:
            return min(found, key=lambda item: (_start_ticks(item, proc), item))
    port = config_port(target.config_path)
    if port is not None:
        return _listening_pid(port)
    return None
