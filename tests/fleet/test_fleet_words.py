"""Every word of fleet-summary and check exists in English and Korean with the same fields, and
every label the code asks for is in the file (resources/texts/labels/fleet.json)."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from fallback_doctor.core.language.texts import label, load_labels

LABELS = {key: value for key, value in load_labels().items() if key.startswith(("fleet.", "watch."))}
SOURCES = [Path(__file__).resolve().parents[2] / "core" / part for part in ("fleet", "watch")]


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(LABELS))
def test_each_label_has_both_languages_with_the_same_fields(key: str) -> None:
    entry = LABELS[key]
    assert entry["en"] and entry["ko"]
    assert _fields(entry["en"]) == _fields(entry["ko"]), key
    if re.search(r"[A-Za-z]{3}", re.sub(r"\{[^}]*\}", "", entry["en"])):
        assert any("\uac00" <= ch <= "\ud7a3" for ch in entry["ko"]), f"{key}: the Korean has no Hangul"


def test_every_label_the_code_names_is_there_and_none_is_unused() -> None:
    code = "\n".join(path.read_text(encoding="utf-8") for folder in SOURCES for path in folder.glob("*.py"))
    named = set(re.findall(r"[\"']((?:fleet|watch)\.[a-z_.]+[a-z])[\"']", code))
    prefixes = set(re.findall(r'f"((?:fleet|watch)\.[a-z_.]+\.)\{', code))
    assert named - set(LABELS) == set(), "labels named in the code but missing"
    unused = {key for key in LABELS if key not in named and not any(key.startswith(p) for p in prefixes)}
    assert unused == set()


def test_a_label_is_filled_in_and_falls_back_to_english() -> None:
    assert label("fleet.count.many", "ko", count=14) == "호스트 14대"
    assert label("fleet.count.many", "fr", count=14) == "14 hosts"
