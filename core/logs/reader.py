"""Read the end of a log of any size, in any of the forms a support technician is handed.

The cost of reading is bounded by a byte budget (default: the last 8 MiB), not by the size of
the file: a seekable file is read from ``size - budget`` to its end, so a 20 GB log costs what
an 8 MiB one does. A stream (standard input, a ``.gz`` rotation) has to be read through, but
only the last ``budget`` bytes are kept in memory.

Line numbers. Every line keeps its file and its 1-based line number when that is cheap to know
exactly: always for files read whole and for streams (their skipped part is read anyway, and
its newlines are counted on the way), and for a seekable file when the skipped part is at most
``EXACT_LINE_LIMIT`` bytes (its newlines are counted with a sequential read, about 64 MiB by
default). Past that, counting would cost the I/O that tail reading saves, so the line number is
``None`` and the line says instead how many lines before the end it is and at which byte offset
it starts (``LogLine.where()`` words it).

Forms handled: plain files; CRLF; ANSI colour codes (ONNX Runtime colours its lines); UTF-8 (BOM
or not), UTF-16 LE/BE with BOM (Windows), UTF-16 without BOM when the NUL bytes show it; the
Korean Windows code page CP949 / EUC-KR, decided line by line (UTF-8 strictly first, then CP949,
then UTF-8 with replacement characters, so a mixed file still reads); ``docker logs`` output
(timestamps kept as text, raw 8-byte stream headers removed, the json-file driver's
``{"log": ...}`` lines unwrapped); ``journalctl`` text and ``journalctl -o json`` (``MESSAGE``);
``.gz`` rotations; standard input.

By hand: ``tail -c 8388608 app.log | iconv -f cp949 -t utf-8``.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import re
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

DEFAULT_BUDGET = 8 * 1024 * 1024
"""Bytes read from the end of each log (and in total over its rotations)."""

EXACT_LINE_LIMIT = 64 * 1024 * 1024
"""Up to this many skipped bytes, newlines are counted so line numbers are exact."""

MAX_LINE_CHARS = 65536
"""A longer line is cut (its head and tail kept): binary junk must not cost memory per line."""

_CHUNK = 1024 * 1024

STDIN_NAME = "<stdin>"

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\[(?:0|1|[01];3[0-9]|3[0-9]|9[0-7]|[01];9[0-7])m"  # the same colour codes with ESC lost
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DOCKER_HEADER = re.compile(rb"[\x00-\x02]\x00\x00\x00[\x00-\xff]{4}")


@dataclass(frozen=True)
class LogLine:
    """One line of a log, cleaned for reading, with where it came from."""

    source: str
    text: str
    line: int | None = None
    """1-based line number in its file, when known exactly."""
    offset: int | None = None
    """Byte offset of the line's start in its (decompressed) file, when known."""
    from_end: int | None = None
    """How many lines come after this one in its file (0: the last line)."""

    def where(self) -> str:
        """File and line, e.g. ``app.log:120`` or ``app.log: 57 lines before the end (byte 9,1…)``."""
        if self.line is not None:
            return f"{self.source}:{self.line}"
        parts = []
        if self.from_end is not None:
            parts.append(f"{self.from_end} lines before the end")
        if self.offset is not None:
            parts.append(f"byte {self.offset:,}")
        return f"{self.source}: " + ", ".join(parts) if parts else self.source


@dataclass(frozen=True)
class LogText:
    """What was read of one file: its last lines (oldest first) and how they were read."""

    source: str
    lines: tuple[LogLine, ...]
    encoding: str
    size: int
    """Bytes in the file (decompressed, for a .gz or a stream)."""
    skipped: int
    """Bytes before the part read (0: the file was read whole)."""
    form: str
    """plain, docker-raw, docker-json, journal-json, or mixed."""

    @property
    def complete(self) -> bool:
        """True when the whole file was read."""
        return self.skipped == 0


class LogReadError(OSError):
    """A log could not be read; the message says which file and why."""


# ---------------------------------------------------------------------------------------------
# Decoding


def _bom(head: bytes) -> str | None:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    return None


def _sniff_utf16(sample: bytes) -> str | None:
    """UTF-16 without a BOM: mostly ASCII text puts a NUL in every other byte."""
    if len(sample) < 16:
        return None
    even = sample[0::2]
    odd = sample[1::2]
    even_nul = even.count(0) / len(even)
    odd_nul = odd.count(0) / len(odd)
    if odd_nul > 0.4 and even_nul < 0.05:
        return "utf-16-le"
    if even_nul > 0.4 and odd_nul < 0.05:
        return "utf-16-be"
    return None


def decode_line(raw: bytes) -> tuple[str, str]:
    """Decode one line's bytes: UTF-8 strictly, then CP949, then UTF-8 with replacement.

    Returns the text and the encoding used (``utf-8``, ``cp949`` or ``utf-8/replace``).
    """
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp949"), "cp949"
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), "utf-8/replace"


