"""Decoded views of a text: JSON escapes (``\\/``, ``\\u0061``) and URL encoding (``%40``) undone.

Every detector also runs on these views, up to three levels deep, so a secret spelled
``\\u0070assword`` or ``%2Fhome%2Falice`` is still found; spans map back to the raw text and
are widened so they never cut an escape sequence in two. Only the lines that hold an escape are
decoded (the others decode to themselves). By hand: ``python3 -c 'import urllib.parse,sys;
print(urllib.parse.unquote(sys.stdin.read()))' < FILE``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class View:
    """A decoded text and where each part of it came from, as segments (not one entry per character).

    Segment k covers decoded ``text[dec[k]:next]`` and came from ``raw[raw_a[k]:raw_b[k]]`` of the
    text below it (``parent``'s text, or the raw text when there is no parent); a literal segment
    maps character by character, an escape maps whole.
    """

    text: str
    dec: list[int] = field(default_factory=list)
    raw_a: list[int] = field(default_factory=list)
    raw_b: list[int] = field(default_factory=list)
    literal: list[bool] = field(default_factory=list)
    parent: View | None = None

    def add(self, dec: int, raw_a: int, raw_b: int, literal: bool) -> None:
        self.dec.append(dec)
        self.raw_a.append(raw_a)
        self.raw_b.append(raw_b)
        self.literal.append(literal)

    def _below(self, position: int, end: bool) -> int:
        index = max(0, bisect.bisect_right(self.dec, position) - 1)
        if self.literal[index]:
            return self.raw_a[index] + position - self.dec[index] + (1 if end else 0)
        return self.raw_b[index] if end else self.raw_a[index]

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the raw text that decoded ``text[start:end]`` came from."""
        if not self.dec or end <= start:
            position = self._below(min(start, max(0, len(self.text) - 1)), False) if self.dec else 0
            below = (position, position)
        else:
            below = (self._below(start, False), self._below(end - 1, True))
        return self.parent.raw_span(*below) if self.parent is not None else below


_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[0-9a-fA-F]{4}"
    r"|\\[\"\\/bfnrt]"
    r"|(?:%[0-9A-Fa-f]{2})+"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _decoded_token(token: str) -> str:
    if token.startswith("\\u") and len(token) == 12:
        high, low = int(token[2:6], 16), int(token[8:12], 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    if token.startswith("\\u"):
        return chr(int(token[2:6], 16))
    return _SIMPLE_ESCAPES[token[1]]


def _decode_once(below: View) -> View | None:
    """One level of JSON-escape and percent decoding of ``below.text``; None when nothing decodes."""
    text = below.text
    view = View("", parent=below)
    pieces: list[str] = []
    length = 0
    position = 0
    for match in _ESCAPE.finditer(text):
        begin = match.start()
        if begin > position:
            view.add(length, position, begin, True)
            pieces.append(text[position:begin])
            length += begin - position
        token = match.group(0)
        if token.startswith("\\"):
            decoded = _decoded_token(token)
            view.add(length, begin, match.end(), False)
            pieces.append(decoded)
            length += len(decoded)
        else:
            length = _percent(view, pieces, token, begin, length)
        position = match.end()
    if not view.dec:
        return None
    if position < len(text):
        view.add(length, position, len(text), True)
        pieces.append(text[position:])
    view.text = "".join(pieces)
    return view


def _percent(view: View, pieces: list[str], token: str, begin: int, length: int) -> int:
    """A run of %XX: UTF-8 where it decodes (each character from its bytes), else byte by byte."""
    data = bytes.fromhex(token.replace("%", ""))
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        decoded = ""
    offset = begin
    for char in decoded or data.decode("latin-1"):
        width = 3 * (len(char.encode("utf-8")) if decoded else 1)
        view.add(length, offset, offset + width, False)
        pieces.append(char)
        length += len(char)
        offset += width
    return length


def _escape_search(text: str) -> Callable[[int], re.Match[str] | None]:
    """``_ESCAPE.search(text, position)``, found from the backslashes and percent signs.

    Every escape starts with one of the two, so the C string search finds the candidates and the
    pattern is tried only there (a regular expression scanning every character is 30 times slower).
    Each character's next position is kept, so a text is crossed once however often this is called
    (the positions asked for must not go back).
    """
    nexts = {"\\": -2, "%": -2}

    def search(position: int) -> re.Match[str] | None:
        while True:
            for char, at in nexts.items():
                if -1 < at < position or at == -2:
                    nexts[char] = text.find(char, position)
            candidates = [at for at in nexts.values() if at >= position]
            if not candidates:
                return None
            found = min(candidates)
            match = _ESCAPE.match(text, found)
            if match is not None:
                return match
            position = found + 1

    return search


def _escaped_lines(text: str) -> View | None:
    """Only the lines that hold an escape sequence (the others decode to themselves), mapped to raw."""
    spans: list[tuple[int, int]] = []
    position = 0
    search = _escape_search(text)
    while True:
        match = search(position)
        if match is None:
            break
        begin = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        spans.append((begin, end))
        position = end + 1
    if not spans:
        return None
    view = View("")
    pieces: list[str] = []
    length = 0
    for begin, end in spans:
        if pieces:
            view.add(length, begin - 1, begin, True)
            pieces.append("\n")
            length += 1
        view.add(length, begin, end, True)
        pieces.append(text[begin:end])
        length += end - begin
    view.text = "".join(pieces)
    return view


def decoded_views(text: str, depth: int = 3) -> list[View]:
    """Views of ``text`` with one, two, three levels of escaping undone (each mapped to raw)."""
    views: list[View] = []
    if "\\" not in text and "%" not in text:
        return views
    current = _escaped_lines(text)
    for _ in range(depth if current is not None else 0):
        assert current is not None
        view = _decode_once(current)
        if view is None or view.text == current.text:
            break
        views.append(view)
        current = view
    return views


def escape_boundaries(text: str, views: list[View]) -> Callable[[int, int], tuple[int, int]]:
    """Widen a raw span so it never cuts an escape sequence (``\\u0061``, ``%2F``) in two."""
    if not views:
        return lambda start, end: (start, end)
    lines: dict[int, tuple[list[int], list[int]]] = {}
    """Escape units of one line (no escape spans a newline), found when a span first nears them."""

    def units(position: int) -> tuple[list[int], list[int]]:
        line_start = text.rfind("\n", 0, position) + 1
        found = lines.get(line_start)
        if found is None:
            line_end = text.find("\n", position)
            starts: list[int] = []
            ends: list[int] = []
            for match in _ESCAPE.finditer(text, line_start, len(text) if line_end < 0 else line_end):
                step = 3 if match.group(0).startswith("%") else len(match.group(0))
                for unit in range(match.start(), match.end(), step):
                    starts.append(unit)
                    ends.append(unit + step)
            found = lines[line_start] = (starts, ends)
        return found

    def around(position: int) -> tuple[int, int] | None:
        """The escape unit strictly around ``position`` (its start and end), or None."""
        starts, ends = units(position)
        index = bisect.bisect_right(starts, position) - 1
        return (starts[index], ends[index]) if index >= 0 and starts[index] < position < ends[index] else None

    def widen(start: int, end: int) -> tuple[int, int]:
        # An escape is at most 12 characters: no backslash or percent near an edge, nothing to widen.
        near_start, near_end = text[max(0, start - 11) : start], text[max(0, end - 11) : end]
        if "\\" not in near_start and "%" not in near_start and "\\" not in near_end and "%" not in near_end:
            return start, end
        first, last = around(start), around(end)
        return (first[0] if first else start, last[1] if last else end)

    return widen
