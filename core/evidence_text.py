"""Evidence made of the catalogue's words, and shown in the language of the document's reader.

A check says what it saw with :func:`said`: the label, the value and where it was read are keys of
resources/texts/evidence/*.json (``{key: {"en": ..., "ko": ..., "source": ...}}``, loaded with the
labels by core/texts.py) with parameters. A parameter is data shown as written (a path, a version,
a system's own message, a quoted log line), a list, or itself catalogue words (``Words``). The
English words stay in the document's ``label``/``value``/``source`` for machine readers; a renderer
takes :func:`evidence_words` and gets them in its language, from the keys (never by reading the
English back). A document from before the keys shows its English as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.model import Evidence, Words
from fallback_doctor.core.texts import label, words_text


def said(
    label_key: str,
    value_key: str | None = None,
    /,
    *,
    value: str = "",
    source_key: str | None = None,
    source: str | None = None,
    line: int | None = None,
    **params: Any,
) -> Evidence:
    """Evidence whose label (and value, and source, when their keys are given) are catalogue words
    filled with ``params``; ``value`` and ``source`` without a key are data, shown as written."""
    english = {name: words_text(param, "en") for name, param in params.items()}
    return Evidence(
        label=label(label_key, "en", **english),
        value=label(value_key, "en", **english) if value_key else value,
        source=label(source_key, "en", **english) if source_key else source,
        line=line,
        label_key=label_key,
        value_key=value_key,
        source_key=source_key,
        params={name: _plain(param) for name, param in params.items()},
    )


def _plain(param: Any) -> Any:
    """A parameter as the document holds it: words, a list, a number, else its text."""
    if isinstance(param, Words | str | int | float | bool) or param is None:
        return param
    if isinstance(param, list | tuple):
        return [_plain(item) for item in param]
    return str(param)


def named(name: str, value: str, *, source: str | None = None, line: int | None = None) -> Evidence:
    """Evidence whose label is a name (a function, a library, a path) and whose value is data, both
    shown as written in every language (``cuInit(0)``: ``803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)``)."""
    return said("evidence.name", value=value, source=source, line=line, name=name)


def evidence_words(item: Mapping[str, Any], lang: str) -> tuple[str, str, str]:
    """The label, value and source (``""`` when none) of a document's evidence item in ``lang``."""
    params = {name: words_text(param, lang) for name, param in dict(item.get("params") or {}).items()}
    if not item.get("label_key"):
        return _before_keys(item, lang)
    shown = []
    for part in ("label", "value", "source"):
        key = item.get(f"{part}_key")
        shown.append(label(str(key), lang, **params) if key else str(item.get(part) or ""))
    return shown[0], shown[1], shown[2]


def _before_keys(item: Mapping[str, Any], lang: str) -> tuple[str, str, str]:
    """Evidence made without keys, shown by the English words it holds."""
    from fallback_doctor.core.evidence_words import evidence_label, evidence_source, evidence_value

    source = item.get("source")
    return (
        evidence_label(item.get("label"), lang),
        evidence_value(item.get("value"), lang),
        evidence_source(source, lang) if source else "",
    )
