"""The text catalogues, one per language, loaded from resources/texts/<lang>/ (data, not code).

Each language is a folder (its name the language's code) with two kinds of entries, one loader each:

- finding texts, ``<lang>/findings/*.json`` (:func:`load_texts`, :func:`render_text`,
  :func:`make_finding`): ``{"driver.missing": {"title": "...", "detail": "... {library} ...",
  "fix": "...", "verify": "..."}}``; the English entry also carries the ``source`` of its facts;
- labels, ``<lang>/labels/*.json`` (:func:`load_labels`, :func:`label`): ``{"key": "words"}``, the
  words of the wizard (``ui.json``), of the text report, report.html and the verdicts
  (``report.json``); keys starting with "_" are notes. ``language.name`` is the language's own name.

The languages are the folders (:data:`LANGUAGES`, :func:`languages`): a translator adds one by
adding a folder, in resources/texts/ or in a folder named by the environment variable
``FALLBACK_DOCTOR_CATALOGUES`` (several joined by ``os.pathsep``), and no code. A key a language
lacks is shown in English. Templates use str.format fields filled from the check's parameters; a
language's grammar may need more than that: its folder's ``grammar.json`` names a hook
(``{"fill": "korean-particles"}``: a Korean particle after a field is a spec, ``{library:이/가}``,
chosen by how the value is read, core/language/particles.py with ``ko/readings.json``). A parameter that is
words is given as catalogue words (``Words``: an id of ``<lang>/labels/evidence_*.json`` and its own
parameters), rendered in each language by :func:`words_text`; names, paths and a system's own
messages stay as written, and so does any other text (never read back from English).
"""

from __future__ import annotations

import json
import locale
import os
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from fallback_doctor.core.platform.resource_files import RESOURCES

if TYPE_CHECKING:  # imported where a finding is made: the wizard's first page needs only labels
    from fallback_doctor.core.model.result import Commented, Evidence, Finding, Layer, Severity, Step

CATALOGUES_VARIABLE = "FALLBACK_DOCTOR_CATALOGUES"
"""Extra catalogue roots (each holds <lang>/findings and <lang>/labels), joined by os.pathsep."""

ENGLISH = "en"


def catalogue_roots() -> tuple[Path, ...]:
    """resources/texts, then every folder named in FALLBACK_DOCTOR_CATALOGUES (later ones win)."""
    extra = os.environ.get(CATALOGUES_VARIABLE, "")
    return (RESOURCES / "texts", *(Path(part) for part in extra.split(os.pathsep) if part))


@cache
def _languages(roots: tuple[Path, ...]) -> tuple[str, ...]:
    found: set[str] = set()
    for root in roots:
        if root.is_dir():
            found.update(
                entry.name
                for entry in root.iterdir()
                if (entry / "labels").is_dir() or (entry / "findings").is_dir()
            )
    return (ENGLISH, *sorted(found - {ENGLISH}))


def languages() -> tuple[str, ...]:
    """Every language with a catalogue folder, English first (``ls resources/texts``)."""
    return _languages(catalogue_roots())


