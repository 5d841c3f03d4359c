"""Every template of the evidence catalog (resources/texts/evidence/words.json) is usable.

CI once failed on a template that named one field twice ("CUDA {major}.x … cudnn9-cuda-{major}"):
the pattern built from it did not compile, and every Korean report that looked up a manual step
crashed. Each template must compile, match its own English filled with sample values, and give the
Korean text with those values in it.
"""

from __future__ import annotations

import json
import string
from importlib import resources
from typing import Any

import pytest
from fallback_doctor.core import evidence_words


def _catalog() -> dict[str, Any]:
    folder = resources.files("fallback_doctor.resources").joinpath("texts").joinpath("evidence")
    data: dict[str, Any] = json.loads(folder.joinpath("words.json").read_text(encoding="utf-8"))
    return data


_TEMPLATES = [
    (kind, entry) for kind, entries in _catalog().items() if isinstance(entries, list) for entry in entries
]


@pytest.mark.parametrize(("kind", "entry"), _TEMPLATES, ids=[f"{k}:{e['en'][:40]}" for k, e in _TEMPLATES])
def test_template_matches_its_own_english_and_gives_korean(kind: str, entry: dict[str, str]) -> None:
    fields = {f for _lit, f, _spec, _conv in string.Formatter().parse(entry["en"]) if f}
    sample = {field: f"SAMPLE{number}" for number, field in enumerate(sorted(fields))}
    english = entry["en"].format(**sample)
    korean = evidence_words._by_pattern(kind, english, "ko")
    assert korean != english or not entry.get("ko"), entry
    for value in sample.values():
        assert value in korean, (entry, korean)


def test_a_field_named_twice_must_hold_the_same_text() -> None:
    pattern = evidence_words._regex("CUDA {major}.x and cuda-{major}")
    assert pattern.match("CUDA 12.x and cuda-12") is not None
    assert pattern.match("CUDA 12.x and cuda-13") is None


def test_manual_step_in_korean_with_a_repeated_field() -> None:
    text = (
        "Or install the CUDA 12.x toolkit's runtime libraries and cuDNN for CUDA 12 from NVIDIA's repository "
        "(cuDNN 9: apt-get install cudnn9-cuda-12); the system's loader then finds them."
    )
    korean = evidence_words.manual_text(text, "ko")
    assert "cudnn9-cuda-12" in korean and "저장소" in korean
