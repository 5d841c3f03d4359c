"""Every template of the evidence catalog (resources/texts/evidence/words.json) is usable.

CI once failed on a template that named one field twice ("CUDA {major}.x … cudnn9-cuda-{major}"):
the pattern built from it did not compile, and every Korean report that looked up a manual step
crashed. Each template must compile, match its own English filled with sample values, and give the
Korean text with those values in it.
"""

from __future__ import annotations

import json
import re
import string
from importlib import resources
from typing import Any

import pytest
from fallback_doctor.core.language import evidence_words
from hypothesis import given, settings
from hypothesis import strategies as st


def _catalog() -> dict[str, Any]:
    folder = resources.files("fallback_doctor.resources").joinpath("texts").joinpath("evidence")
    data: dict[str, Any] = json.loads(folder.joinpath("words.json").read_text(encoding="utf-8"))
    return data


_SAMPLES = {
    "count": "7",
    "provider": "SAMPLEExecutionProvider",
    "device": "GPU",
    "vendor": "SAMPLE 4318",
    "needed": "SAMPLE libfoo.so.1",
    "family": "cuDNN",
    "major": "12",
    "engine": "docker",
    "gpu_providers": "CUDAExecutionProvider",
    "nvml_code": "NVML_ERROR_UNKNOWN",
}
"""Samples for the fields that match only their kind (evidence_words.FIELD_PATTERNS)."""

_TEMPLATES = [
    (kind, entry) for kind, entries in _catalog().items() if isinstance(entries, list) for entry in entries
]


@pytest.mark.parametrize(("kind", "entry"), _TEMPLATES, ids=[f"{k}:{e['en'][:40]}" for k, e in _TEMPLATES])
def test_template_matches_its_own_english_and_gives_korean(kind: str, entry: dict[str, str]) -> None:
    fields = {f for _lit, f, _spec, _conv in string.Formatter().parse(entry["en"]) if f}
    sample = {field: _SAMPLES.get(field, f"SAMPLE{number}") for number, field in enumerate(sorted(fields))}
    english = entry["en"].format(**sample)
    korean = evidence_words._by_pattern(kind, english, "ko")
    assert korean != english or not entry.get("ko"), entry
    for value in sample.values():
        assert value in korean, (entry, korean)


def test_every_typed_field_has_a_sample() -> None:
    assert set(evidence_words.FIELD_PATTERNS) <= set(_SAMPLES)
    for field, sample in _SAMPLES.items():
        assert re.fullmatch(evidence_words.FIELD_PATTERNS[field], sample), field


def test_a_list_is_shown_item_by_item() -> None:
    nodes = "140 on CUDAExecutionProvider, 11 on CPUExecutionProvider"
    assert (
        evidence_words.evidence_value(nodes, "ko")
        == "CUDAExecutionProvider에 140개, CPUExecutionProvider에 11개"
    )
    sentence = "the core files, and the provider libraries beside them"
    assert evidence_words.evidence_value(sentence, "ko") == sentence


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


_FIELD_TEXT = st.text(alphabet="ab ;,()1{}.-:", max_size=12)


@settings(max_examples=300)
@given(st.sampled_from(_TEMPLATES), st.lists(_FIELD_TEXT, min_size=6, max_size=6), st.data())
def test_the_literal_prefilter_never_hides_a_match(
    pair: tuple[str, dict[str, str]], values: list[str], data: st.DataObject
) -> None:
    """A template is compiled only for a text holding its literals: that must never skip a match."""
    template = pair[1]["en"]
    fields = sorted({f for _lit, f, _spec, _conv in string.Formatter().parse(template) if f})
    filled = template.format(**dict(zip(fields, values, strict=False)))
    for text in (filled, data.draw(st.text(max_size=30)), filled[1:], filled + "x"):
        if evidence_words._regex(template).match(text) is not None:
            assert evidence_words._may_match(evidence_words._literals(template), text), (template, text)
