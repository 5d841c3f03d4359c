"""The log signature base: data in resources/signatures/*.json, loaded and matched here.

Each file holds ``signatures`` (and optionally ``tables``, ``libraries``, ``families``,
``causes``: per cause the label keys of its title, explanation and fix, in
resources/texts/<lang>/labels/log_causes.json). A signature is::

    {"id": "cuda.failure_code",
     "kind": "direct | missing_library | library_version | win_loader | lookup | requirement
              | context | fallback | hidden | benign | startup",
     "pattern": "CUDA failure (?P<code>\\d{1,4})",     # Python regex, matched case-insensitively
     "keywords": ["cuda failure"],                      # cheap prefilter: one must occur (lower case)
     "candidates": [{"cause": "driver_too_old", "weight": 0.9}],   # kind direct
     "lookup": {"field": "code", "table": "cuda_codes"},         # kind lookup
     "fact": "container",                               # kind context / hidden: what it shows
     "generic": false,                                  # only counts when nothing specific is found
     "innermost": false,                                # names the file the loader could not open
     "says": "log_says.cuda.failure_code",              # what the line means, for people: a label
                                                        # of the catalogues (<lang>/labels/log_says.json)
     "example": {"line": "...", "source": "https://github.com/..."},
     "origin": {"project": "microsoft/onnxruntime",            # who prints the message
                "file": "onnxruntime/python/onnxruntime_pybind_state.cc",
                "releases": "1.11-current",                     # first-last release, or current
                "evidence": "git log -S ... / the tag it first appears in"}}

``origin`` is checked here when present; the message catalogue's conformance test
requires it of every entry (tests/core/logs/test_message_catalogue.py).

Patterns are written without nested unbounded quantifiers, and lines are cut to
``MATCH_CHARS`` before matching (head and tail kept), so no input line can make a pattern slow.

By hand: ``grep -nE 'Failed to load library|LoadLibrary failed|CUDA failure' app.log``.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from typing import Any

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.platform.resource_files import RESOURCES
from fallback_doctor.core.readers.logs.search import Finder

MATCH_CHARS = 4096
"""Longest part of a line a pattern sees: the first and last half of this are kept."""

KINDS = frozenset(
    {
        "direct",
        "missing_library",
        "library_version",
        "win_loader",
        "lookup",
        "requirement",
        "context",
        "fallback",
        "hidden",
        "benign",
        "startup",
    }
)


_KEPT_BY_BENIGN = frozenset({"benign", "context", "hidden", "startup"})


@dataclass(frozen=True)
class Weighted:
    """A candidate cause with the weight one line gives it (0..1)."""

    cause: str
    weight: float


@dataclass(frozen=True)
class Signature:
    """One pattern of the base and what a match means."""

    id: str
    kind: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    candidates: tuple[Weighted, ...] = ()
    lookup: dict[str, str] = field(default_factory=dict)
    fact: str | None = None
    generic: bool = False
    innermost: bool = False
    """The line's own missing file (``X: cannot open shared object file``): a library that
    reports it as its error on the same line is its dependent, not the missing one."""
    says: str = ""
    """The label key of what the line means (its words are in the catalogues)."""
    example: dict[str, str] = field(default_factory=dict)
    file: str = ""
    origin: dict[str, str] = field(default_factory=dict)
    """Who prints the message: project, file, release range (see ``check_origin``)."""


RELEASES = re.compile(r"^(?P<first>\d{1,4}(?:\.\d{1,4}){0,2})-(?P<last>\d{1,4}(?:\.\d{1,4}){0,2}|current)$")
"""A release range: ``1.11-1.20`` or ``1.17-current``."""

ORIGIN_FIELDS = ("project", "file", "releases")


def _release_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def check_origin(origin: dict[str, str], where: str) -> None:
    """Raise ``SignatureError`` unless ``origin`` names a project, a file and a release range."""
    for name in ORIGIN_FIELDS:
        if not str(origin.get(name, "")).strip():
            raise SignatureError(f"{where}: origin has no {name}")
    found = RELEASES.match(origin["releases"])
    if found is None:
        raise SignatureError(
            f"{where}: origin releases {origin['releases']!r} is not FIRST-LAST or FIRST-current"
        )
    last = found.group("last")
    if last != "current" and _release_key(last) < _release_key(found.group("first")):
        raise SignatureError(f"{where}: origin releases {origin['releases']!r} ends before it starts")


@dataclass(frozen=True)
class LibraryRule:
    """How a library file name maps to a family (cuda, cudnn, tensorrt, driver, ...)."""

    pattern: re.Pattern[str]
    family: str
    component: str
    source: str = ""


@dataclass(frozen=True)
class Family:
    """What a missing library of a family means: its causes and its current major."""

    name: str
    missing: str
    mismatch: str
    current_major: int | None
    also: tuple[Weighted, ...] = ()


@dataclass(frozen=True)
class SignatureBase:
    """Everything loaded from resources/signatures/."""

    signatures: tuple[Signature, ...]
    tables: dict[str, dict[str, Any]]
    libraries: tuple[LibraryRule, ...]
    families: dict[str, Family]
    component_majors: dict[str, dict[str, int]]
    causes: dict[str, dict[str, str]]
    """Per cause the label keys of its words: ``{"title": "log_cause.<cause>.title", ...}``."""
    prefilter: re.Pattern[str]
    """Any keyword (for callers that want one regex; matching uses ``keyword_index``)."""
    keyword_index: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Each keyword with the indexes of the signatures that name it."""
    startup_words: tuple[str, ...] = ()

    def by_kind(self, kind: str) -> tuple[Signature, ...]:
        """The signatures of one kind, in file order."""
        return tuple(sig for sig in self.signatures if sig.kind == kind)


class SignatureError(ValueError):
    """The signature data is malformed (caught by the tests, never by users)."""


def _weighted(items: list[dict[str, Any]], where: str) -> tuple[Weighted, ...]:
    result = []
    for item in items:
        cause = str(item["cause"])
        try:
            Cause(cause)
        except ValueError as error:
            raise SignatureError(f"{where}: unknown cause code {cause!r}") from error
        weight = float(item["weight"])
        if not 0.0 < weight <= 1.0:
            raise SignatureError(f"{where}: weight {weight} outside (0, 1]")
        result.append(Weighted(cause, weight))
    return tuple(result)


def _signature(raw: dict[str, Any], file: str) -> Signature:
    sig_id = str(raw.get("id", "?"))
    where = f"{file}:{sig_id}"
    kind = str(raw.get("kind", ""))
    if kind not in KINDS:
        raise SignatureError(f"{where}: unknown kind {kind!r}")
    try:
        pattern = re.compile(str(raw["pattern"]), re.IGNORECASE)
    except (KeyError, re.error) as error:
        raise SignatureError(f"{where}: bad pattern: {error}") from error
    keywords = tuple(str(word).lower() for word in raw.get("keywords", ()))
    if not keywords:
        raise SignatureError(f"{where}: needs at least one keyword (prefilter)")
    origin = {str(k): str(v) for k, v in dict(raw.get("origin", {})).items()}
    if origin:
        check_origin(origin, where)
    return Signature(
        id=sig_id,
        kind=kind,
        pattern=pattern,
        keywords=keywords,
        candidates=_weighted(list(raw.get("candidates", ())), where),
        lookup={str(k): str(v) for k, v in dict(raw.get("lookup", {})).items()},
        fact=raw.get("fact"),
        generic=bool(raw.get("generic", False)),
        innermost=bool(raw.get("innermost", False)),
        says=str(raw.get("says") or ""),
        example={str(k): str(v) for k, v in dict(raw.get("example", {})).items()},
        file=file,
        origin=origin,
    )


def _read_all() -> list[tuple[str, dict[str, Any]]]:
    folder = RESOURCES.joinpath("signatures")
    documents = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".json"):
            documents.append((entry.name, json.loads(entry.read_text(encoding="utf-8"))))
    return documents


@cache
def load_signatures() -> SignatureBase:
    """Load and check every file of resources/signatures/ (cached)."""
    signatures: list[Signature] = []
    tables: dict[str, dict[str, object]] = {}
    libraries: list[LibraryRule] = []
    families: dict[str, Family] = {}
    component_majors: dict[str, dict[str, int]] = {}
    causes: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for name, document in _read_all():
        for raw in document.get("signatures", ()):
            sig = _signature(raw, name)
            if sig.id in seen:
                raise SignatureError(f"{name}: signature id {sig.id!r} defined twice")
            seen.add(sig.id)
            signatures.append(sig)
        for table_name, table in dict(document.get("tables", {})).items():
            tables[str(table_name)] = dict(table)
        for raw in document.get("libraries", ()):
            libraries.append(
                LibraryRule(
                    pattern=re.compile(str(raw["pattern"]), re.IGNORECASE),
                    family=str(raw["family"]),
                    component=str(raw.get("component", raw["family"])),
                    source=str(raw.get("source", "")),
                )
            )
        for family_name, raw in dict(document.get("families", {})).items():
            if family_name.startswith("_"):
                continue
            current = raw.get("current_major")
            families[str(family_name)] = Family(
                name=str(family_name),
                missing=str(raw["missing"]),
                mismatch=str(raw.get("mismatch", raw["missing"])),
                current_major=None if current is None else int(current),
                also=_weighted(list(raw.get("also", ())), f"{name}:{family_name}"),
            )
        for component, mapping in dict(document.get("component_cuda_major", {})).items():
            if component.startswith("_"):
                continue
            component_majors[str(component)] = {str(k): int(v) for k, v in mapping.items()}
        for cause, keys in dict(document.get("causes", {})).items():
            if cause.startswith("_"):
                continue
            causes[str(cause)] = {str(part): str(key) for part, key in dict(keys).items()}
    words = sorted({word for sig in signatures for word in sig.keywords}, key=len, reverse=True)
    prefilter = re.compile("|".join(re.escape(word) for word in words) or "(?!)", re.IGNORECASE)
    index: dict[str, list[int]] = {}
    for position, sig in enumerate(signatures):
        for word in sig.keywords:
            index.setdefault(word, []).append(position)
    startup_words = sorted({w for sig in signatures if sig.kind == "startup" for w in sig.keywords})
    return SignatureBase(
        signatures=tuple(signatures),
        tables=tables,
        libraries=tuple(libraries),
        families=families,
        component_majors=component_majors,
        causes=causes,
        prefilter=prefilter,
        keyword_index=tuple((word, tuple(positions)) for word, positions in index.items()),
        startup_words=tuple(startup_words),
    )


# ---------------------------------------------------------------------------------------------
# Matching


@dataclass(frozen=True)
class Match:
    """One signature matched on one line, with the fields it captured."""

    signature: Signature
    fields: dict[str, str]


def matchable(text: str) -> str:
    """The part of a line patterns see: whole when short, else its head and tail."""
    if len(text) <= MATCH_CHARS:
        return text
    half = MATCH_CHARS // 2
    return text[:half] + "\n" + text[-half:]


def match_text(text: str, base: SignatureBase | None = None) -> list[Match]:
    """Every signature that matches one line of text (a benign line yields no failure kinds)."""
    base = base or load_signatures()
    window = matchable(text)
    lowered = window.lower()
    positions: set[int] = set()
    for word, owners in base.keyword_index:
        if word in lowered:
            positions.update(owners)
    found: list[Match] = []
    for position in sorted(positions):
        sig = base.signatures[position]
        hit = sig.pattern.search(window)
        if hit is None:
            continue
        fields = {key: value for key, value in hit.groupdict().items() if value is not None}
        found.append(Match(sig, fields))
    if any(match.signature.kind == "benign" for match in found):
        # A known harmless line: it may still describe the machine, but it is no failure.
        found = [match for match in found if match.signature.kind in _KEPT_BY_BENIGN]
    return found


def match_lines(texts: Sequence[str], base: SignatureBase | None = None) -> list[list[Match]]:
    """``match_text`` for many lines, with one keyword search over all of them.

    The lines' windows are joined and searched once for any keyword (RE2 when ``google-re2``
    is installed); only lines where a keyword occurs are matched further.
    """
    base = base or load_signatures()
    regex = _keyword_regex(base)
    if regex is None or not texts:
        return [match_text(text, base) for text in texts]
    windows = [matchable(text) for text in texts]
    starts: list[int] = []
    position = 0
    for window in windows:
        starts.append(position)
        position += len(window) + 1
    hit_lines = {bisect.bisect_right(starts, hit.start()) - 1 for hit in regex.finditer("\x00".join(windows))}
    return [match_text(text, base) if i in hit_lines else [] for i, text in enumerate(texts)]


def keyword_lines(lines: Sequence[bytes], base: SignatureBase | None = None) -> set[int] | None:
    """Indexes of the byte lines where some signature keyword occurs (None: cannot tell fast).

    One search over all lines at once (core/readers/logs/search.py: hyperscan, else RE2); a line
    without any keyword matches no signature.
    """
    finder = _keyword_finder(base or load_signatures())
    if finder.engine == "find":
        return None
    starts = [end + index for index, end in enumerate(accumulate(map(len, lines), initial=0))]
    return {bisect.bisect_right(starts, at) - 1 for at, _ in finder.hits(b"\x00".join(lines))}


_FINDERS: dict[int, tuple[SignatureBase, Finder]] = {}


def _keyword_finder(base: SignatureBase) -> Finder:
    known = _FINDERS.get(id(base))
    if known is None or known[0] is not base:
        words = sorted({word.lower().encode() for word, _ in base.keyword_index})
        known = (base, Finder(words, 0))
        _FINDERS[id(base)] = known
    return known[1]


_REGEXES: dict[tuple[int, bool], tuple[SignatureBase, Any]] = {}


def _keyword_regex(base: SignatureBase, binary: bool = False) -> Any:
    try:
        import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - declared dependency; match_text stays correct
        return None
    known = _REGEXES.get((id(base), binary))
    if known is None or known[0] is not base:
        words = sorted((word for word, _ in base.keyword_index), key=len, reverse=True)
        pattern = "(?i)" + "|".join(re2.escape(word) for word in words)
        known = (base, re2.compile(pattern.encode() if binary else pattern))
        _REGEXES[(id(base), binary)] = known
    return known[1]


# ---------------------------------------------------------------------------------------------
# Libraries

LOST_PREFIXES = ("c", "cu", "lib", "libc", "libcu", "n", "nv")
"""Prefixes tried on a library name that matches no family (its first letters lost)."""

_SONAME = re.compile(r"\.so\.(\d{1,4})(?:\.(\d{1,4}))?")
_DLL_DIGITS = re.compile(
    r"(?:64|nvinfer|parser|plugin|lean|dispatch)_(\d{1,4})(?:_\d{1,3})?\.dll$", re.IGNORECASE
)


@dataclass(frozen=True)
class LibraryInfo:
    """What a library file name tells: its family, component and majors."""

    name: str
    family: str | None
    component: str | None
    major: int | None
    """The library's own major (soname or DLL suffix)."""
    minor_in_name: bool
    """A pre-CUDA-11 style soname that carries the minor too (``libcublas.so.10.0``)."""
    stack_major: int | None
    """The CUDA major (cuda family) or cuDNN/TensorRT major the name implies."""


def library_major(name: str) -> tuple[int | None, bool]:
    """The major version in a library file name, and whether a minor is in the name too.

    ``libcublasLt.so.11`` -> 11; ``libcudart.so.11.0`` -> 11; ``cudart64_110.dll`` -> 11;
    ``nvrtc64_120_0.dll`` -> 12; ``cudnn64_8.dll`` -> 8; ``nvinfer_10.dll`` -> 10.
    """
    soname = _SONAME.search(name)
    if soname:
        major = int(soname.group(1))
        return major, soname.group(2) is not None
    dll = _DLL_DIGITS.search(name)
    if dll:
        digits = dll.group(1)
        if len(digits) >= 3:
            return int(digits[:2]), True
        value = int(digits)
        if value > 20:  # cudart64_92.dll: CUDA 9.2
            return int(digits[0]), True
        return value, False
    return None, False


def classify_library(name: str, base: SignatureBase | None = None) -> LibraryInfo:
    """Family, component and majors of a library named in a log line."""
    base = base or load_signatures()
    clean = re.split(r"[\\/]", name.strip().strip("'\"").rstrip(".,;:"))[-1]
    major, minor_in_name = library_major(clean)
    for rule in base.libraries:
        if rule.pattern.search(clean):
            stack_major = major
            mapping = base.component_majors.get(rule.component)
            if mapping is not None:
                stack_major = mapping.get(str(major)) if major is not None else None
            if rule.family == "cuda" and minor_in_name:
                # From CUDA 11 on, a minor in the soname (libcudart.so.11.0, libnvrtc.so.11.2)
                # is fixed for the whole major; before it, it pinned the minor release.
                minor_in_name = major is not None and major < 11
            return LibraryInfo(clean, rule.family, rule.component, major, minor_in_name, stack_major)
    if major is not None and clean[:1].isalpha():
        # A console code page can eat the first letters of a message, and with them the
        # library name's (``ublasLt64_12.dll``): try the few prefixes the families start with.
        for prefix in LOST_PREFIXES:
            for rule in base.libraries:
                if rule.family in ("cuda", "cudnn", "tensorrt") and rule.pattern.search(prefix + clean):
                    return classify_library(prefix + clean, base)
    return LibraryInfo(clean, None, None, major, minor_in_name, None)
