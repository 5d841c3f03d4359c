"""The tool's own vocabulary: words a pseudonym must never replace where they stand as bare words.

An identity that is spelled like an ordinary word (a host named ``gpu``, the Jetson user
``nvidia``) is replaced where a detector finds it as a name (``/home/nvidia``, ``host=gpu``), but
not as a bare word elsewhere: that word is in our texts, codes and schema names too. The words:
resources/redaction/words.json, every word of resources/texts and resources/signatures, and the
cause codes' parts.
"""

from __future__ import annotations

import json
import re
from functools import cache

from fallback_doctor.core.platform.resource_files import RESOURCES

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (str(key), *_strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@cache
def common_words() -> frozenset[str]:
    """Every word (lower case) of our texts, signatures, codes and the list of ordinary names."""
    base = RESOURCES
    words: set[str] = set()
    listed = json.loads(base.joinpath("redaction", "words.json").read_text(encoding="utf-8"))
    words.update(word.lower() for word in listed["words"])
    for pattern in ("texts/*/findings/*.json", "signatures/*.json"):
        for entry in sorted(base.glob(pattern)):
            if entry.is_file():
                data = json.loads(entry.read_text(encoding="utf-8"))
                for text in _strings(data):
                    words.update(token.lower() for token in _TOKEN.findall(text))
    from fallback_doctor.core.model.causes import Cause

    for cause in Cause:
        words.update(part for part in cause.value.split("_") if part)
    return frozenset(words)


def is_common_word(value: str) -> bool:
    """Whether ``value`` (a learned user or host name) is one of our words (case ignored)."""
    return value.lower() in common_words()


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def is_our_identifier(value: str) -> bool:
    """Whether ``value`` is a name of ours, not a secret: a configuration key, a signature or
    finding id (``licenseFile``, ``ort.ep_not_enabled_in_build``) whose every word is one of our
    words. A value under a secret-looking key that is such a name stays as it is (issue 26: the
    key of a configuration issue, "key": "licenseFile", was masked)."""
    if not _IDENTIFIER.fullmatch(value) or not re.search(r"[._-]|[a-z][A-Z]", value):
        return False
    words = [part.lower() for part in _PARTS.findall(value) if not part.isdigit()]
    return bool(words) and all(word in common_words() for word in words)
