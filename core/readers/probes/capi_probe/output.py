"""The child's JSON lines on stdout (each flushed at once) and the stderr capture per phase.

ONNX Runtime logs from C++ to file descriptor 2, so a phase's log is captured by redirecting fd 2
to a file of its own.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

T0 = time.monotonic()
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_KEEP = 400
"""At most this many captured log lines per phase go into the reply."""


# --- output -----------------------------------------------------------------------------------


def now() -> float:
    """Seconds since this process started its work."""
    return round(time.monotonic() - T0, 6)


def emit(obj: dict[str, object]) -> None:
    """Write one JSON line and flush it, so it survives a crash of this process."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, sort_keys=True) + "\n")
    sys.stdout.flush()


def step(phase: str, text: str) -> None:
    """Announce a step about to run; the parent blames it if nothing follows."""
    emit({"event": "begin", "phase": phase, "step": text, "t": now()})


# --- stderr capture ---------------------------------------------------------------------------


class Capture:
    """Redirect file descriptor 2 to a file for one phase (ONNX Runtime logs from C++ to fd 2)."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.count = 0
        self.saved: int | None = None
        self.path: str | None = None
        self.phase = ""

    def start(self, phase: str) -> None:
        """Send fd 2 to ``NN-phase.log`` in the work folder (its name is in the begin line)."""
        self.stop()
        self.count += 1
        self.phase = phase
        self.path = os.path.join(self.work_dir, "%02d-%s.log" % (self.count, phase))
        sys.stderr.flush()
        handle = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.saved = os.dup(2)
        os.dup2(handle, 2)
        os.close(handle)
        emit({"event": "begin", "phase": phase, "step": "phase", "log": self.path, "t": now()})

    def offset(self) -> int:
        """How much has been captured so far in this phase (to read what one call adds)."""
        sys.stderr.flush()
        try:
            return os.path.getsize(self.path) if self.path and self.saved is not None else 0
        except OSError:
            return 0

    def errors_since(self, offset: int) -> list[str]:
        """ONNX Runtime's error lines written since ``offset`` (the reason behind a terse status)."""
        if not self.path or self.saved is None:
            return []
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                text = ANSI.sub("", handle.read().decode("utf-8", "replace"))
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if re.search(r"\[(E|F):onnxruntime", line)]

    def stop(self) -> list[str]:
        """Put fd 2 back; return the captured lines (and emit them)."""
        if self.saved is None or self.path is None:
            return []
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.saved = None
        try:
            with open(self.path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        text = ANSI.sub("", text)
        lines = [line.rstrip("\r") for line in text.splitlines() if line.strip()]
        kept = lines if len(lines) <= LOG_KEEP else lines[: LOG_KEEP // 2] + lines[-LOG_KEEP // 2 :]
        emit({"event": "log", "phase": self.phase, "lines": kept, "total": len(lines)})
        return lines
