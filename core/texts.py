"""The one text catalog, English and Korean, loaded from resources/texts/ (data, not code).

Two kinds of entries, one loader each:

- finding texts, ``resources/texts/*.json`` (:func:`load_texts`, :func:`render_text`,
  :func:`make_finding`), described below;
- labels, ``resources/texts/labels/*.json`` (:func:`load_labels`, :func:`label`): the words of the
  wizard (``ui.json``), of the text report, report.html and the verdicts (``report.json``), each
  ``{"key": {"en": "...", "ko": "..."}}`` with str.format fields. The CLI, the wizard, report.html
  and the bundle all take their words from here.

Each file maps a finding id to its texts::

    {"driver.missing": {
        "en": {"title": "...", "detail": "... {library} ...", "fix": "..."},
        "ko": {"title": "...", "detail": "...", "fix": "..."},
        "source": "where the facts in the text come from"}}

Templates use str.format fields filled from the check's parameters; a Korean particle after a
field is a spec, ``{library:이/가}``, chosen by how the value is read (core/particles.py). A
parameter that is words is given as catalogue words (``Words``, resources/texts/evidence/),
rendered in each language by :func:`words_text`; names, paths and a system's own messages stay
as written. An English parameter string still left is looked up in core/evidence_words.py.
"""

from __future__ import annotations

import json
import locale
import os
from functools import cache
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.particles import fill
from fallback_doctor.core.resource_files import RESOURCES

if TYPE_CHECKING:  # imported where a finding is made: the wizard's first page needs only labels
    from fallback_doctor.core.model import Evidence, Finding, Layer, Severity, Step

LANGUAGES: tuple[str, ...] = ("en", "ko")


def system_language() -> str:
    """ "ko" when the locale is Korean (LC_ALL, LC_MESSAGES, LANG, then the C library's), else "en"."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    try:
        current = locale.getlocale()[0] or ""
    except ValueError:
        current = ""
    return "ko" if current.lower().startswith("ko") else "en"


class _Defaulting(dict[str, Any]):
    """A format mapping that leaves unknown fields visible instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@cache
def load_texts() -> dict[str, dict[str, Any]]:
    """Every finding text, merged from all files in resources/texts/."""
    merged: dict[str, dict[str, Any]] = {}
    folder = RESOURCES.joinpath("texts")
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key in merged:
                raise ValueError(f"finding text {key!r} is defined twice (in {entry.name})")
            merged[key] = value
    return merged


@cache
def load_labels() -> dict[str, dict[str, str]]:
    """Every label, merged from resources/texts/labels/*.json and the evidence words in
    resources/texts/evidence/*.json (keys starting with "_" are notes)."""
    merged: dict[str, dict[str, str]] = {}
    texts = RESOURCES.joinpath("texts")
    files = [*texts.joinpath("labels").iterdir(), *texts.joinpath("evidence").iterdir()]
    for entry in sorted(files, key=lambda item: item.name):
        if not entry.name.endswith(".json") or entry.name == "words.json":
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key.startswith("_"):
                continue
            if key in merged:
                raise ValueError(f"label {key!r} is defined twice (in {entry.name})")
            merged[key] = value
    return merged


def has_label(key: str) -> bool:
    """Whether the catalog has the label ``key``."""
    return key in load_labels()


def label(key: str, lang: str = "en", /, **params: Any) -> str:
    """The label ``key`` in ``lang`` (English where that language lacks it), ``params`` filled in."""
    entry = load_labels()[key]
    text = entry.get(lang) or entry["en"]
    return fill(text, params) if params else text


def render_text(finding_id: str, lang: str, params: dict[str, Any]) -> dict[str, str]:
    """The title, detail, fix (and "verify", where the data has it) of a finding in one language."""
    entry = load_texts().get(finding_id)
    if entry is None:
        raise KeyError(f"no texts for finding {finding_id!r} in resources/texts/")
    texts = entry.get(lang) or entry["en"]
    mapping = _Defaulting({key: _stringify(value, lang) for key, value in params.items()})
    rendered = {part: fill(str(texts.get(part, "")), mapping) for part in ("title", "detail", "fix")}
    if texts.get("verify"):
        rendered["verify"] = fill(str(texts["verify"]), mapping)
    return rendered


def _is_words(value: Any) -> bool:
    return (isinstance(value, dict) and "id" in value and "params" in value) or (
        hasattr(value, "id") and hasattr(value, "params")
    )


def words_text(words: Any, lang: str = "en") -> str:
    """A parameter in ``lang``: catalogue words (``Words`` or its document form ``{id, params}``)
    rendered with their own parameters, a list item by item, a text given in every language
    (``{"en": ..., "ko": ...}``) in ``lang``, data as written."""
    if not isinstance(words, dict) and _is_words(words):
        return words_text({"id": words.id, "params": words.params}, lang)
    if _is_words(words):
        params = words.get("params") or {}
        return label(str(words["id"]), lang, **{k: words_text(v, lang) for k, v in params.items()})
    if isinstance(words, list | tuple):
        return ", ".join(words_text(item, lang) for item in words)
    if isinstance(words, dict):  # given in every language (a table's bilingual text)
        return str(words.get(lang) or words.get("en") or "")
    return str(words)


def _stringify(value: Any, lang: str = "en") -> str:
    if _is_words(value) or (isinstance(value, list | tuple) and any(map(_is_words, value))):
        return words_text(value, lang)
    if lang != "en":
        from fallback_doctor.core.evidence_words import parameter_value

        if isinstance(value, list | tuple | set | frozenset):
            return ", ".join(parameter_value(str(item), lang) for item in value)
        return parameter_value(str(value), lang)
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(item) for item in value)
    return str(value)


def make_finding(
    finding_id: str,
    cause: str,
    layer: Layer,
    severity: Severity,
    *,
    params: dict[str, Any] | None = None,
    evidence: tuple[Evidence, ...] = (),
    commands: tuple[str, ...] = (),
    verify: str | None = None,
    steps: tuple[Step, ...] = (),
) -> Finding:
    """Build a finding whose words come from resources/texts in every language.

    The English text fills title, detail and remediation summary; every language
    (English included) is kept in ``texts`` so a renderer can pick one. How to verify the
    fix by hand comes from the data when it has a "verify" text (in every language), else
    from the check's own ``verify`` (English only). ``steps`` (typed records) give ``commands``
    their shell form when no commands are passed. The id must be declared in core/findings/
    with this cause, layer and severity (UndeclaredFindingError otherwise).
    """
    from fallback_doctor.core.findings.registry import check_declared
    from fallback_doctor.core.model import Finding, Remediation, step_shell

    check_declared(finding_id, cause, layer, severity)
    values = dict(params or {})
    texts = {lang: render_text(finding_id, lang, values) for lang in LANGUAGES}
    english = texts["en"]
    verify = english.get("verify") or verify
    remediation = None
    if steps and not commands:
        commands = tuple(shell for shell in map(step_shell, steps) if shell)
    if english["fix"] or commands or verify or steps:
        remediation = Remediation(summary=english["fix"], commands=commands, verify=verify, steps=steps)
    return Finding(
        id=finding_id,
        cause=cause,
        layer=layer,
        severity=severity,
        title=english["title"],
        detail=english["detail"],
        evidence=evidence,
        remediation=remediation,
        texts=texts,
    )
