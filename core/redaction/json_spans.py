"""Pretty JSON with the offset of every leaf, so redactions in JSON members get real spans.

The preview shows each redaction at its place in the pretty-printed original
(``json.dumps(value, ensure_ascii=False, indent=2)``); a leaf is named by its JSON path
("environment.python.executable", "findings[2].title", "a.b#key" for a key).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from fallback_doctor.core.redaction.redaction import Redaction

Spans = dict[str, tuple[int, int, Any]]
"""JSON path -> (start, end, the leaf itself) of each leaf token (and of each key, at "path#key")."""


def pretty(value: object) -> tuple[str, Spans]:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` and where each leaf token stands.

    The leaf is kept beside its span: a key holding "." or "[" makes a path that cannot be
    parsed back, so nothing is looked up by parsing it.
    """
    out: list[str] = []
    offsets: Spans = {}
    length = 0

    def emit(text: str) -> None:
        nonlocal length
        out.append(text)
        length += len(text)

    def walk(item: object, path: str, indent: int) -> None:
        if isinstance(item, dict) and item:
            emit("{")
            for number, (key, child) in enumerate(item.items()):
                emit(("," if number else "") + "\n" + "  " * (indent + 1))
                child_path = f"{path}.{key}" if path else str(key)
                token = json.dumps(str(key), ensure_ascii=False)
                offsets[child_path + "#key"] = (length, length + len(token), str(key))
                emit(token + ": ")
                walk(child, child_path, indent + 1)
            emit("\n" + "  " * indent + "}")
        elif isinstance(item, list) and item:
            emit("[")
            for number, child in enumerate(item):
                emit(("," if number else "") + "\n" + "  " * (indent + 1))
                walk(child, f"{path}[{number}]", indent + 1)
            emit("\n" + "  " * indent + "]")
        else:
            token = json.dumps(item, ensure_ascii=False)
            offsets[path] = (length, length + len(token), item)
            emit(token)

    walk(value, "", 0)
    return "".join(out), offsets


def place(redactions: Iterable[Redaction], offsets: Spans) -> list[Redaction]:
    """Redactions found inside JSON strings, with spans in the pretty-printed original."""
    placed: list[Redaction] = []
    for redaction in redactions:
        token = offsets.get(redaction.where)
        if token is None:
            continue
        start, end, leaf = token
        if isinstance(leaf, str) and redaction.end > redaction.start:
            inner_start = start + 1 + len(json.dumps(leaf[: redaction.start], ensure_ascii=False)) - 2
            inner_end = start + 1 + len(json.dumps(leaf[: redaction.end], ensure_ascii=False)) - 2
            start, end = inner_start, inner_end
        placed.append(replace(redaction, start=start, end=end))
    placed.sort(key=lambda r: (r.start, r.end))
    return placed
