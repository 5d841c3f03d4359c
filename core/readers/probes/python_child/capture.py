"""The protocol stream, the phases, and the capture of all else the process writes (fds 1 and 2).

Also the child's manners: its lower priority, and the test-only misbehaviour."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from typing import IO, Dict, List, Optional, Set, Tuple, Union

from probe_shared import strip_ansi  # type: ignore[import-not-found]

_START = time.monotonic()
_PROTO: Optional[IO[str]] = None  # the protocol stream (a duplicate of the original stdout)
_CAPTURE: Optional[Tuple[str, int]] = None  # (path, fd) of the file that receives fds 1 and 2
_OWN_CAPTURE = False  # True when this process made the capture file (and removes it)
_OPEN_PHASES: List[Tuple[str, float]] = []
_PHASES: List[Dict[str, object]] = []
_IMPORTANT_TAGS = ("[E:onnxruntime", "[W:onnxruntime", "[F:onnxruntime", " when using [", "UserWarning")
_IMPORTANT_STARTS = ("EP Error", "Falling back to")


def emit(obj: Dict[str, object]) -> None:
    """Write one protocol line (JSON) and flush it."""
    obj.setdefault("t", round(time.monotonic() - _START, 6))
    obj.setdefault("wall", time.time())
    assert _PROTO is not None
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def phase_start(name: str) -> None:
    """Mark the start of a phase (also on stdout, so a crash says where)."""
    _OPEN_PHASES.append((name, time.monotonic() - _START))
    emit({"event": "phase", "name": name, "state": "start"})


def phase_end(ok: bool = True) -> None:
    """Mark the end of the innermost open phase."""
    name, start = _OPEN_PHASES.pop()
    end = time.monotonic() - _START
    _PHASES.append({"name": name, "start_s": round(start, 6), "end_s": round(end, 6), "ok": bool(ok)})
    emit({"event": "phase", "name": name, "state": "end", "ok": bool(ok)})


def setup_capture(path: Optional[str] = None) -> None:
    """Send fds 1 and 2 to a file (the parent's ``--capture PATH``, else a temporary one that is
    removed at the end); keep a private duplicate of stdout for the protocol."""
    global _PROTO, _CAPTURE, _OWN_CAPTURE
    proto_fd = os.dup(1)
    _PROTO = os.fdopen(proto_fd, "w", encoding="utf-8", errors="replace")
    if path:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    else:
        fd, path = tempfile.mkstemp(prefix="gfd-probe-", suffix=".log")
        _OWN_CAPTURE = True
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    _CAPTURE = (path, fd)


def capture_offset() -> int:
    """The current size of the capture file (a phase's log starts here)."""
    sys.stdout.flush()
    sys.stderr.flush()
    assert _CAPTURE is not None
    return os.fstat(_CAPTURE[1]).st_size


def capture_since(offset: int) -> str:
    """The text written to fds 1 and 2 since ``offset``."""
    sys.stdout.flush()
    sys.stderr.flush()
    assert _CAPTURE is not None
    with open(_CAPTURE[0], "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    return str(strip_ansi(data.decode("utf-8", errors="replace")))


def cleanup_capture() -> None:
    """Remove the temporary capture file (not the parent's: the parent reads and removes it)."""
    if _CAPTURE is not None and _OWN_CAPTURE:
        try:
            os.unlink(_CAPTURE[0])
        except OSError:
            pass


def important_lines(text: str) -> List[str]:
    """ONNX Runtime's warning and error lines (and the Python EP Error banner), in order."""
    keep: List[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        tagged = any(tag in line for tag in _IMPORTANT_TAGS) or line.startswith(_IMPORTANT_STARTS)
        python_error = "Error" in line and "onnxruntime" in line and "[V:" not in line and "[I:" not in line
        if tagged or python_error:
            keep.append(line)
    return keep


def mapped_libraries() -> Optional[Set[str]]:
    """Shared objects mapped into this process (Linux /proc/self/maps), by file name."""
    names: Set[str] = set()
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 6 and ".so" in parts[-1]:
                    names.add(os.path.basename(parts[-1]))
    except OSError:
        return None
    return names


def lower_priority(nice: Union[int, str, None]) -> None:
    """Lower this process's priority (it may run beside a production server)."""
    if nice and hasattr(os, "nice"):
        try:
            os.nice(int(nice))
        except OSError:
            pass


def test_misbehave(mode: Optional[str], when: str) -> None:
    """TEST ONLY: misbehave on purpose, when FALLBACK_DOCTOR_PROBE_TEST=1 is set as well."""
    if not mode or os.environ.get("FALLBACK_DOCTOR_PROBE_TEST") != "1":
        return
    assert _PROTO is not None
    if mode == "garbage" and when == "start":
        _PROTO.write("this is not JSON\n")
        _PROTO.flush()
        sys.exit(0)
    if mode == "flood" and when == "start":
        chunk = ("x" * 1023 + "\n") * 1024
        for _ in range(64):  # 64 MiB: far more than the parent keeps
            _PROTO.write(chunk)
        _PROTO.flush()
        sys.exit(0)
    if mode == "hang" and when == "gpu.session":
        child_pid = os.fork() if hasattr(os, "fork") else 0
        if child_pid == 0 and hasattr(os, "fork"):
            time.sleep(3600)  # a grandchild in the same process group: it must not survive either
            os._exit(0)
        time.sleep(3600)
    if mode == "crash" and when == "gpu.session":
        sys.stdout.write("about to crash on purpose (test mode)\n")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
