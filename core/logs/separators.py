"""What tells one candidate cause from the others a message has (resources/signatures/separators.json).

A log alone often cannot decide ("CUDA driver version is insufficient" is an old driver, or a
container without the driver injected); each candidate says which check settles it, and what
the full ``diagnose`` sees on the machine.
"""

from __future__ import annotations

import json
from functools import cache

from fallback_doctor.core.resource_files import RESOURCES


@cache
def _separators() -> dict[str, dict[str, str]]:
    folder = RESOURCES.joinpath("signatures")
    document = json.loads(folder.joinpath("separators.json").read_text(encoding="utf-8"))
    return {str(cause): dict(texts) for cause, texts in document["separators"].items()}


def separator(cause: str, lang: str = "en") -> str:
    """The separating check for ``cause`` in ``lang`` (English when missing); "" if none."""
    texts = _separators().get(cause, {})
    return str(texts.get(lang) or texts.get("en") or "")
