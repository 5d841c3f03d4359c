"""The words of `fleet-summary` and `check`, English and Korean: resources/texts/labels/fleet.json.

Labels, not findings: ``{"key": {"en": "...", "ko": "..."}}`` with str.format fields (keys that
start with "_" are notes), the shape of the label catalog (core.texts.label). When that catalog
reads every file of resources/texts/labels/, :func:`label` can become a call to it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

LABELS_FILE = "fleet.json"


@cache
def load_labels() -> dict[str, dict[str, str]]:
    """Every fleet and watch label (notes left out)."""
    folder = resources.files("fallback_doctor.resources").joinpath("texts").joinpath("labels")
    data = json.loads(folder.joinpath(LABELS_FILE).read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def label(key: str, lang: str = "en", /, **params: Any) -> str:
    """The label ``key`` in ``lang`` (English where that language lacks it), ``params`` filled in."""
    entry = load_labels()[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**params) if params else text
