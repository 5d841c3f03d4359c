"""Find literal keywords in a block of bytes at grep's speed, and count its lines.

The whole-file log scan (core/readers/logs/scan.py) looks for its keywords with the first engine
installed: hyperscan's literal matcher (it skips through text the way grep does), RE2's DFA
(``google-re2``; it reads every byte), else ``bytes.find`` per word. All give the same lines
(tests/core/logs/test_logs_scan_engines.py).

By hand: ``grep -c -i -F -f keywords.txt app.log``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any


class Finder:
    """Where any of several literals occurs in a block, case-insensitively, and whether it is a
    start-up word. Hyperscan's literal matcher where its wheel exists (``hyperscan``: it skips
    through text the way grep does), else RE2's DFA (``google-re2``: reads every byte, so
    blocks are searched in threads), else ``bytes.find`` per word; all three give the same
    positions (tests/core/logs/test_logs_scan_engines.py)."""

    def __init__(self, words: Sequence[bytes], startup: int, engine: str | None = None) -> None:
        self.words = tuple(words)
        self.startup = frozenset(words[:startup])
        self._starts = tuple(index < startup for index in range(len(self.words)))
        self._regex: Any = None
        self._database: Any = None
        self._scratch = threading.local()
        """Hyperscan's scratch space, one per thread (a scan in use cannot share it)."""
        self.engine = "find"
        for name in (engine,) if engine else ENGINES:
            if name == "hyperscan" and self._use_hyperscan():
                break
            if name == "re2" and self._use_re2():
                break

    def _use_hyperscan(self) -> bool:
        try:
            import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            return False
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(
            expressions=list(self.words),
            ids=list(range(len(self.words))),
            elements=len(self.words),
            flags=hyperscan.HS_FLAG_CASELESS,
            literal=True,
        )
        self._database, self.engine = database, "hyperscan"
        return True

    def _use_re2(self) -> bool:
        try:
            import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            return False
        self._regex = re2.compile(b"(?i)" + b"|".join(re2.escape(word) for word in self.words))
        self.engine = "re2"
        return True

    def _own_scratch(self) -> Any:
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]

            scratch = self._scratch.space = hyperscan.Scratch(self._database)
        return scratch

    @property
    def threaded(self) -> bool:
        """Whether blocks are searched in threads (RE2 lets go of the GIL while it searches;
        hyperscan is faster than the threads would be)."""
        return self.engine == "re2"

    def first(self, data: bytes) -> bool:
        """Whether any of the words occurs in ``data``."""
        if self.engine == "re2":
            return self._regex.search(data) is not None
        if self.engine == "hyperscan":
            import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]

            try:
                self._database.scan(data, match_event_handler=_stop, scratch=self._own_scratch())
            except hyperscan.ScanTerminated:
                return True
            return False
        lowered = data.lower()
        return any(word in lowered for word in self.words)

    def hits(self, block: bytes, lo: int = 0, hi: int | None = None) -> list[tuple[int, bool]]:
        """(position, is a start-up word) of each occurrence in ``block[lo:hi]``, in position order
        (RE2: leftmost, not overlapping; the others: every word's every place; the scan reads
        the lines they are in, which are the same)."""
        hi = len(block) if hi is None else hi
        if self.engine == "re2":
            return [
                (hit.start(), hit.group().lower() in self.startup)
                for hit in self._regex.finditer(block, lo, hi)
            ]
        found: list[tuple[int, bool]] = []
        if self.engine == "hyperscan":
            words, starts = self.words, self._starts

            def seen(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
                found.append((lo + end - len(words[index]), starts[index]))

            self._database.scan(
                memoryview(block)[lo:hi], match_event_handler=seen, scratch=self._own_scratch()
            )
            return sorted(found, key=_startup_first)
        lowered = block[lo:hi].lower()
        for word in self.words:
            at = lowered.find(word)
            while at >= 0:
                found.append((lo + at, word in self.startup))
                at = lowered.find(word, at + 1)
        return sorted(found, key=_startup_first)


ENGINES = ("hyperscan", "re2", "find")
"""The search engines in the order they are tried."""


def _stop(*_: object) -> bool:
    return True


def _startup_first(hit: tuple[int, bool]) -> tuple[int, bool]:
    return hit[0], not hit[1]


LARGE = 1024 * 1024
"""A stretch at least this long has its newlines counted by NumPy (vector compares, about three
times as fast as ``bytes.count``; NumPy comes with ONNX Runtime)."""
PIECE = 256 * 1024
"""Bytes compared at a time: the compare's result stays in the CPU's cache (a third faster
than comparing a whole block at once, measured on this project's machine)."""


def newlines_in(block: bytes, lo: int, hi: int) -> int:
    """How many newlines ``block[lo:hi]`` holds."""
    if hi - lo < LARGE:
        return block.count(b"\n", lo, hi)
    try:
        import numpy
    except ImportError:  # pragma: no cover - NumPy comes with onnxruntime
        return block.count(b"\n", lo, hi)
    data = numpy.frombuffer(block, numpy.uint8, hi - lo, lo)
    equal = numpy.empty(PIECE, dtype=bool)
    count = 0
    for at in range(0, len(data), PIECE):
        piece = data[at : at + PIECE]
        out = equal[: len(piece)]
        numpy.equal(piece, _NEWLINE, out=out)
        count += int(numpy.count_nonzero(out))
    return count


_NEWLINE = 10
