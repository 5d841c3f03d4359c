"""Scan a whole log for its most recent start-up, at the speed of ``grep``, in bounded memory.

A server that has run for weeks has its start-up (and the provider failure right after it) at
the head of a 1 GiB log; reading only the end would miss it. The scan reads the whole file (a
``.gz`` inflated, up to its cap) in large blocks and looks for the signatures' literal keywords
in each block at once (core/readers/logs/search.py: hyperscan's literal matcher, else RE2's DFA, else
``bytes.find`` per keyword). Only the lines where a keyword occurs are matched fully, later, by
the diagnosis. What it keeps, whatever the file's size:

- the most recent start-up line and up to ``HEAD_BYTES`` after it (the start-up's own report:
  versions, provider lists, the first failure); when the file shows no start-up, its first
  ``HEAD_BYTES`` (the run goes on from an older file);
- the last ``KEEP_LINES`` keyword lines after that part;
- the last ``TAIL_BYTES`` of the file.

Line numbers are exact (newlines are counted on the way). UTF-16 files are not scanned (their
bytes do not hold the keywords as they are); they are read from the end as before.

By hand: ``grep -n -i -E 'use config file|systemd\\[1\\]: start|failed to load' app.log | tail``.
"""

from __future__ import annotations

import errno
import gzip
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Any, BinaryIO

from fallback_doctor.core.readers.logs.lines import LogLine, LogReadError, LogText
from fallback_doctor.core.readers.logs.reader import (
    INFLATED_CAP,
    MAX_LINES,
    CappedStream,
    build_lines,
    encoding_of,
    not_a_log,
    open_regular,
)
from fallback_doctor.core.readers.logs.search import Finder, newlines_in
from fallback_doctor.core.readers.logs.signatures import SignatureBase, load_signatures

BLOCK = 16 * 1024 * 1024
"""Bytes read and searched at a time."""

HEAD_BYTES = 2 * 1024 * 1024
TAIL_BYTES = 2 * 1024 * 1024
KEEP_LINES = 2000
LINE_CAP = 4096
"""A kept keyword line is cut to this many bytes (its head and tail)."""

SCAN_KINDS = frozenset(
    {
        "direct",
        "lookup",
        "fallback",
        "missing_library",
        "library_version",
        "requirement",
        "startup",
        "win_loader",
    }
)
"""Signature kinds whose keywords the scan looks for (facts come from the head and the tail)."""


@cache
def scan_keywords(base: SignatureBase | None = None) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """(start-up keywords, other keywords), lower case, three bytes or longer."""
    base = base or load_signatures()
    startup = {w for s in base.signatures if s.kind == "startup" for w in s.keywords if len(w) >= 3}
    others = {w for s in base.signatures if s.kind in SCAN_KINDS for w in s.keywords if len(w) >= 3}
    return tuple(sorted(w.encode() for w in startup)), tuple(sorted(w.encode() for w in others - startup))


