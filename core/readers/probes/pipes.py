"""Reading a child's output while it runs, capped as it is read: a flood cannot grow our memory.

Each stream is read on a thread into a :class:`Tail` that keeps the last ``OUTPUT_LIMIT`` bytes
(and counts all of them); complete standard-output lines can be handed to a listener as they
arrive. By hand: ``python probe.py | tail -c 4M``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import IO

OUTPUT_LIMIT = 4 * 1024 * 1024
"""Keep at most this many bytes of each stream: a child that floods its output cannot exhaust us."""

LINE_LIMIT = 256 * 1024
"""A line longer than this is not handed to ``on_line`` (it is still kept in the output)."""

READ_CHUNK = 64 * 1024


class Tail:
    """The last ``OUTPUT_LIMIT`` bytes of a stream, and how many bytes it had in all."""

    def __init__(self, max_total: int | None = None) -> None:
        self.data = bytearray()
        self.total = 0
        self.max_total = max_total
        self.over = threading.Event()
        """Set once more than ``max_total`` bytes came (the child is then stopped)."""

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.max_total is not None and self.total > self.max_total:
            self.over.set()
        self.data += chunk
        if len(self.data) > 2 * OUTPUT_LIMIT:
            del self.data[: len(self.data) - OUTPUT_LIMIT]

    def text(self) -> str:
        return bytes(self.data[-OUTPUT_LIMIT:]).decode("utf-8", errors="replace")


def pump(stream: IO[bytes], tail: Tail, on_line: Callable[[str], None] | None) -> None:
    """Read ``stream`` to its end into ``tail``, a chunk at a time; hand each complete line to ``on_line``."""
    pending = bytearray()
    overlong = False
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            chunk = read(READ_CHUNK)
            if not chunk:
                break
            tail.add(chunk)
            if on_line is not None:
                overlong = _lines(pending, chunk, overlong, on_line)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _lines(pending: bytearray, chunk: bytes, overlong: bool, on_line: Callable[[str], None]) -> bool:
    """Hand the complete lines of ``pending + chunk`` to ``on_line``; keep the rest in ``pending``."""
    pieces = chunk.split(b"\n")
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        if not overlong:
            pending += piece
            if len(pending) > LINE_LIMIT:
                overlong = True
                pending.clear()
        if last:
            break
        if not overlong:
            line = bytes(pending).rstrip(b"\r").decode("utf-8", errors="replace")
            try:
                on_line(line)
            except Exception:  # noqa: BLE001 - a listener must not stop the reading
                pass
        pending.clear()
        overlong = False
    return overlong


def feed(stream: IO[bytes], data: bytes) -> None:
    """Write ``data`` to the child's stdin and close it (a child that does not read it is fine)."""
    try:
        stream.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass
