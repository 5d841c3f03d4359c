"""Secret detectors: values of secret-looking keys, private keys, tokens, credentials in URLs.

Each is a :class:`~fallback_doctor.core.redaction.scan.Detector` with the literals its matches
hold. Found: ``key=value``, ``key: value``, ``"key": "value"`` and ``"key": 12345`` (numbers
too), XML and ``--flag value`` forms after a secret-looking name; PEM private keys (also a block
cut in half); bearer and basic tokens; Bareun API keys (``koba-…``); well-known token shapes;
user and password in URLs. By hand: ``grep -nE 'password|token|koba-|BEGIN .*PRIVATE KEY' FILE``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fallback_doctor.core.redaction.detect_keys import (
    COUNT_LIKE,
    IDENTITY,
    NOT_A_VALUE,
    SECRET,
    SECRET_TRIGGERS,
    SERIAL_KEY,
    Raw,
    is_secret_key,
    kind_of_key,
)
from fallback_doctor.core.redaction.scan import Detector, anchored_finditer
from fallback_doctor.core.redaction.words import is_our_identifier

_KEY = r"(?<![\w.\-])[A-Za-z_][\w.\-]{0,80}"
_KV_QUOTED = re.compile(
    # The key may be quoted, also with escaped quotes (``\"password\": 123`` inside a JSON string).
    rf"""(?P<kq>(?:\\?["'])?)(?P<key>{_KEY})(?P=kq)\s*(?:=|:|=>)\s*"""
    r"""(?:\\"(?P<edq>[^"\\\n]*)\\"|"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'"""
    r"""|(?P<num>-?\d[\d.eE+\-]*)(?![\w.]))"""
)
_KV_LINE = re.compile(
    rf"""^[ \t]*(?:export[ \t]+|set[ \t]+)?(?P<key>{_KEY})[ \t]*(?:=|:)[ \t]*"""
    r"""(?P<val>[^\s"'#;][^\n]*?)[ \t]*(?:[#;].*)?$""",
    re.MULTILINE,
)
_KV_INLINE = re.compile(rf"""(?P<key>{_KEY})\s*(?:=|:)\s*(?P<val>[^\s"'<>,;&\\)\]}}]+)""")
_FLAG = re.compile(
    r"""(?<![\w-])--?(?P<key>[A-Za-z][\w-]{0,60})(?:=|[ \t]+)"""
    r"""(?P<val>"[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)"""
)
_XML = re.compile(r"<(?P<key>[A-Za-z_][\w.\-]*)(?:\s[^>]*)?>(?P<val>[^<\n]+)</(?P=key)>")
_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?P<body>.*?)"
    r"(?:-----END (?P=label)-----|\Z)",
    re.DOTALL,
)
_PEM_ORPHAN_END = re.compile(
    r"\A(?P<body>(?:[^\n]*\n)*?)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
)
_BEARER = re.compile(r"(?i)\b(?:bearer|basic|digest|negotiate)\s+(?P<val>[A-Za-z0-9\-._~+/]{6,}=*)")
_BAREUN = re.compile(r"\bkoba-[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]+)*")
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[\w-]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[\w-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://(?P<val>[^\s/@\"'<>]+)@")


def _quoted_hits(text: str, start: int, end: int) -> Iterable[Raw]:
    position = start
    while (match := _KV_QUOTED.search(text, position, end)) is not None:
        key = match.group("key")
        group = next(name for name in ("edq", "dq", "sq", "num") if match.group(name) is not None)
        value = match.group(group)
        position = match.end()
        if SERIAL_KEY.search(key) and value:
            yield match.start(group), match.end(group), "serial", IDENTITY, value
        elif (
            is_secret_key(key)
            and value.strip().lower() not in NOT_A_VALUE
            and not is_our_identifier(value.strip())
        ):
            if not (group == "num" and COUNT_LIKE.search(key)):
                yield match.start(group), match.end(group), kind_of_key(key), SECRET, None
        elif group in ("dq", "sq", "edq"):
            # A harmless key's quoted value may open the next pair (``A= "password": 123``):
            # search on from its opening quote, so that pair is not swallowed by this one.
            position = match.start(group) - (2 if group == "edq" else 1)


def key_value_hits(
    pattern: re.Pattern[str], text: str, start: int, end: int, depth: int = 0
) -> Iterable[Raw]:
    """Secret values after secret-looking keys; a harmless key's value is searched again.

    ``error: password=hunter2`` matches first as the key ``error`` with the value
    ``password=hunter2``: the secret sits inside that value, so it is scanned in turn.
    """
    for match in pattern.finditer(text, start, end):
        key = match.group("key")
        value = match.group("val")
        if not is_secret_key(key) or SERIAL_KEY.search(key):
            if depth < 4 and ("=" in value or ":" in value):
                yield from key_value_hits(_KV_INLINE, text, match.start("val"), match.end("val"), depth + 1)
            continue
        begin, finish = match.start("val"), match.end("val")
        if _prose(text, value, finish, end):
            continue
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
            begin, finish, value = begin + 1, finish - 1, value[1:-1]
        if value.strip().lower() in NOT_A_VALUE or value.startswith(("{", "[")):
            continue
        yield begin, finish, kind_of_key(key), SECRET, None


def _prose(text: str, value: str, finish: int, end: int) -> bool:
    """Whether the value is an ordinary word that a sentence goes on after ("Register the API key:
    run the server binary"): a word of our vocabulary is never a secret (issue 26)."""
    from fallback_doctor.core.redaction.words import is_common_word

    if not value.isalpha() or not is_common_word(value):
        return False
    return finish + 1 < end and text[finish] == " " and text[finish + 1].isalpha()


def _key_values(text: str, start: int, end: int) -> Iterable[Raw]:
    yield from _quoted_hits(text, start, end)
    for pattern in (_KV_LINE, _KV_INLINE, _FLAG, _XML):
        yield from key_value_hits(pattern, text, start, end)


def _pem(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in _PEM.finditer(text, start, end):
        if match.group("body").strip():
            yield match.start("body"), match.end("body"), "private-key", SECRET, None
    orphan = _PEM_ORPHAN_END.search(text, start, end)
    if orphan and "-----BEGIN" not in orphan.group(0) and orphan.group("body").strip():
        yield orphan.start("body"), orphan.end("body"), "private-key", SECRET, None


def _group(
    pattern: re.Pattern[str], kind: str, group: str | int = 0, anchor: tuple[str, int] | None = None
) -> Detector:
    """A detector of ``pattern``'s ``group``; ``anchor``: as in :func:`scan.anchored_finditer`."""

    def find(text: str, start: int, end: int) -> Iterable[Raw]:
        matches = (
            pattern.finditer(text, start, end)
            if anchor is None
            else anchored_finditer(pattern, text, start, end, *anchor)
        )
        for match in matches:
            yield match.start(group), match.end(group), kind, SECRET, None

    return Detector(kind, find)


def _with(detector: Detector, literals: tuple[str, ...]) -> Detector:
    return Detector(detector.name, detector.find, literals)


SECRET_DETECTORS: tuple[Detector, ...] = (
    Detector("key-value", _key_values, SECRET_TRIGGERS),
    Detector("private-key", _pem, ("private key",), whole=True),
    _with(_group(_BEARER, "bearer-token", "val"), ("bearer", "basic", "digest", "negotiate")),
    _with(_group(_BAREUN, "bareun-api-key"), ("koba-",)),
    _with(
        _group(_TOKEN_SHAPES, "token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia", "xox", "sk-", "hf_", "glpat-", "eyj"),
    ),
    _with(_group(_URL_USERINFO, "url-credentials", "val", ("://", 16)), ("://",)),
)
"""Every secret detector, with its prefilter."""