def _parts(block: bytes, first: int, stop: int, count: int) -> list[tuple[int, int]]:
    """``block[first:stop]`` cut into about ``count`` ranges at line ends (a keyword never spans two)."""
    ranges: list[tuple[int, int]] = []
    lo = first
    step = max(1, (stop - first) // count)
    while lo < stop:
        cut = block.find(b"\n", min(stop, lo + step) - 1, stop) + 1 if len(ranges) < count - 1 else 0
        hi = cut if cut > lo else stop
        ranges.append((lo, hi))
        lo = hi
    return ranges


@cache
def _startup_finder() -> Finder:
    startup, _ = scan_keywords()
    return Finder(startup, len(startup))


def startup_words_in(data: bytes) -> bool:
    """Whether a start-up keyword occurs in ``data`` (case-insensitively; one search)."""
    return _startup_finder().first(data)


@cache
def _finder(engine: str | None = None) -> Finder:
    """One search for all scan keywords (the start-up words first), by the first engine
    installed of ``ENGINES`` (or the one named)."""
    startup, others = scan_keywords()
    return Finder((*startup, *others), len(startup), engine)


@dataclass
class ScanState:
    """What the scan keeps while it reads (bounded whatever the file's size)."""

    name: str
    head_bytes: int = HEAD_BYTES
    tail_bytes: int = TAIL_BYTES
    lines_before: int = 0
    offset: int = 0
    startup: tuple[int, int] | None = None
    """(line number, byte offset) of the most recent start-up."""
    head: bytearray = field(default_factory=bytearray)
    head_full: bool = False
    head_start: tuple[int, int] = (1, 0)
    kept: deque[tuple[int, int, bytes]] = field(default_factory=lambda: deque(maxlen=KEEP_LINES))
    tail: deque[bytes | memoryview] = field(default_factory=deque)
    tail_size: int = 0
    keyword_lines: int = 0
    engine: str | None = None
    """The search engine to use (None: the fastest installed)."""


def _cut(line: bytes) -> bytes:
    if len(line) <= LINE_CAP:
        return line
    half = LINE_CAP // 2
    return line[:half] + b" ... " + line[-half:]


def _is_startup_line(raw: bytes) -> bool:
    from fallback_doctor.core.readers.logs.excerpt import is_startup
    from fallback_doctor.core.readers.logs.lines import clean_text, decode_line

    text = clean_text(decode_line(_cut(raw))[0])
    return is_startup(LogLine("", text))


def _feed(
    state: ScanState,
    block: bytes,
    marks: list[tuple[int, bool]] | None = None,
    stop: int | None = None,
    first: int = 0,
) -> None:
    """Take in the whole lines of ``block[first:stop]`` (ending in a newline or the file's end),
    searched already (``marks``, positions in ``block``) or searched here."""
    stop = len(block) if stop is None else stop
    marks = _finder(state.engine).hits(block, first, stop) if marks is None else marks
    view = memoryview(block)
    base = state.offset - first
    """The file offset of ``block[0]``."""
    counted_to = first
    newlines = 0
    index = 0
    while index < len(marks):
        at = marks[index][0]
        start = block.rfind(b"\n", first, at) + 1 or first
        end = block.find(b"\n", at, stop)
        end = stop if end < 0 else end
        # Every word found in this line: a start-up word, another one, or both.
        startup_word = other_word = False
        while index < len(marks) and marks[index][0] < end:
            startup_word = startup_word or marks[index][1]
            other_word = other_word or not marks[index][1]
            index += 1
        newlines += newlines_in(block, counted_to, start)
        counted_to = start
        raw = bytes(view[start:end])
        line_no = state.lines_before + newlines + 1
        if startup_word and _is_startup_line(raw):
            state.startup = (line_no, base + start)
            state.head = bytearray()
            state.head_full = False
            state.head_start = state.startup
            state.kept.clear()
            _add_head(state, view[start:stop])
        elif state.head_full and other_word:
            state.kept.append((line_no, base + start, _cut(raw)))
            state.keyword_lines += 1
    if not state.head_full and (state.startup is None or state.head_start[1] < state.offset):
        _add_head(state, view[first:stop])
    _add_tail(state, view[first:stop])
    state.lines_before += newlines + newlines_in(block, counted_to, stop)
    state.offset += stop - first


def _add_head(state: ScanState, data: bytes | memoryview) -> None:
    room = state.head_bytes - len(state.head)
    if room <= 0:
        state.head_full = True
        return
    state.head += data[:room]
    state.head_full = len(state.head) >= state.head_bytes


def _add_tail(state: ScanState, block: bytes | memoryview) -> None:
    state.tail.append(block)
    state.tail_size += len(block)
    while state.tail and state.tail_size - len(state.tail[0]) >= state.tail_bytes:
        state.tail_size -= len(state.tail.popleft())


SEARCH_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Threads that search a block at once (RE2 searches without the GIL)."""


class _Pipeline:
    """Blocks searched in threads while the next one is read; taken in strictly in order."""

    def __init__(self, state: ScanState) -> None:
        self.state = state
        self.finder = _finder(state.engine)
        self.pool = ThreadPoolExecutor(SEARCH_THREADS) if self.finder.threaded else None
        self.pending: deque[tuple[bytes, int, int, list[Future[list[tuple[int, bool]]]]]] = deque()

    def add(self, block: bytes, stop: int, first: int = 0) -> None:
        """Start searching ``block[first:stop]``; take in the one before it meanwhile."""
        if self.pool is None:
            _feed(self.state, block, None, stop, first)
            return
        parts = _parts(block, first, stop, SEARCH_THREADS)
        futures = [self.pool.submit(self.finder.hits, block, lo, hi) for lo, hi in parts]
        self.pending.append((block, stop, first, futures))
        while len(self.pending) > 1:
            self._take()

    def _take(self) -> None:
        block, stop, first, futures = self.pending.popleft()
        _feed(self.state, block, [mark for future in futures for mark in future.result()], stop, first)

    def flush(self) -> None:
        """Take in every block searched so far (before the state's offset is changed)."""
        while self.pending:
            self._take()

    def close(self) -> None:
        self.flush()
        if self.pool is not None:
            self.pool.shutdown()


def scan_stream(
    stream: Any, name: str, keep: int = HEAD_BYTES, descriptor: int | None = None, engine: str | None = None
) -> ScanState:
    """Scan a byte stream through (whole lines per block; a line longer than a block is cut).

    ``keep``: bytes kept after the start-up and at the end (each). ``descriptor``: the regular
    file being read, whose holes (a sparse file's unwritten ranges, NUL bytes with no line in
    them) are skipped without reading (``SEEK_DATA``). Each block is searched in threads while
    the next is read and the one before it is taken in; a block is used where it was read
    (the line cut at its end is joined to the next block's first line on its own).
    """
    state = ScanState(name, keep, keep, engine=engine)
    pipeline = _Pipeline(state)
    carry = b""
    offset = 0
    """Where ``carry`` starts in the file."""
    try:
        while True:
            if descriptor is not None:
                position = offset + len(carry)
                data_at = _next_data(descriptor, position)
                if data_at > position:
                    pipeline.flush()
                    if carry:
                        _feed(state, carry)  # the part of the line before the hole
                        carry = b""
                    state.offset = offset = data_at
                    stream.seek(data_at)
            chunk = stream.read(BLOCK)
            if not chunk:
                break
            first = 0
            if carry:
                ends = chunk.find(b"\n") + 1
                if ends:
                    line = carry + chunk[:ends]
                    pipeline.add(line, len(line))
                    offset += len(line)
                    carry, first = b"", ends
            cut = chunk.rfind(b"\n") + 1
            if cut <= first:
                carry += chunk[first:]
                if len(carry) > 2 * LINE_CAP:
                    # A line longer than a block (binary junk): only its end is kept.
                    pipeline.flush()
                    state.offset += len(carry) - LINE_CAP
                    offset += len(carry) - LINE_CAP
                    carry = carry[-LINE_CAP:]
                continue
            pipeline.add(chunk, cut, first)
            offset += cut - first
            carry = chunk[cut:]
    finally:
        pipeline.close()
    if carry:
        _feed(state, carry)
    return state


def _next_data(descriptor: int, position: int) -> int:
    """The next offset at or after ``position`` that holds data (``position`` when unknown)."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return position
    try:
        return os.lseek(descriptor, position, seek_data)
    except OSError as error:
        if error.errno == errno.ENXIO:  # only a hole is left before the end
            return max(position, os.fstat(descriptor).st_size)
        return position  # the file system cannot say: read on


def to_text(state: ScanState, size: int, note: str = "") -> LogText:
    """The kept parts as one LogText: start-up and what follows, keyword lines, the end."""
    head_line, head_offset = state.head_start
    head = bytes(state.head)
    tail = b"".join(state.tail)
    if len(tail) > state.tail_bytes:
        start = tail.find(b"\n", len(tail) - state.tail_bytes) + 1
        tail = tail[start:] if start else tail[-state.tail_bytes :]
    tail_offset = state.offset - len(tail)
    name = state.name
    half = MAX_LINES // 2
    if tail_offset <= head_offset + len(head):
        # The parts touch: one stretch of the file from the start-up (or its start) to the end.
        joined = head + tail[head_offset + len(head) - tail_offset :]
        lines = build_lines(joined, head_offset, head_line, MAX_LINES, first=True)
    else:
        cut = head.rfind(b"\n") + 1
        lines = build_lines(head[:cut], head_offset, head_line, half, first=True)
        head_end = head_offset + cut
        lines += [
            line
            for line_no, offset, raw in state.kept
            if head_end <= offset < tail_offset
            for line in build_lines(raw, offset, line_no)
        ]
        tail_first = state.lines_before - tail.count(b"\n") + 1
        lines += build_lines(tail, tail_offset, tail_first, half)
    last = len(lines) - 1
    made = tuple(LogLine(name, text, line, offset, last - i) for i, (text, line, offset) in enumerate(lines))
    read_note = f"whole file scanned ({state.offset:,} bytes; {state.keyword_lines:,} keyword lines seen)"
    notes = "; ".join(part for part in (read_note, note) if part)
    return LogText(name, made, "utf-8", size, 0, "scanned", notes)


def scan_file(
    path: str | os.PathLike[str],
    name: str | None = None,
    inflated_cap: int = INFLATED_CAP,
    keep: int = HEAD_BYTES,
) -> LogText:
    """Scan a whole log file (``.gz`` inflated up to ``inflated_cap``) and keep what matters.

    Raises ``LogReadError`` for what cannot be read or is not a log; a UTF-16 file raises it
    too (``not scannable``: read it from its end instead).
    """
    name = name or str(path)
    with open_regular(path, name) as handle:
        if str(path).endswith(".gz"):
            return _scan_gzip(handle, name, inflated_cap, keep)
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(4096)
        _check_scannable(name, head, size)
        handle.seek(0)
        return to_text(scan_stream(handle, name, keep, handle.fileno()), size)


def _check_scannable(name: str, head: bytes, size: int) -> None:
    why = not_a_log(head, size)
    if why:
        raise LogReadError(f"{name}: {why}")
    if encoding_of(head)[0]:
        raise LogReadError(f"{name}: not scannable (UTF-16): read from its end")


def _scan_gzip(handle: BinaryIO, name: str, inflated_cap: int, keep: int) -> LogText:
    with gzip.GzipFile(fileobj=handle, mode="rb") as compressed:
        capped = CappedStream(compressed, name, inflated_cap)  # type: ignore[arg-type]
        head = capped.read(4096)
        _check_scannable(name, head, len(head))
        state = scan_stream(_Prefixed(head, capped), name, keep)
        note = f"stopped after {inflated_cap:,} inflated bytes (the cap)" if capped.capped else ""
        return to_text(state, state.offset, note)


class _Prefixed:
    def __init__(self, head: bytes, stream: CappedStream) -> None:
        self._head = head
        self._stream = stream

    def read(self, size: int = -1, /) -> bytes:
        if self._head:
            head, self._head = self._head, b""
            return head + self._stream.read(max(0, size - len(head)))
        return self._stream.read(size)
