"""Read the end of a log of any size, in any of the forms a support technician is handed.

The cost of reading is bounded by a byte budget (default: the last 8 MiB), not by the size of
the file: a seekable file is read from ``size - budget`` to its end, so a 20 GB log costs what
an 8 MiB one does. A stream (standard input, a ``.gz`` rotation) has to be read through, but
only the last ``budget`` bytes are kept in memory, and a ``.gz`` stops at ``INFLATED_CAP``
inflated bytes (a gzip bomb costs what that many bytes of log do). A window keeps at most
``MAX_LINES`` lines (its last ones), so memory is bounded whatever the line lengths.
(core/readers/logs/scan.py scans a whole file for its most recent start-up.)

Only regular files are opened, without blocking (``O_NONBLOCK``, then ``fstat`` on what was
opened): a FIFO, a socket, a device or a directory is refused with the file's name and why,
never read (a FIFO would block for ever). An empty file or binary data is not a log and says so.

Line numbers. Every line keeps its file and its 1-based line number when that is cheap to know
exactly: always for files read whole and for streams (their skipped part is read anyway, and
its newlines are counted on the way), and for a seekable file when the skipped part is at most
``EXACT_LINE_LIMIT`` bytes (its newlines are counted with a sequential read, about 64 MiB by
default). Past that, counting would cost the I/O that tail reading saves, so the line number is
``None`` and the line says instead how many lines before the end it is and at which byte offset
it starts (``LogLine.where()`` words it).

Forms handled (decoding in core/readers/logs/lines.py): plain files; CRLF; ANSI colour codes; UTF-8,
UTF-16, CP949 / EUC-KR; ``docker logs`` output (raw 8-byte stream headers removed, the json-file
driver's ``{"log": ...}`` lines unwrapped); ``journalctl`` text and ``-o json``; ``.gz``
rotations; standard input.

By hand: ``tail -c 8388608 app.log | iconv -f cp949 -t utf-8``.
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import sys
import zlib
from collections import deque
from itertools import accumulate
from typing import BinaryIO, Protocol

from fallback_doctor.core.readers.logs.lines import (
    LogLine,
    LogReadError,
    LogText,
    bom_of,
    clean_text,
    decode_line,
    lines_from_strings,
    lines_from_text,
    sniff_utf16,
    unwrap,
)
from fallback_doctor.core.readers.logs.opening import (
    INFLATED_CAP,
    CappedStream,
    is_docker_raw,
    not_a_log,
    open_regular,
    reason,
)

__all__ = [
    "DEFAULT_BUDGET",
    "INFLATED_CAP",
    "CappedStream",
    "LogLine",
    "LogReadError",
    "LogText",
    "build_lines",
    "clean_text",
    "decode_line",
    "encoding_of",
    "lines_from_strings",
    "lines_from_text",
    "not_a_log",
    "open_regular",
    "read_stream",
    "read_tail",
]

DEFAULT_BUDGET = 8 * 1024 * 1024
"""Bytes read from the end of each log (and in total over its rotations)."""

EXACT_LINE_LIMIT = 64 * 1024 * 1024
"""Up to this many skipped bytes, newlines are counted so line numbers are exact."""

MAX_LINES = 200_000
"""Lines kept per window (the last ones): short lines must not cost memory per line."""

_CHUNK = 1024 * 1024

STDIN_NAME = "<stdin>"
_DOCKER_HEADER = re.compile(rb"[\x00-\x02]\x00\x00\x00[\x00-\xff]{4}")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _count_newlines(handle: BinaryIO, limit: int, utf16: str | None) -> int:
    """Newlines in the first ``limit`` bytes of a file (sequential read, bounded chunks)."""
    handle.seek(0)
    remaining = limit
    count = 0
    decoder = codecs.getincrementaldecoder(utf16)(errors="replace") if utf16 else None
    while remaining > 0:
        chunk = handle.read(min(_CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
        count += decoder.decode(chunk).count("\n") if decoder else chunk.count(b"\n")
    return count


def _tail_of_stream(stream: _Readable, budget: int, utf16: str | None) -> tuple[bytes, int, int, int]:
    """Read a stream through, keeping its last ``budget`` bytes.

    Returns (kept bytes, bytes skipped, total bytes, newlines in the skipped part).
    """
    kept: deque[bytes] = deque()
    kept_size = 0
    total = 0
    skipped_newlines = 0
    decoder = codecs.getincrementaldecoder(utf16)(errors="replace") if utf16 else None
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        kept.append(chunk)
        kept_size += len(chunk)
        while kept and kept_size - len(kept[0]) >= budget:
            dropped = kept.popleft()
            kept_size -= len(dropped)
            skipped_newlines += decoder.decode(dropped).count("\n") if decoder else dropped.count(b"\n")
    data = b"".join(kept)
    if len(data) > budget:
        cut = len(data) - budget
        if utf16 and cut % 2:
            cut -= 1
        dropped = data[:cut]
        skipped_newlines += decoder.decode(dropped).count("\n") if decoder else dropped.count(b"\n")
        data = data[cut:]
    return data, total - len(data), total, skipped_newlines


def _split_window(
    data: bytes,
    skipped: int,
    utf16: str | None,
    strip_bom: bool,
) -> tuple[list[tuple[bytes | str, int | None]], int]:
    """Split a window into raw lines with their byte offsets; drop a cut first line.

    Returns the lines and how many lines before them were not kept (past ``MAX_LINES``).

    Byte encodings keep bytes per line (decoded line by line later); UTF-16 is decoded whole.
    """
    if utf16:
        text = data.decode(utf16, errors="replace")
        if strip_bom and text.startswith("\ufeff"):
            text = text[1:]
        pieces = text.split("\n")
        if skipped:
            pieces = pieces[1:]
        if pieces and pieces[-1] == "":
            pieces.pop()
        dropped = max(0, len(pieces) - MAX_LINES)
        return [(piece, None) for piece in pieces[dropped:]], dropped
    position = 0
    if strip_bom and data.startswith(codecs.BOM_UTF8):
        position = len(codecs.BOM_UTF8)
    if skipped:
        first = data.find(b"\n")
        position = len(data) if first < 0 else first + 1
    kept_from = _start_of_last_lines(data, MAX_LINES)
    if kept_from > position:
        dropped = data.count(b"\n", position, kept_from)
        position = kept_from
    else:
        dropped = 0
    result: list[tuple[bytes | str, int | None]] = []
    length = len(data)
    while position < length:
        end = data.find(b"\n", position)
        if end < 0:
            end = length
        result.append((data[position:end], skipped + position))
        position = end + 1
    return result, dropped


def build_lines(
    data: bytes, offset: int, first_line: int, most: int = MAX_LINES, *, first: bool = False
) -> list[tuple[str, int, int]]:
    """Decode whole lines of a byte encoding that start at ``offset`` (line ``first_line``).

    Returns (text, line number, byte offset) per line, the last ``most`` lines (the first ones
    with ``first``); the caller makes the ``LogLine``s.
    """
    start = 0
    if first:
        end = 0
        for _ in range(most):
            end = data.find(b"\n", end) + 1
            if end == 0:
                end = len(data)
                break
        data = data[:end]
    else:
        start = _start_of_last_lines(data, most)
    if start:
        first_line += data.count(b"\n", 0, start)
    pieces = data[start:].split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    result: list[tuple[str, int, int]] = []
    ends = list(accumulate(map(len, pieces), initial=offset + start))
    """``ends[i] + i``: where line ``i`` starts (each line before it and its newline)."""
    for index in _byte_lines_worth_decoding(pieces):
        text, form = unwrap(clean_text(decode_line(pieces[index])[0]))
        if form != "plain":
            text = clean_text(text)
        result.append((text, first_line + index, ends[index] + index))
    return result


def _start_of_last_lines(data: bytes, count: int) -> int:
    """Where the last ``count`` lines of ``data`` start (0 when it has no more than that)."""
    if data.count(b"\n") <= count:
        return 0
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    for _ in range(count):
        end = data.rfind(b"\n", 0, end)
    return end + 1


DENSE_LINES = 20_000
"""A window with more lines keeps only those with a signature keyword, and its last lines."""

LAST_LINES = 2_000


def _lines_worth_decoding(pieces: list[tuple[bytes | str, int | None]]) -> list[int]:
    """Every line of a small window; of a large one, the keyword lines and the last ones."""
    if len(pieces) <= DENSE_LINES or not isinstance(pieces[0][0], bytes):
        return list(range(len(pieces)))
    return _byte_lines_worth_decoding([raw for raw, _ in pieces if isinstance(raw, bytes)])


def _byte_lines_worth_decoding(pieces: list[bytes]) -> list[int]:
    """Every line of a small window; of a large one, the keyword lines and the last ones.

    A line without any signature keyword matches no signature: decoding it would only cost
    time and memory (8 MiB of ``x``s is four million lines).
    """
    count = len(pieces)
    if count <= DENSE_LINES:
        return list(range(count))
    from fallback_doctor.core.readers.logs.signatures import keyword_lines

    found = keyword_lines(pieces)
    if found is None:
        return list(range(count))
    return sorted(found | set(range(max(0, count - LAST_LINES), count)))


def _build(
    source: str,
    data: bytes,
    skipped: int,
    total: int,
    first_line: int | None,
    utf16: str | None,
    strip_bom: bool,
    head: bytes,
) -> LogText:
    raw_header = is_docker_raw(head)
    if raw_header and not utf16:
        data = _DOCKER_HEADER.sub(b"", data)
    pieces, dropped = _split_window(data, skipped, utf16, strip_bom)
    encodings: set[str] = set()
    forms: set[str] = set()
    lines: list[LogLine] = []
    count = len(pieces)
    if first_line is not None and skipped:
        first_line += 1  # the cut first line belongs to the skipped part
    if first_line is not None:
        first_line += dropped
    for index in _lines_worth_decoding(pieces):
        raw, offset = pieces[index]
        if isinstance(raw, bytes):
            text, encoding = decode_line(raw)
            if not raw.isascii():
                encodings.add(encoding)
        else:
            text = raw
        text, form = unwrap(clean_text(text))
        if form != "plain":
            text = clean_text(text)
        forms.add(form)
        lines.append(
            LogLine(
                source=source,
                text=text,
                line=None if first_line is None else first_line + index,
                offset=offset,
                from_end=count - 1 - index,
            )
        )
    if utf16:
        encoding_name = utf16 if not utf16.endswith("-sig") else "utf-8"
    elif not encodings:
        encoding_name = "utf-8"
    elif len(encodings) == 1:
        encoding_name = next(iter(encodings))
    else:
        encoding_name = "mixed (" + ", ".join(sorted(encodings)) + ")"
    forms.discard("plain")
    if raw_header:
        form_name = "docker-raw"
    elif len(forms) == 1:
        form_name = next(iter(forms))
    elif forms:
        form_name = "mixed"
    else:
        form_name = "plain"
    return LogText(
        source=source,
        lines=tuple(lines),
        encoding=encoding_name,
        size=total,
        skipped=skipped,
        form=form_name,
    )


def encoding_of(head: bytes) -> tuple[str | None, bool]:
    """(utf-16 codec or None, whether a BOM is there to strip)."""
    bom = bom_of(head)
    if bom in ("utf-16-le", "utf-16-be"):
        return bom, True
    if bom == "utf-8-sig":
        return None, True
    return sniff_utf16(head), False


def read_stream(stream: BinaryIO, source: str = STDIN_NAME, budget: int = DEFAULT_BUDGET) -> LogText:
    """Read a byte stream through, keeping and decoding its last ``budget`` bytes.

    Line numbers are exact: the newlines of the skipped part are counted on the way.
    """
    head = stream.read(4096)
    utf16, has_bom = encoding_of(head)
    rest = _Prefixed(head, stream)
    data, skipped, total, newlines = _tail_of_stream(rest, budget, utf16)
    if utf16 and skipped and skipped % 2:
        data = data[1:]
        skipped += 1
    return _build(source, data, skipped, total, newlines + 1, utf16, has_bom and not skipped, head)


class _Prefixed:
    """A stream with some already-read bytes put back in front."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = head
        self._stream = stream

    def read(self, size: int = -1, /) -> bytes:
        if self._head:
            head, self._head = self._head, b""
            return head
        return self._stream.read(size)


