"""The English words checks write into evidence and command comments, shown in the report's language.

Evidence values, NVML's sentences and the comments after commands are written in English by the
checks (they are data of the document, and its JSON stays English). When a report or a page is
shown in another language, :func:`evidence_label`, :func:`evidence_value`, :func:`evidence_source`
and :func:`command_text` look the words up in resources/texts/evidence/words.json. A pattern's
fields (``{lib}``, ``{path}``) are carried over as written, particles after them chosen by
:func:`fallback_doctor.core.particles.fill`. Words not in the catalog stay as they are (a system's
own message is quoted, not translated).
"""

from __future__ import annotations

import json
import re
import string
from functools import cache
from importlib import resources
from typing import Any

from fallback_doctor.core.particles import fill

_COMMENT = re.compile(r"^(?P<command>.*?)(?P<gap>\s*)#\s(?P<comment>.+)$")


@cache
def _catalog() -> dict[str, Any]:
    folder = resources.files("fallback_doctor.resources").joinpath("texts").joinpath("evidence")
    data: dict[str, Any] = json.loads(folder.joinpath("words.json").read_text(encoding="utf-8"))
    return data


def _regex(template: str) -> re.Pattern[str]:
    """The pattern a catalog template matches; a field named twice ("CUDA {major} ... cuda-{major}")
    must hold the same text both times (a backreference, not a second group of the same name)."""
    parts: list[str] = []
    seen: set[str] = set()
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>.+?)")
            seen.add(field)
    return re.compile("^" + "".join(parts) + "$", re.S)


@cache
def _patterns(kind: str) -> tuple[tuple[re.Pattern[str], dict[str, str]], ...]:
    return tuple((_regex(entry["en"]), entry) for entry in _catalog()[kind])


def _by_pattern(kind: str, text: str, lang: str) -> str:
    for pattern, entry in _patterns(kind):
        match = pattern.match(text)
        if match is not None and entry.get(lang):
            fields = match.groupdict()
            if kind == "labels":  # "GPU retry: providers active": the inner label is a label too
                fields = {key: _by_pattern(kind, value, lang) for key, value in fields.items()}
            return fill(entry[lang], fields)
    return text


def _by_word(kind: str, text: str, lang: str) -> str:
    entry = _catalog()[kind].get(text)
    return str(entry.get(lang) or text) if isinstance(entry, dict) else text


def evidence_label(text: Any, lang: str) -> str:
    """An evidence item's label ("needed") in ``lang``."""
    return "" if text is None else _by_pattern("labels", str(text), lang) if lang != "en" else str(text)


def evidence_value(text: Any, lang: str) -> str:
    """An evidence item's value in ``lang`` where the catalog has its words."""
    return "" if text is None else _by_pattern("values", str(text), lang) if lang != "en" else str(text)


def evidence_source(text: Any, lang: str) -> str:
    """Where an evidence value was read ("dlopen in the native probe") in ``lang``."""
    return "" if text is None else _by_word("sources", str(text), lang) if lang != "en" else str(text)


def command_text(line: str, lang: str) -> str:
    """A command line with its trailing ``# comment`` (or a line that is only a comment) in ``lang``."""
    if lang == "en":
        return line
    match = _COMMENT.match(line)
    if match is None:
        return line
    comment = _by_pattern("comments", match["comment"].strip(), lang)
    if comment == match["comment"].strip():
        return line
    return f"{match['command']}{match['gap']}# {comment}"


def manual_text(text: str, lang: str) -> str:
    """A manual step's sentence ("Restart the server.") in ``lang`` where the catalog has it."""
    return _by_pattern("manual", text, lang) if lang != "en" else text
