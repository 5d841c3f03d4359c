"""Every finding text exists in English and Korean, with a source and the same fields."""

from __future__ import annotations

import string

import pytest
from fallback_doctor.core.findings.registry import declared
from fallback_doctor.core.model import Layer, Severity
from fallback_doctor.core.texts import LANGUAGES, load_texts, make_finding

TEXTS = load_texts()


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("finding_id", sorted(TEXTS))
def test_every_text_has_both_languages_and_a_source(finding_id: str) -> None:
    entry = TEXTS[finding_id]
    assert entry.get("source"), f"{finding_id} has no source"
    for lang in LANGUAGES:
        assert lang in entry, f"{finding_id} lacks {lang}"
        for part in ("title", "detail"):
            assert entry[lang].get(part), f"{finding_id}.{lang}.{part} is empty"
    assert bool(entry["en"].get("verify")) == bool(entry["ko"].get("verify")), (
        f"{finding_id}: verify in one language only"
    )
    for part in ("title", "detail", "fix", "verify"):
        english = _fields(entry["en"].get(part, ""))
        korean = _fields(entry["ko"].get(part, ""))
        assert english == korean, f"{finding_id}.{part}: fields differ en={english} ko={korean}"


def test_korean_texts_are_korean() -> None:
    for finding_id, entry in TEXTS.items():
        title = entry["ko"]["title"]
        assert any("\uac00" <= ch <= "\ud7a3" for ch in title), f"{finding_id}: ko title has no Hangul"


def test_verify_comes_from_the_data_in_every_language_when_the_data_has_it() -> None:
    with_verify = [key for key, entry in TEXTS.items() if entry["en"].get("verify")]
    if not with_verify:
        pytest.skip("no finding text carries a verify line yet")
    finding_id = with_verify[0]
    spec = declared()[finding_id]  # a finding is made with its declared cause, layer and severity
    assert spec.cause is not None and spec.layer is not None
    finding = make_finding(finding_id, spec.cause, spec.layer, spec.severities[0], verify="from the code")
    assert finding.texts["ko"]["verify"]
    assert finding.remediation is not None
    assert finding.remediation.verify == finding.texts["en"]["verify"]


def test_make_finding_fills_fields_in_every_language() -> None:
    finding = make_finding(
        "collect.failed",
        "collection_failed",
        Layer.PROBE,
        Severity.WARNING,
        params={"collector": "driver", "reason": "boom"},
    )
    assert "driver" in finding.title
    assert "boom" in finding.texts["ko"]["detail"]
    assert finding.remediation is not None