def read_tail(
    path: str | os.PathLike[str],
    budget: int = DEFAULT_BUDGET,
    *,
    exact_line_limit: int = EXACT_LINE_LIMIT,
    display_name: str | None = None,
    inflated_cap: int = INFLATED_CAP,
) -> LogText:
    """Read the last ``budget`` bytes of a log file (``.gz`` decompressed), or ``-`` for stdin.

    Raises ``LogReadError`` naming the file and the reason when it cannot be read, is not a
    regular file, or is not a log.
    """
    name = display_name or str(path)
    if str(path) == "-":
        return read_stream(sys.stdin.buffer, STDIN_NAME, budget)
    with open_regular(path, name) as handle:
        try:
            if str(path).endswith(".gz"):
                with gzip.GzipFile(fileobj=handle, mode="rb") as compressed:
                    capped = CappedStream(compressed, name, inflated_cap)  # type: ignore[arg-type]
                    text = read_stream(capped, name, budget)  # type: ignore[arg-type]
                    if capped.capped:
                        text = _with_note(text, f"stopped after {inflated_cap:,} inflated bytes")
                    return text
            return _read_seekable(handle, name, budget, exact_line_limit)
        except LogReadError:
            raise
        except (OSError, EOFError, zlib.error) as error:
            raise LogReadError(f"{name}: cannot be read: {reason(error)}") from error


def _with_note(text: LogText, note: str) -> LogText:
    return LogText(text.source, text.lines, text.encoding, text.size, text.skipped, text.form, note)


def _read_seekable(handle: BinaryIO, name: str, budget: int, exact_line_limit: int) -> LogText:
    size = handle.seek(0, os.SEEK_END)
    handle.seek(0)
    head = handle.read(4096)
    why = not_a_log(head, size)
    if why:
        raise LogReadError(f"{name}: {why}")
    utf16, has_bom = encoding_of(head)
    start = max(0, size - budget)
    if utf16 and start % 2:
        start += 1
    handle.seek(start)
    data = handle.read(size - start)
    first_line: int | None = 1
    if start:
        first_line = _count_newlines(handle, start, utf16) + 1 if start <= exact_line_limit else None
    return _build(name, data, start, size, first_line, utf16, has_bom and not start, head)
