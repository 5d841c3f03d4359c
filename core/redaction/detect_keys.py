"""What a key, variable, label or flag name says about its value: a secret, a serial, a host, a user …

Shared by the text detectors (``password=…``) and the JSON walk (``{"password": …}``). A name is
split into its words (``licenseKey`` -> license, key; ``ORT_PW`` -> ort, pw), so a short word such
as ``pw`` or ``cred`` counts only as a whole word. By hand: ``grep -niE 'pass|token|key|cred' FILE``.
"""

from __future__ import annotations

import re
from functools import lru_cache

MARKER = "[REDACTED]"

SECRET = "secret"
IDENTITY = "identity"
EXTRA = "extra"

Raw = tuple[int, int, str, str, str | None]
"""(start, end, kind, category, value-for-pseudonym or None for a secret)."""

_SECRET_WORDS = re.compile(
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|(?<![a-z])key(?![a-z])|[a-z]key(?![a-z])"
    r"|(?<![a-z])key[_-]|licen[cs]e|auth|credential|cookie|session[_-]?id|signature|private",
    re.IGNORECASE,
)
_SHORT_SECRET_WORDS = frozenset({"pw", "cred", "creds"})
"""Words that name a secret only on their own (``ORT_PW``, ``BAREUN_CRED``), never inside another word."""
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_NOT_SECRET_KEYS = re.compile(
    r"tokeni[sz]er|keyboard|keyword|author|keys?_?(?:count|len|size)|max_?tokens?|num_?tokens?|monkey|hotkey",
    re.IGNORECASE,
)
COUNT_LIKE = re.compile(r"(?:count|size|len(?:gth)?|max|min|_ms|_s|limit|num|total)$", re.IGNORECASE)
SERIAL_KEY = re.compile(r"serial(?:[ _-]?(?:number|no|num))?$", re.IGNORECASE)
HOST_KEY = re.compile(r"^(?:host(?:_?name)?|server(?:_?name)?|node(?:_?name)?|fqdn|machine_?name)$", re.I)
USER_KEY = re.compile(r"^(?:user(?:_?name)?|login|owner|logname|sudo_user)$", re.IGNORECASE)
UUID_KEY = re.compile(r"uuid$", re.IGNORECASE)

SECRET_TRIGGERS: tuple[str, ...] = (
    "pass",
    "pwd",
    "pw",
    "secret",
    "token",
    "key",
    "licen",
    "auth",
    "cred",
    "cookie",
    "sessionid",
    "session_id",
    "session-id",
    "signature",
    "private",
    "serial",
)
"""Lower-case literals one of which every secret-looking (or serial) name holds: the prefilter."""

NOT_A_VALUE = frozenset(
    {"", "null", "none", "true", "false", "~", MARKER.lower(), "''", '""', "<redacted>", "***"}
)


def name_words(name: str) -> list[str]:
    """``licenseKey`` -> [license, key]; ``ORT_PW`` -> [ort, pw]; ``api-key2`` -> [api, key, 2]."""
    return [word.lower() for word in _WORD.findall(name)]


@lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """Whether a key, variable or label name looks like it holds a secret (password, token, …)."""
    if len(name) > 200:
        return False
    lowered = name.lower()
    if _NOT_SECRET_KEYS.search(lowered):
        return False
    if name_words(name)[-1:] in (["file"], ["path"], ["dir"], ["directory"], ["folder"]):
        return False  # licenseFile, key_path: where a secret is kept, not the secret (one place, no mask)
    if _SECRET_WORDS.search(lowered) is not None:
        return True
    return any(word in _SHORT_SECRET_WORDS for word in name_words(name))


_KINDS = (
    ("pass", "password"),
    ("pwd", "password"),
    ("licen", "license"),
    ("token", "token"),
    ("secret", "secret"),
    ("cred", "credential"),
    ("auth", "auth"),
    ("cookie", "cookie"),
    ("session", "session"),
    ("private", "private-key"),
    ("key", "key"),
)


def kind_of_key(key: str) -> str:
    """The kind of secret a name holds: "password", "license", "token" … ("secret" when unsure)."""
    lowered = key.lower()
    for word, kind in _KINDS:
        if word in lowered:
            return kind
    if "pw" in name_words(key):
        return "password"
    return "secret"
