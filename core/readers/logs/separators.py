"""The words of a log cause: what tells it from the others a message has, its title, explanation
and fix (keys in resources/signatures/separators.json and causes.json, words in the catalogues:
resources/texts/<lang>/labels/log_told_apart.json and log_causes.json).

A log alone often cannot decide ("CUDA driver version is insufficient" is an old driver, or a
container without the driver injected); each candidate says which check settles it, and what
the full ``diagnose`` sees on the machine.
"""

from __future__ import annotations

import json
from functools import cache

from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.core.platform.resource_files import RESOURCES


@cache
def _separators() -> dict[str, str]:
    folder = RESOURCES.joinpath("signatures")
    document = json.loads(folder.joinpath("separators.json").read_text(encoding="utf-8"))
    return {str(cause): str(key) for cause, key in document["separators"].items()}


def separator_key(cause: str) -> str:
    """The label key of the separating check for ``cause``; "" if it has none."""
    key = _separators().get(cause, "")
    return key if key and has_label(key) else ""


def separator(cause: str, lang: str = "en") -> str:
    """The separating check for ``cause`` in ``lang`` (English when missing); "" if none."""
    key = separator_key(cause)
    return label(key, lang) if key else ""


def cause_key(cause: str, part: str) -> str:
    """The label key of a cause's ``part`` (title, explanation or fix); "" where it has none."""
    from fallback_doctor.core.readers.logs.signatures import load_signatures

    key = load_signatures().causes.get(cause, {}).get(part, "")
    return key if key and has_label(key) else ""


def cause_words(cause: str, part: str, lang: str, default: str = "") -> str:
    """A cause's title, explanation or fix in ``lang``; ``default`` where it has none."""
    key = cause_key(cause, part)
    return label(key, lang) if key else default
