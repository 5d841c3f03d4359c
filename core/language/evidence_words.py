"""The old way, being retired (issue 24): English read back into another language by templates.

Evidence is now said by catalogue ids (core/language/evidence_text.py); what still comes here: the comments
after commands, a code step's "where", a manual step's sentence, the test inference record's own
sentences (RECORD_ENGLISH), English finding parameters not yet given as ``Words``, the watch
status line, and documents written before the ids.

Evidence values, NVML's sentences and the comments after commands are written in English by the
checks (they are data of the document, and its JSON stays English). When a report or a page is
shown in another language, :func:`evidence_label`, :func:`evidence_value`, :func:`evidence_source`
and :func:`command_text` look the words up in resources/texts/evidence/words.json. A pattern's
fields (``{lib}``, ``{path}``) are carried over as written, particles after them chosen by
:func:`fallback_doctor.core.language.particles.fill`; a label's or a value's field is itself looked up
("with onnxruntime.preload_dlls() first" inside a sentence about a strategy), and a value that is a
list ("140 on CUDAExecutionProvider, 11 on CPUExecutionProvider") is shown item by item when the
catalog has every item. Words not in the catalog stay as they are (a system's own message is
quoted, not translated). :func:`parameter_value` does the same for a finding text's parameters.
"""

from __future__ import annotations

import json
import re
import string
from functools import cache, lru_cache
from typing import Any

from fallback_doctor.core.language.particles import fill
from fallback_doctor.core.platform.resource_files import RESOURCES

_COMMENT = re.compile(r"^(?P<command>.*?)(?P<gap>\s*)#\s(?P<comment>.+)$")

FIELD_PATTERNS: dict[str, str] = {
    "count": r"\d+",
    "provider": r"[^\s,;()]+",
    "device": r"[^\s,;()]+",
    "vendor": r"[^;()]+",
    "needed": r"[^;]+",
    "family": r"[A-Za-z]+",
    "major": r"\d+",
    "engine": r"[a-z][\w-]*",
    "gpu_providers": r"\w+ExecutionProvider(?:, \w+ExecutionProvider)*",
    "nvml_code": r"NVML_[A-Z_]+|nvmlReturn_t -?\d+|NVML error",
}
"""Fields that match only what their name says (a count is digits, a provider one name), so that a
list of items ("151 on A, 12 on B") is not read as one item with a long field."""

_SEPARATORS = ("; ", ", ")
"""How the checks join a list of items in one value; tried in this order."""

_NESTED = frozenset({"labels", "values"})
"""The kinds whose fields are looked up again (a label inside a label, a value inside a value)."""


@cache
def _catalog() -> dict[str, Any]:
    folder = RESOURCES.joinpath("texts").joinpath("evidence")
    data: dict[str, Any] = json.loads(folder.joinpath("words.json").read_text(encoding="utf-8"))
    return data


@cache
def _regex(template: str) -> re.Pattern[str]:
    """The pattern a catalog template matches; a field named twice ("CUDA {major} ... cuda-{major}")
    must hold the same text both times (a backreference, not a second group of the same name)."""
    parts: list[str] = []
    seen: set[str] = set()
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            pattern = FIELD_PATTERNS.get(field, ".+?")
            parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>{pattern})")
            seen.add(field)
    return re.compile("^" + "".join(parts) + "$", re.S)


_Literals = tuple[str, str, tuple[str, ...]]
"""A template's text before its first field, after its last, and between (what a match must hold)."""


def _literals(template: str) -> _Literals:
    pieces = [literal for literal, *_ in string.Formatter().parse(template)]
    if len(pieces) == 1 and "{" not in template:  # no field: the whole text is the prefix
        return template, "", ()
    ends_with_field = template.endswith("}") and not template.endswith("}}")
    suffix = "" if ends_with_field or len(pieces) < 2 else pieces[-1]
    inner = tuple(piece for piece in pieces[1 : len(pieces) - (0 if ends_with_field else 1)] if piece)
    return pieces[0], suffix, inner


@cache
def _patterns(kind: str) -> tuple[tuple[_Literals, dict[str, str]], ...]:
    """Each template with the literals a text must hold to match it. The pattern itself is
    compiled only when a text holds them (compiling all 300 costs every report ≈40 ms)."""
    return tuple((_literals(entry["en"]), entry) for entry in _catalog()[kind])


