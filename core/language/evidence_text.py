"""Evidence made of the catalogue's words, and shown in the language of the document's reader.

A check says what it saw with :func:`said`: the label, the value and where it was read are keys of
resources/texts/evidence/*.json (``{key: {"en": ..., "ko": ..., "source": ...}}``, loaded with the
labels by core/language/texts.py) with parameters. A parameter is data shown as written (a path, a version,
a system's own message, a quoted log line), a list, or itself catalogue words (``Words``). The
English words stay in the document's ``label``/``value``/``source`` for machine readers; a renderer
takes :func:`evidence_words` and gets them in its language, from the keys (never by reading the
English back). A document from before the keys shows its English as written, in every language.

The document names them ``label_id``, ``value_id``, ``source_id`` and ``{"id", "params"}``: a field
called "...key" is a secret to the bundle's redaction (core/redaction/detect_keys.py), which would mask it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fallback_doctor.core.language.texts import has_label, label, words_text
from fallback_doctor.core.model.result import CodeStep, Commented, Evidence, ManualStep, Words

RECORD_ENGLISH = "evidence.record_english"
"""The value id of a sentence the test inference's record holds in English only (a failure of the
probe): shown as written in every language."""


def said(
    label_id: str,
    value_id: str | None = None,
    /,
    *,
    value: str = "",
    otherwise: str | None = None,
    source_id: str | None = None,
    source: str | None = None,
    line: int | None = None,
    **params: Any,
) -> Evidence:
    """Evidence whose label (and value, and source, when their keys are given) are catalogue words
    filled with ``params``; ``value`` and ``source`` without a key are data, shown as written.
    ``otherwise``: the value's key when ``value`` is empty ("none", "absent")."""
    if value_id is None and otherwise and not value:
        value_id = otherwise
    english = {name: words_text(param, "en") for name, param in params.items()}
    return Evidence(
        label=label(label_id, "en", **english),
        value=label(value_id, "en", **english) if value_id and value_id != RECORD_ENGLISH else value,
        source=label(source_id, "en", **english) if source_id else source,
        line=line,
        label_id=label_id,
        value_id=value_id,
        source_id=source_id,
        params={name: _plain(param) for name, param in params.items()},
    )


def _plain(param: Any) -> Any:
    """A parameter as the document holds it: words, a list, a number, else its text."""
    if isinstance(param, Words | str | int | float | bool) or param is None:
        return param
    if isinstance(param, list | tuple):
        return [_plain(item) for item in param]
    if isinstance(param, dict):  # the same words in every language: {"en": ..., "ko": ...}
        return {str(lang): str(text) for lang, text in param.items() if text}
    return str(param)


def named(
    name: str,
    value: str,
    *,
    otherwise: str | None = None,
    source: str | None = None,
    line: int | None = None,
) -> Evidence:
    """Evidence whose label is a name (a function, a library, a path) and whose value is data, both
    shown as written in every language (``cuInit(0)``: ``803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)``)."""
    return said("evidence.name", value=value, otherwise=otherwise, source=source, line=line, name=name)


LOG_ROLES = frozenset({"cause", "fallback", "context", "startup", "hidden", "confirms", "contradicts"})
"""The roles of a quoted log line that have their own words (resources/texts/evidence/log.json)."""


def log_line_evidence(role: str, text: str, source: str | None, line: int | None) -> Evidence:
    """A quoted log line, as written, labelled by its role: `sed -n LINEp FILE`."""
    pasted = "evidence.pasted_log" if source == PASTED_NAME else None  # its name in the reader's words
    if role in LOG_ROLES:
        return said(f"evidence.log_line.{role}", value=text, source=source, source_id=pasted, line=line)
    return said("evidence.log_line", value=text, source=source, source_id=pasted, line=line, role=role)


def record_words(words: Any, english: Any, lang: str) -> str:
    """A sentence of the test inference's record in ``lang``: from its catalogue words where the
    record has them (``skipped_words``), else its English as written (a record from before the ids)."""
    return said_text(words, english, lang)