def clean_text(text: str) -> str:
    """Strip ANSI colour codes, a trailing CR and other control characters from one line."""
    if len(text) > MAX_LINE_CHARS:
        half = MAX_LINE_CHARS // 2
        text = text[:half] + " … " + text[-half:]
    text = text.rstrip("\r")
    if "\x1b" in text or "[" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        # A carriage return inside a line (progress bars): keep what was last written.
        pieces = [piece for piece in text.split("\r") if piece.strip()]
        text = pieces[-1] if pieces else ""
    return _CONTROL.sub("", text)


def _unwrap(text: str) -> tuple[str, str]:
    """Unwrap a JSON-lines record (journalctl -o json, docker json-file); plain text otherwise."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return text, "plain"
    if '"MESSAGE"' not in stripped and '"log"' not in stripped:
        return text, "plain"
    try:
        record = json.loads(stripped)
    except ValueError:
        return text, "plain"
    if not isinstance(record, dict):
        return text, "plain"
    if "MESSAGE" in record:
        message = record.get("MESSAGE")
        if isinstance(message, list):  # journald stores non-UTF-8 messages as byte arrays
            message = bytes(b & 0xFF for b in message if isinstance(b, int)).decode("utf-8", errors="replace")
        body = "" if message is None else str(message)
        ident = record.get("SYSLOG_IDENTIFIER") or record.get("_COMM")
        pid = record.get("_PID") or record.get("SYSLOG_PID")
        if ident:
            prefix = f"{ident}[{pid}]: " if pid else f"{ident}: "
            body = prefix + body
        return body, "journal-json"
    log = record.get("log")
    if isinstance(log, str):
        return log.rstrip("\n"), "docker-json"
    return text, "plain"


# ---------------------------------------------------------------------------------------------
# Reading bytes


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
) -> tuple[list[tuple[bytes | str, int | None]], str]:
    """Split a window into raw lines with their byte offsets; drop a cut first line.

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
        return [(piece, None) for piece in pieces], utf16
    position = 0
    if strip_bom and data.startswith(codecs.BOM_UTF8):
        position = len(codecs.BOM_UTF8)
    if skipped:
        first = data.find(b"\n")
        position = len(data) if first < 0 else first + 1
    result: list[tuple[bytes | str, int | None]] = []
    length = len(data)
    while position < length:
        end = data.find(b"\n", position)
        if end < 0:
            end = length
        result.append((data[position:end], skipped + position))
        position = end + 1
    return result, "utf-8"


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
    raw_header = _is_docker_raw(head)
    if raw_header and not utf16:
        data = _DOCKER_HEADER.sub(b"", data)
    pieces, _ = _split_window(data, skipped, utf16, strip_bom)
    encodings: set[str] = set()
    forms: set[str] = set()
    lines: list[LogLine] = []
    count = len(pieces)
    if first_line is not None and skipped:
        first_line += 1  # the cut first line belongs to the skipped part
    for index, (raw, offset) in enumerate(pieces):
        if isinstance(raw, bytes):
            text, encoding = decode_line(raw)
            if not raw.isascii():
                encodings.add(encoding)
        else:
            text = raw
        text, form = _unwrap(clean_text(text))
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


def _is_docker_raw(head: bytes) -> bool:
    """``docker logs`` captured raw: 8-byte frame headers (stream 0-2, three zeros, size)."""
    if len(head) < 9 or head[:1] not in (b"\x00", b"\x01", b"\x02") or head[1:4] != b"\x00\x00\x00":
        return False
    size = int.from_bytes(head[4:8], "big")
    return 0 < size < 1 << 24 and head[8:9] != b"\x00"


def _encoding_of(head: bytes) -> tuple[str | None, bool]:
    """(utf-16 codec or None, whether a BOM is there to strip)."""
    bom = _bom(head)
    if bom in ("utf-16-le", "utf-16-be"):
        return bom, True
    if bom == "utf-8-sig":
        return None, True
    return _sniff_utf16(head), False


