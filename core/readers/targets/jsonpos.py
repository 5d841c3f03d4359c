"""A JSON reader that remembers where every key and value is (line and column), for findings.

``json.loads`` says where a malformed file breaks (JSONDecodeError's lineno and colno) but
forgets where a well-formed value came from. A finding about a wrong type must point at the
key in the file, so this reader walks the text once more and keeps each value's position.
Scalars are decoded by the standard library's own decoder (``raw_decode``), so strings,
escapes and numbers mean exactly what they mean to ``json.loads``.

Positions count as JSONDecodeError does: lines from 1, split at ``\\n`` only; columns from 1,
in characters. By hand: ``python -m json.tool bareun.json`` prints the same line and column.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 200
"""Deeper nesting than this is refused (a configuration is never that deep)."""

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


class JsonPositionError(ValueError):
    """The text is not JSON: what is wrong and where (1-based line and column)."""

    def __init__(self, message: str, line: int, column: int, offset: int) -> None:
        super().__init__(f"{message}: line {line} column {column}")
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset


@dataclass(frozen=True)
class Node:
    """One JSON value and where it starts.

    ``value`` is the decoded scalar (str, int, float, bool, None); for an object it is a
    dict of key -> Member, for an array a list of Node.
    """

    kind: str
    """"object", "array", "string", "number", "bool" or "null"."""
    value: Any
    line: int
    column: int
    offset: int
    end: int
    """The offset just after the value's last character."""
    duplicates: tuple[str, ...] = ()
    """For an object: keys written more than once (the last one counts, as in json.loads)."""


@dataclass(frozen=True)
class Member:
    """One key of an object: where the key is written, and its value."""

    key: str
    line: int
    column: int
    offset: int
    node: Node


@dataclass
class TextPositions:
    """Offsets to (line, column) and back, for one text."""

    text: str
    _starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._starts = [0]
        index = self.text.find("\n")
        while index != -1:
            self._starts.append(index + 1)
            index = self.text.find("\n", index + 1)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column), both from 1, of a character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        """The text of one line (1-based) without its line break; "" outside the text."""
        if line < 1 or line > len(self._starts):
            return ""
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    @property
    def line_count(self) -> int:
        """How many lines the text has (a text without a line break has one)."""
        return len(self._starts)


def parse_with_positions(text: str) -> Node:
    """Parse JSON text into Nodes with positions; JsonPositionError says where it is malformed.

    The verdict on well-formedness is ``json.loads``'s own (same message, line and column);
    only a well-formed text is walked again for positions. By hand: ``python -m json.tool FILE``.
    """
    positions = TextPositions(text)
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonPositionError(error.msg, error.lineno, error.colno, error.pos) from None
    except RecursionError:
        raise JsonPositionError("nested too deeply", 1, 1, 0) from None
    walker = _Walker(text, positions)
    index = walker.skip(0)
    return walker.value(index, 0)


class _Walker:
    def __init__(self, text: str, positions: TextPositions) -> None:
        self.text = text
        self.positions = positions

    def skip(self, index: int) -> int:
        text = self.text
        while index < len(text) and text[index] in _WHITESPACE:
            index += 1
        return index

    def fail(self, message: str, index: int) -> JsonPositionError:
        line, column = self.positions.position(index)
        return JsonPositionError(message, line, column, index)

    def value(self, index: int, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels", index)
        if index >= len(self.text):
            raise self.fail("Expecting value", index)
        char = self.text[index]
        if char == "{":
            return self.object(index, depth)
        if char == "[":
            return self.array(index, depth)
        try:
            value, end = _DECODER.raw_decode(self.text, index)
        except json.JSONDecodeError as error:
            raise self.fail(error.msg, error.pos) from None
        line, column = self.positions.position(index)
        return Node(_kind(value), value, line, column, index, end)

    def object(self, start: int, depth: int) -> Node:
        members: dict[str, Member] = {}
        duplicates: list[str] = []
        index = self.skip(start + 1)
        if self.text.startswith("}", index):
            return self._node("object", members, start, index + 1, ())
        while True:
            if not self.text.startswith('"', index):
                raise self.fail("Expecting property name enclosed in double quotes", index)
            key_node = self.value(index, depth + 1)
            index = self.skip(key_node.end)
            if not self.text.startswith(":", index):
                raise self.fail("Expecting ':' delimiter", index)
            node = self.value(self.skip(index + 1), depth + 1)
            key = str(key_node.value)
            if key in members and key not in duplicates:
                duplicates.append(key)
            members.pop(key, None)  # the last one counts, and keeps its place last
            members[key] = Member(key, key_node.line, key_node.column, key_node.offset, node)
            index = self.skip(node.end)
            if self.text.startswith("}", index):
                return self._node("object", members, start, index + 1, tuple(duplicates))
            if not self.text.startswith(",", index):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def array(self, start: int, depth: int) -> Node:
        items: list[Node] = []
        index = self.skip(start + 1)
        if self.text.startswith("]", index):
            return self._node("array", items, start, index + 1, ())
        while True:
            node = self.value(index, depth + 1)
            items.append(node)
            index = self.skip(node.end)
            if self.text.startswith("]", index):
                return self._node("array", items, start, index + 1, ())
            if not self.text.startswith(",", index):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def _node(self, kind: str, value: Any, start: int, end: int, duplicates: tuple[str, ...]) -> Node:
        line, column = self.positions.position(start)
        return Node(kind, value, line, column, start, end, duplicates)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "number"


def plain(node: Node) -> Any:
    """The node as plain Python data (what json.loads gives)."""
    if node.kind == "object":
        return {key: plain(member.node) for key, member in node.value.items()}
    if node.kind == "array":
        return [plain(item) for item in node.value]
    return node.value