def _may_match(literals: _Literals, text: str) -> bool:
    prefix, suffix, inner = literals
    return text.startswith(prefix) and text.endswith(suffix) and all(piece in text for piece in inner)


@lru_cache(maxsize=4096)
def _by_pattern(kind: str, text: str, lang: str) -> str:
    for literals, entry in _patterns(kind):
        if not _may_match(literals, text):
            continue
        match = _regex(entry["en"]).match(text)
        if match is not None and entry.get(lang):
            fields = match.groupdict()
            if kind in _NESTED:  # "GPU retry: providers active": the inner label is a label too
                fields = {key: _by_pattern(kind, value, lang) for key, value in fields.items()}
            return fill(entry[lang], fields)
    if kind == "values" and text in _separating_facts(lang):
        return _separating_facts(lang)[text]
    return _by_items(kind, text, lang) if kind in _NESTED else text


def _by_items(kind: str, text: str, lang: str) -> str:
    """A list ("a; b", "a, b") item by item, when the catalog has the words of every item that is
    words (an item without a space is a name, kept as written); else the text as it is."""
    for separator in _SEPARATORS:
        items = text.split(separator)
        if len(items) < 2:
            continue
        shown = [_by_pattern(kind, item, lang) for item in items]
        changed = [after != before for after, before in zip(shown, items, strict=True)]
        if any(changed) and all(done or " " not in item for done, item in zip(changed, items, strict=True)):
            return separator.join(shown)
    return text


@cache
def _separating_facts(lang: str) -> dict[str, str]:
    """The checks that tell one log cause from another (the catalogues' labels/log_told_apart.json,
    shown by core/readers/logs/separators.py), by their English: a log finding quotes them in English as a
    candidate's evidence. Read here from the files: the texts sit below the log reader."""
    labels = RESOURCES.joinpath("texts")
    english, words = (
        json.loads(labels.joinpath(code, "labels", "log_told_apart.json").read_text(encoding="utf-8"))
        if labels.joinpath(code, "labels", "log_told_apart.json").is_file()
        else {}
        for code in ("en", lang)
    )
    return {
        str(text): str(words[key])
        for key, text in english.items()
        if not key.startswith("_") and words.get(key)
    }


def _by_word(kind: str, text: str, lang: str) -> str:
    entry = _catalog()[kind].get(text)
    return str(entry.get(lang) or text) if isinstance(entry, dict) else text


def evidence_label(text: Any, lang: str) -> str:
    """An evidence item's label ("needed") in ``lang``."""
    return "" if text is None else _by_pattern("labels", str(text), lang) if lang != "en" else str(text)


PASTED = "<pasted text>"
"""The name core gives a log pasted into the wizard (core/readers/collect/log.py PASTED_SOURCE), in the
document as it is; shown in the catalogue's words (resources/texts/evidence/words.json) wherever
it stands in a value."""


def pasted_words(text: str, lang: str) -> str:
    """``text`` with the pasted log's name in ``lang``'s words ("붙여 넣은 로그:3" for "<pasted text>:3")."""
    if lang == "en" or PASTED not in text:
        return text
    return text.replace(PASTED, _by_pattern("values", PASTED, lang))


def evidence_value(text: Any, lang: str) -> str:
    """An evidence item's value in ``lang`` where the catalog has its words."""
    if text is None:
        return ""
    return pasted_words(_by_pattern("values", str(text), lang), lang) if lang != "en" else str(text)


def parameter_value(text: str, lang: str) -> str:
    """A finding text's parameter in ``lang``: the catalog's words for a value a check composed
    ("nodes: 151 on CPUExecutionProvider (from verbose log)"), else the value as it is."""
    return pasted_words(_by_pattern("values", text, lang), lang) if lang != "en" and text else text


def evidence_source(text: Any, lang: str) -> str:
    """Where an evidence value was read ("dlopen in the native probe") in ``lang``."""
    if text is None:
        return ""
    return pasted_words(_by_word("sources", str(text), lang), lang) if lang != "en" else str(text)


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
