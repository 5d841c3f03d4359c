"""The worker processes of a server: a parent that forks workers (gunicorn, a process pool) maps
no ONNX Runtime itself, its workers do. Read-only, from /proc.

Every /proc file is read through core/platform/files.py (bounded, non-blocking). By hand:
``ps --ppid PID -o pid,cmd``, ``grep -l onnxruntime /proc/CHILD/maps``.
"""

from __future__ import annotations

import os
from collections import deque

from fallback_doctor.core.platform.files import read_regular_file
from fallback_doctor.core.readers.collect.proc_maps import parse_maps
from fallback_doctor.core.readers.collect.process import PROC

MAX_WORKERS = 64
"""Most descendants looked at (a server with more is read through the first ones)."""


def parent_of(pid: int, proc: str = PROC) -> int | None:
    """The parent pid from /proc/PID/stat (the field after the command's closing parenthesis)."""
    try:
        text = read_regular_file(os.path.join(proc, str(pid), "stat"), 4096).decode("utf-8", "replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def descendants(pid: int, proc: str = PROC, limit: int = MAX_WORKERS) -> list[int]:
    """The process's children, grandchildren …, breadth first, at most ``limit``."""
    children: dict[int, list[int]] = {}
    try:
        entries = [int(entry) for entry in os.listdir(proc) if entry.isdigit()]
    except OSError:
        return []
    for candidate in entries:
        parent = parent_of(candidate, proc)
        if parent is not None:
            children.setdefault(parent, []).append(candidate)
    found: list[int] = []
    queue = deque(sorted(children.get(pid, [])))
    while queue and len(found) < limit:
        child = queue.popleft()
        found.append(child)
        queue.extend(sorted(children.get(child, [])))
    return found


def maps_onnxruntime(pid: int, proc: str = PROC) -> bool:
    """Whether /proc/PID/maps names an ONNX Runtime library (False when it cannot be read)."""
    try:
        text = read_regular_file(os.path.join(proc, str(pid), "maps"), 64 * 1024 * 1024).decode(
            "utf-8", "replace"
        )
    except OSError:
        return False
    return any(lib.family.startswith("ort_") for lib in parse_maps(text))


def onnxruntime_workers(pid: int, proc: str = PROC) -> list[int]:
    """The descendants of ``pid`` that have ONNX Runtime mapped."""
    return [child for child in descendants(pid, proc) if maps_onnxruntime(child, proc)]