def read_stream(stream: BinaryIO, source: str = STDIN_NAME, budget: int = DEFAULT_BUDGET) -> LogText:
    """Read a byte stream through, keeping and decoding its last ``budget`` bytes.

    Line numbers are exact: the newlines of the skipped part are counted on the way.
    """
    head = stream.read(4096)
    utf16, has_bom = _encoding_of(head)
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
) -> LogText:
    """Read the last ``budget`` bytes of a log file (``.gz`` decompressed), or ``-`` for stdin.

    Raises ``LogReadError`` naming the file and the reason when it cannot be read.
    """
    name = display_name or str(path)
    if str(path) == "-":
        return read_stream(sys.stdin.buffer, STDIN_NAME, budget)
    file_path = Path(path)
    try:
        if file_path.is_dir():
            raise LogReadError(f"{name}: is a directory (give a log file, or use read_log)")
        if file_path.suffix == ".gz":
            with gzip.open(file_path, "rb") as compressed:
                return read_stream(compressed, name, budget)  # type: ignore[arg-type]
        with file_path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(0)
            head = handle.read(4096)
            utf16, has_bom = _encoding_of(head)
            start = max(0, size - budget)
            if utf16 and start % 2:
                start += 1
            handle.seek(start)
            data = handle.read(size - start)
            first_line: int | None = 1
            if start:
                first_line = _count_newlines(handle, start, utf16) + 1 if start <= exact_line_limit else None
            return _build(name, data, start, size, first_line, utf16, has_bom and not start, head)
    except LogReadError:
        raise
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise LogReadError(f"{name}: cannot be read: {reason}") from error


# ---------------------------------------------------------------------------------------------
# Rotation

_DATE_SUFFIX = re.compile(r"^-(\d{8,10})(\.gz)?$")
_NUMBER_SUFFIX = re.compile(r"^\.(\d{1,4})(\.gz)?$")
_ROTATED_NAME = re.compile(r"(?:\.gz|\.\d{1,4}|-\d{8,10})$")


def rotated_siblings(path: str | os.PathLike[str]) -> list[Path]:
    """The rotations of a log in its directory, newest first (``app.log.1``, ``app.log.2.gz``,
    logrotate's ``app.log-20240131[.gz]``). By hand: ``ls -t app.log*``."""
    file_path = Path(path)
    directory = file_path.parent
    numbered: list[tuple[int, Path]] = []
    dated: list[tuple[str, Path]] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(file_path.name) or entry == file_path:
            continue
        suffix = entry.name[len(file_path.name) :]
        number = _NUMBER_SUFFIX.match(suffix)
        if number:
            numbered.append((int(number.group(1)), entry))
            continue
        date = _DATE_SUFFIX.match(suffix)
        if date:
            dated.append((date.group(1), entry))
    numbered.sort(key=lambda pair: pair[0])
    dated.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in numbered] + [entry for _, entry in dated]


def newest_log_in(directory: str | os.PathLike[str]) -> Path | None:
    """The most recently written log file in a directory (not a rotation), or None."""
    candidates: list[tuple[float, Path]] = []
    for entry in Path(directory).iterdir():
        if not entry.is_file() or _ROTATED_NAME.search(entry.name):
            continue
        try:
            candidates.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    candidates.sort(key=lambda pair: pair[0], reverse=True)
    return candidates[0][1] if candidates else None


def read_log(
    path: str | os.PathLike[str],
    budget: int = DEFAULT_BUDGET,
    *,
    follow_rotation: bool = True,
    stop_when: Callable[[LogText], bool] | None = None,
) -> list[LogText]:
    """Read a log and, while needed, its rotations: newest file first, within one byte budget.

    A directory means its most recently written log. Older rotations are read only when the
    newer file was read whole, budget is left, and ``stop_when`` (e.g. "a start-up was found")
    is not yet true. The result is newest first; ``chronological`` reverses it.
    """
    file_path = Path(path)
    if str(path) != "-" and file_path.is_dir():
        newest = newest_log_in(file_path)
        if newest is None:
            raise LogReadError(f"{path}: no log file in this directory")
        file_path = newest
    first = read_tail(file_path if str(path) != "-" else "-", budget)
    texts = [first]
    if str(path) == "-" or not follow_rotation:
        return texts
    remaining = budget - (first.size - first.skipped)
    if not first.complete or (stop_when is not None and stop_when(first)):
        return texts
    for sibling in rotated_siblings(file_path):
        if remaining <= 0:
            break
        try:
            text = read_tail(sibling, remaining)
        except LogReadError:
            continue
        texts.append(text)
        remaining -= text.size - text.skipped
        if not text.complete or (stop_when is not None and stop_when(text)):
            break
    return texts


def chronological(texts: list[LogText]) -> Iterator[LogLine]:
    """All lines of ``read_log``'s result, oldest first."""
    for text in reversed(texts):
        yield from text.lines


def lines_from_text(text: str, source: str = "<text>") -> list[LogLine]:
    """Split pasted text into numbered log lines (any of CRLF, LF)."""
    return lines_from_strings(text.split("\n"), source)


def lines_from_strings(strings: list[str] | tuple[str, ...], source: str = "<text>") -> list[LogLine]:
    """Wrap already-decoded text lines (e.g. pasted into the wizard) as numbered log lines."""
    result: list[LogLine] = []
    count = len(strings)
    for index, raw in enumerate(strings):
        text, form = _unwrap(clean_text(raw))
        if form != "plain":
            text = clean_text(text)
        result.append(LogLine(source, text, index + 1, None, count - 1 - index))
    return result