class _Languages(Sequence[str]):
    """The catalogue languages, read when used (a catalogue root added later is seen)."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return languages()[index]

    def __len__(self) -> int:
        return len(languages())

    def __iter__(self) -> Iterator[str]:
        return iter(languages())

    def __contains__(self, value: object) -> bool:
        return value in languages()

    def __eq__(self, other: object) -> bool:
        return languages() == (tuple(other) if isinstance(other, Sequence) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(languages())


LANGUAGES: Sequence[str] = _Languages()
"""The catalogue languages (``--lang`` choices, the wizard's menu): :func:`languages`, read when used."""


def system_language() -> str:
    """The locale's language (LC_ALL, LC_MESSAGES, LANG, then the C library's) if catalogued, else "en"."""
    current = ""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        current = os.environ.get(variable) or ""
        if current:
            break
    if not current:
        try:
            current = locale.getlocale()[0] or ""
        except ValueError:
            current = ""
    code = current.split("_")[0].split(".")[0].lower()
    return code if code in languages() else ENGLISH


class _Defaulting(dict[str, Any]):
    """A format mapping that leaves unknown fields visible instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _json_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@cache
def _catalogue(roots: tuple[Path, ...], lang: str, kind: str) -> dict[str, Any]:
    """One language's entries of one kind ("findings" or "labels"), merged over the roots."""
    merged: dict[str, Any] = {}
    for root in roots:
        seen: set[str] = set()
        for entry in _json_files(root / lang / kind):
            data = json.loads(entry.read_text(encoding="utf-8"))
            for key, value in data.items():
                if key.startswith("_"):
                    continue
                if key in seen:
                    raise ValueError(f"{kind[:-1]} {key!r} is defined twice in {lang} (in {entry.name})")
                seen.add(key)
                merged[key] = value
    return merged


def catalogue(lang: str, kind: str) -> dict[str, Any]:
    """The entries of ``lang``'s catalogue of one kind: "findings" (title, detail …) or "labels"."""
    return _catalogue(catalogue_roots(), lang, kind)


@cache
def _load_texts(roots: tuple[Path, ...]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for lang in _languages(roots):
        for key, words in _catalogue(roots, lang, "findings").items():
            entry = merged.setdefault(key, {})
            words = dict(words)
            if "source" in words:
                entry["source"] = words.pop("source")
            entry[lang] = words
    return merged


def load_texts() -> dict[str, dict[str, Any]]:
    """Every finding text, ``{id: {lang: {title, detail, fix, verify}, "source": ...}}``, all languages."""
    return _load_texts(catalogue_roots())


@cache
def _load_labels(roots: tuple[Path, ...]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for lang in _languages(roots):
        for key, words in _catalogue(roots, lang, "labels").items():
            merged.setdefault(key, {})[lang] = str(words)
    return merged


def load_labels() -> dict[str, dict[str, str]]:
    """Every label, ``{key: {lang: words}}``, over every language's labels/*.json."""
    return _load_labels(catalogue_roots())


# -- grammar hooks ---------------------------------------------------------------------------------

_PLAIN = string.Formatter()


def plain_fill(template: str, mapping: Mapping[str, Any]) -> str:
    """``template.format_map(mapping)``, without a second full stop after a value that ends in one."""
    written = ""
    for literal, field, spec, conversion in _PLAIN.parse(template):
        if literal.startswith(".") and not literal.startswith("..") and written.endswith("."):
            literal = literal[1:]
        written += literal
        if field is None:
            continue
        value, _ = _PLAIN.get_field(field, (), mapping)
        written += _PLAIN.format_field(_PLAIN.convert_field(value, conversion), spec or "")
    return written


def _korean_particles(template: str, mapping: Mapping[str, Any]) -> str:
    from fallback_doctor.core.language.particles import fill

    return fill(template, mapping)


GRAMMAR_HOOKS: dict[str, Callable[[str, Mapping[str, Any]], str]] = {"korean-particles": _korean_particles}
"""The fills a catalogue's grammar.json may name (``{"fill": "korean-particles"}``)."""


@cache
def _grammar(roots: tuple[Path, ...], lang: str) -> Callable[[str, Mapping[str, Any]], str]:
    for root in reversed(roots):
        path = root / lang / "grammar.json"
        if path.is_file():
            hook = str(json.loads(path.read_text(encoding="utf-8")).get("fill", ""))
            if hook not in GRAMMAR_HOOKS:
                raise ValueError(f"{path}: no grammar hook {hook!r} (known: {sorted(GRAMMAR_HOOKS)})")
            return GRAMMAR_HOOKS[hook]
    return plain_fill


def fill_in(template: str, mapping: Mapping[str, Any], lang: str) -> str:
    """A template of ``lang`` filled: str.format_map with the language's grammar hook, if it has one."""
    return _grammar(catalogue_roots(), lang)(template, mapping)


def has_label(key: str) -> bool:
    """Whether the catalog has the label ``key``."""
    return key in load_labels()


def label(key: str, lang: str = "en", /, **params: Any) -> str:
    """The label ``key`` in ``lang`` (English where that language lacks it), ``params`` filled in."""
    entry = load_labels()[key]
    text = entry.get(lang) or entry[ENGLISH]
    return fill_in(text, params, lang if lang in entry else ENGLISH) if params else text


def render_text(finding_id: str, lang: str, params: dict[str, Any]) -> dict[str, str]:
    """The title, detail, fix (and "verify", where the data has it) of a finding in one language."""
    entry = load_texts().get(finding_id)
    if entry is None:
        raise KeyError(f"no texts for finding {finding_id!r} in resources/texts/en/findings/")
    if lang not in entry:
        lang = ENGLISH
    texts = entry[lang]
    mapping = _Defaulting({key: _stringify(value, lang) for key, value in params.items()})
    rendered = {part: fill_in(str(texts.get(part, "")), mapping, lang) for part in ("title", "detail", "fix")}
    if texts.get("verify"):
        rendered["verify"] = fill_in(str(texts["verify"]), mapping, lang)
    return rendered


def text_ref(key: str, params: Mapping[str, Any] | None = None, part: str = "detail") -> dict[str, Any]:
    """A text by key (a part of a finding text), to be put in ``lang`` where it is shown: a
    finding's note, or a parameter that is another finding's words (its title) or one of its
    other phrases (``part``: any entry of the text, as log.cause's ``title_named``)."""
    return {"key": key, "params": jsonable_params(params or {}), "part": part}


def jsonable_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A finding's parameters as the document keeps them (lists for collections, text for objects)."""
    kept: dict[str, Any] = {}
    for name, value in params.items():
        if _is_words(value):
            kept[str(name)] = _jsonable_words(value)
        elif isinstance(value, list | tuple | set | frozenset):
            kept[str(name)] = [
                _jsonable_words(item)
                if _is_words(item)
                else item
                if isinstance(item, str | int | float)
                else str(item)
                for item in value
            ]
        elif isinstance(value, dict) or value is None or isinstance(value, str | int | float | bool):
            kept[str(name)] = value
        else:
            kept[str(name)] = str(value)
    return kept


def label_ref(key: str, **params: Any) -> dict[str, Any]:
    """A label by key as a finding's parameter (a stage, a state), put in ``lang`` where it is shown."""
    return {"key": key, "params": jsonable_params(params), "part": "label"}


def _part(ref: Mapping[str, Any], lang: str) -> str:
    if ref.get("part") == "label":
        params = ref.get("params")
        key = str(ref.get("key"))
        if not has_label(key):
            return ""
        try:
            return label(key, lang, **(dict(params) if isinstance(params, Mapping) else {}))
        except (KeyError, ValueError, IndexError, AttributeError):  # a document's parameters that do not fit
            return label(key, lang)
    key, part = str(ref.get("key")), str(ref.get("part") or "detail")
    entry = load_texts().get(key)
    if entry is None:
        return ""  # a key this version does not know (a document of a later one)
    params = ref.get("params")
    params = dict(params) if isinstance(params, Mapping) else {}
    if part in ("title", "detail", "fix", "verify"):
        return render_text(key, lang, params).get(part, "")
    # another phrase of the text (log.cause's wordings): in ``lang`` where it has it
    chosen = lang if str((entry.get(lang) or {}).get(part) or "") else ENGLISH
    mapping = _Defaulting({name: _stringify(value, chosen) for name, value in params.items()})
    return fill_in(str((entry.get(chosen) or {}).get(part) or ""), mapping, chosen)


def finding_words(finding: Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail, fix and verify in ``lang``, chosen now (the one helper every
    renderer uses): from its ``text`` key and parameters, else (a document of a previous version,
    a finding with words per language) its ``texts``, English where ``lang`` is missing."""
    text = finding.get("text")
    chosen: dict[str, str] = {}
    if isinstance(text, Mapping) and str(text.get("key")) in load_texts():
        chosen = _part_words(text, lang)
    else:
        texts = finding.get("texts")
        texts = texts if isinstance(texts, Mapping) else {}
        picked = texts.get(lang) or texts.get(ENGLISH) or {}
        chosen = {str(k): str(v) for k, v in picked.items()} if isinstance(picked, Mapping) else {}
    remediation = finding.get("remediation")
    remediation = remediation if isinstance(remediation, Mapping) else {}
    return {
        "title": chosen.get("title") or str(finding.get("title") or ""),
        "detail": chosen.get("detail") or str(finding.get("detail") or ""),
        "fix": chosen.get("fix") or str(remediation.get("summary") or ""),
        "verify": chosen.get("verify") or str(remediation.get("verify") or ""),
    }


def words_of(finding: Finding, lang: str) -> dict[str, str]:
    """:func:`finding_words` of a finding not yet in a document (a check's, the judge's)."""
    remediation = finding.remediation
    return finding_words(
        {
            "text": finding.text,
            "texts": finding.texts,
            "title": finding.title,
            "detail": finding.detail,
            "remediation": {"summary": remediation.summary, "verify": remediation.verify}
            if remediation
            else {},
        },
        lang,
    )


def _part_words(text: Mapping[str, Any], lang: str) -> dict[str, str]:
    """render_text of a ``text`` record, with its appended notes (core/judgement/judge.py) in ``lang``."""
    params = text.get("params")
    words = render_text(str(text["key"]), lang, dict(params) if isinstance(params, Mapping) else {})
    append = text.get("append")
    for part, notes in (append if isinstance(append, Mapping) else {}).items():
        own = words.get(str(part), "")
        refs = [ref for ref in notes if isinstance(ref, Mapping)] if isinstance(notes, list) else []
        added = [note for note in (_part(ref, lang) for ref in refs) if note]
        words[str(part)] = " ".join([own, *(note for note in added if note not in own)]).strip()
    return words


def _is_words(value: Any) -> bool:
    """Whether ``value`` is catalogue words: a ``Words`` or its document form ``{id, params}``."""
    return (isinstance(value, dict) and "id" in value and "params" in value) or (
        hasattr(value, "id") and hasattr(value, "params")
    )


def _jsonable_words(words: Any) -> dict[str, Any]:
    """Catalogue words as the document keeps them: ``{"id": ..., "params": {...}}``."""
    if isinstance(words, dict):
        return {"id": str(words["id"]), "params": jsonable_params(words.get("params") or {})}
    return {"id": str(words.id), "params": jsonable_params(words.params or {})}


def words_text(words: Any, lang: str = "en") -> str:
    """A parameter in ``lang``: catalogue words (``Words`` or its document form ``{id, params}``)
    rendered with their own parameters, a list item by item, a text given in every language
    (``{"en": ..., "ko": ...}``) in ``lang``, data as written."""
    if not isinstance(words, dict) and _is_words(words):
        return words_text({"id": words.id, "params": words.params}, lang)
    if _is_words(words):
        params = words.get("params")
        params = params if isinstance(params, dict) else {}
        if not has_label(str(words["id"])):  # a document of a later version, or made up
            return str(words["id"])
        try:
            return label(str(words["id"]), lang, **{str(k): words_text(v, lang) for k, v in params.items()})
        except (KeyError, IndexError, ValueError, AttributeError, TypeError):  # fields that do not fit
            return str(words["id"])
    if isinstance(words, list | tuple):
        return ", ".join(words_text(item, lang) for item in words)
    if isinstance(words, dict):  # given in every language (a table's bilingual text)
        return str(words.get(lang) or words.get("en") or "")
    return str(words)


def _stringify(value: Any, lang: str = "en") -> str:
    if _is_words(value) or (isinstance(value, list | tuple) and any(map(_is_words, value))):
        return words_text(value, lang)
    if isinstance(value, Mapping) and "key" in value:
        return _part(value, lang)  # another text by key (a finding's title), in the same language
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(item) for item in value)
    return str(value)


def _command_lines(commands: tuple[str | Commented, ...]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The commands in English (as the document keeps them) and the words of each one's comment."""
    lines = tuple(
        command
        if isinstance(command, str)
        else f"{command.command}{command.gap}# {words_text(command.comment)}"
        for command in commands
    )
    return lines, tuple(None if isinstance(command, str) else command.comment for command in commands)


def commented_line(line: str, comment: Any, lang: str) -> str:
    """A command line of the document in ``lang``: its comment's words (``{id, params}``, written
    by :func:`make_finding` after the English command) put in ``lang``; a line without them as is."""
    if not _is_words(comment) or lang == ENGLISH:
        return line
    english = "# " + words_text(comment)
    if not line.endswith(english):
        return line
    return line[: len(line) - len(english)] + "# " + words_text(comment, lang)


def make_finding(
    finding_id: str,
    cause: str,
    layer: Layer,
    severity: Severity,
    *,
    params: dict[str, Any] | None = None,
    evidence: tuple[Evidence, ...] = (),
    commands: tuple[str | Commented, ...] = (),
    verify: str | None = None,
    steps: tuple[Step, ...] = (),
) -> Finding:
    """Build a finding whose words are a key (its id) and ``params``, put in a language where shown.

    The English text fills title, detail and remediation summary (for machine readers of the
    document); a renderer picks its language with :func:`finding_words`, so no language's words
    are fixed here. How to verify the fix by hand comes from the data when it has a "verify"
    text (in every language), else
    from the check's own ``verify`` (English only). ``steps`` (typed records) give ``commands``
    their shell form when no commands are passed. The id must be declared with this cause, layer
    and severity in the module that makes it (``FINDINGS``): the judge refuses the finding otherwise
    (core/judgement/registry.py, UndeclaredFindingError).
    """
    from fallback_doctor.core.model.result import Finding, Remediation, step_shell

    values = dict(params or {})
    english = render_text(finding_id, ENGLISH, values)
    verify = english.get("verify") or verify
    remediation = None
    if steps and not commands:
        commands = tuple(shell for shell in map(step_shell, steps) if shell)
    lines, comments = _command_lines(commands)
    if english["fix"] or commands or verify or steps:
        remediation = Remediation(english["fix"], lines, verify, steps, comments if any(comments) else ())
    return Finding(
        text={"key": finding_id, "params": jsonable_params(values)},
        id=finding_id,
        cause=cause,
        layer=layer,
        severity=severity,
        title=english["title"],
        detail=english["detail"],
        evidence=evidence,
        remediation=remediation,
    )