def evidence_words(item: Mapping[str, Any], lang: str) -> tuple[str, str, str]:
    """The label, value and source (``""`` when none) of a document's evidence item in ``lang``."""
    given = item.get("params")
    params = {
        str(name): words_text(param, lang)
        for name, param in (given if isinstance(given, dict) else {}).items()
    }
    if not item.get("label_id"):
        return _before_keys(item, lang)
    shown = []
    for part in ("label", "value", "source"):
        key = item.get(f"{part}_id")
        if key == RECORD_ENGLISH:
            shown.append(str(item.get("value") or ""))
            continue
        shown.append(_said_in(key, lang, params, str(item.get(part) or "")))
    return shown[0], shown[1], shown[2]


def _said_in(key: Any, lang: str, params: dict[str, str], english: str) -> str:
    """The catalogue's words for ``key``, or ``english`` (the document's own) where the key is not
    the catalogue's (a later version's, or made up) or the parameters do not fit it (a hand-edited
    or hostile document: a field missing, of another shape)."""
    if not key or not has_label(str(key)):
        return english
    try:
        return label(str(key), lang, **params)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        return english


def _before_keys(item: Mapping[str, Any], lang: str) -> tuple[str, str, str]:
    """Evidence made without keys (a document of a previous version): its English as written, in
    every language (never read back into another)."""
    source = item.get("source")
    return str(item.get("label") or ""), str(item.get("value") or ""), str(source) if source else ""


def manual_step(key: str, option: int = 1, /, **params: Any) -> ManualStep:
    """A manual step said by a key of resources/texts/<lang>/labels/remedy.json ("Restart the
    server."): its English in the document, its words in the reader's language where shown."""
    words = Words(key, dict(params))
    return ManualStep(words_text(words), option, words=words)


def code_step(code: str, where_key: str, option: int = 1, language: str = "python") -> CodeStep:
    """Statements to put in the application, ``where_key`` the catalogue's words for where."""
    words = Words(where_key)
    return CodeStep(code, language, words_text(words), option, where_words=words)


def commented(command: str, key: str, /, *, gap: str = "    ", **params: Any) -> Commented:
    """A command line with a ``# comment`` said by a key of the remedy catalogue
    (``commented("nvidia-smi", "remedy.comment.host")``); ``command`` empty: a comment line."""
    return Commented(command, Words(key, dict(params)), gap)


def said_text(words: Any, text: Any, lang: str) -> str:
    """A sentence the document holds in English (``text``) and, where core said it by id, as
    catalogue words (``words``, ``{id, params}``): the words in ``lang``, else the text as written
    (a document of a previous version); ``""`` when neither is given."""
    if isinstance(words, dict) and words.get("id"):
        return words_text(words, lang)
    return "" if text is None else str(text)


PASTED_NAME = "<pasted text>"
"""The name core gives a log pasted into the wizard (core/readers/collect/log.py PASTED_SOURCE), in the
document as it is; shown as the catalogue's words ``evidence.pasted_log`` by :func:`source_name`."""


def source_name(name: Any, lang: str) -> str:
    """A log's name where one is shown (a file's path as written; the pasted log in ``lang``)."""
    return label("evidence.pasted_log", lang) if name == PASTED_NAME else str(name)


def places(found: Iterable[tuple[str, int | None]]) -> str | Words:
    """Files and lines ("app.log:3, app.log:9") as a parameter: a text, or words where the pasted
    log is among them (its name said in the reader's language)."""
    items = list(dict.fromkeys(found))
    if not any(file == PASTED_NAME for file, _ in items):
        return ", ".join(f"{file}:{line}" if line else file for file, line in items)
    said_items: list[Any] = [
        (Words("evidence.pasted_log_line", {"line": line}) if line else Words("evidence.pasted_log"))
        if file == PASTED_NAME
        else (f"{file}:{line}" if line else file)
        for file, line in items
    ]
    return Words("evidence.as_list", {"items": said_items})
