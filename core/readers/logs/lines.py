"""Log lines: what one line of a log is, and how its bytes become clean text.

Decoding: UTF-8 (BOM or not), UTF-16 LE/BE with BOM, UTF-16 without BOM when the NUL bytes
show it, the Korean Windows code page CP949 / EUC-KR decided line by line (UTF-8 strictly
first, then CP949, then UTF-8 with replacement characters, so a mixed file still reads). ANSI
colour codes, CR and control characters are removed; ``journalctl -o json`` and docker's
json-file records are unwrapped.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

MAX_LINE_CHARS = 65536
"""A longer line is cut (its head and tail kept): binary junk must not cost memory per line."""

MAX_JSON_CHARS = 1 << 20
"""A JSON record longer than this is not unwrapped (kept as text)."""

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\[(?:0|1|[01];3[0-9]|3[0-9]|9[0-7]|[01];9[0-7])m"  # the same colour codes with ESC lost
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PREFIX = re.compile(
    r"(?:"
    r"\[?[0-9]{4}[-/.][0-9]{2}[-/.][0-9]{2}[T ][0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
    r"(?: ?(?:Z|[+-][0-9]{2}:?[0-9]{2}|UTC))?\]?"  # ISO and Windows (2025-03-04 10:11:12,345)
    r"|\[?[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4},? {1,2}[0-9]{1,2}:[0-9]{2}:[0-9]{2}"  # US and Windows
    r"(?:[.,][0-9]{1,7})?(?: ?[AP]M)?\]?"
    r"|\[?[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?\]?"  # the time alone
    r"|[A-Z][a-z]{2} {1,2}[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [A-Za-z0-9_.\-]{1,64}"  # syslog: date, host
    r"|[A-Za-z0-9_.\-/]{1,40}\[[0-9]{1,10}\]:"  # a process and its id (app[4242]:)
    r"|[\[(]pid[ =:]?[0-9]{1,10}[\])]"
    r"|(?:stdout|stderr) [FP]"  # the container runtime's (CRI) record
    r"|[A-Za-z0-9_.\-]{1,60} {1,30}\|"  # docker compose's service column
    r")[ \t|:\-]{1,4}"
)
"""A prefix that a logger, syslog, journald or a container runtime puts before a message."""


@dataclass(frozen=True, slots=True)
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
    note: str = ""
    """What else the reader has to say about the file (a cap reached, lines not kept)."""

    @property
    def complete(self) -> bool:
        """True when the whole file was read."""
        return self.skipped == 0


class LogReadError(OSError):
    """A log could not be read; the message says which file and why."""


def bom_of(head: bytes) -> str | None:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    return None


def sniff_utf16(sample: bytes) -> str | None:
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
    if "\x1b" in text or ("[" in text and "m" in text):
        text = _ANSI.sub("", text)
    if "\r" in text:
        # A carriage return inside a line (progress bars): keep what was last written.
        pieces = [piece for piece in text.split("\r") if piece.strip()]
        text = pieces[-1] if pieces else ""
    return text if text.isprintable() else _CONTROL.sub("", text)


def line_body(text: str) -> str:
    """The message of a line without the prefixes its writers put before it (time stamps in
    the Linux and Windows forms, syslog's host and process, a container runtime's record,
    docker compose's service column), so that several interleaved processes' lines and lines
    of any time format read alike. Up to three prefixes are taken off; the text is otherwise
    kept (quotes show the line as it is)."""
    for _ in range(3):
        found = _PREFIX.match(text)
        if found is None or found.end() >= len(text):
            return text
        text = text[found.end() :]
    return text


def unwrap(text: str) -> tuple[str, str]:
    """Unwrap a JSON-lines record (journalctl -o json, docker json-file); plain text otherwise."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return text, "plain"
    if ('"MESSAGE"' not in stripped and '"log"' not in stripped) or len(stripped) > MAX_JSON_CHARS:
        return text, "plain"
    try:
        record = json.loads(stripped)
    except (ValueError, RecursionError):
        # Not JSON, or nested deeper than the parser goes: the line stays text.
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


def lines_from_text(text: str, source: str = "<text>") -> list[LogLine]:
    """Split pasted text into numbered log lines (any of CRLF, LF)."""
    return lines_from_strings(text.split("\n"), source)


def lines_from_strings(strings: list[str] | tuple[str, ...], source: str = "<text>") -> list[LogLine]:
    """Wrap already-decoded text lines (e.g. pasted into the wizard) as numbered log lines."""
    result: list[LogLine] = []
    count = len(strings)
    for index, raw in enumerate(strings):
        text, form = unwrap(clean_text(raw))
        if form != "plain":
            text = clean_text(text)
        result.append(LogLine(source, text, index + 1, None, count - 1 - index))
    return result
