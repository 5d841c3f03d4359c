"""Every finding text exists in English and Korean, with a source and the same fields."""

from __future__ import annotations

import re
import string

import pytest
from fallback_doctor.core.judgement.registry import declared
from fallback_doctor.core.language.texts import LANGUAGES, load_texts, make_finding, words_of
from fallback_doctor.core.model.result import Layer, Severity

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
    assert words_of(finding, "ko")["verify"]
    assert finding.remediation is not None
    assert finding.remediation.verify == words_of(finding, "en")["verify"]


def test_make_finding_fills_fields_in_every_language() -> None:
    finding = make_finding(
        "collect.failed",
        "collection_failed",
        Layer.PROBE,
        Severity.WARNING,
        params={"collector": "driver", "reason": "boom"},
    )
    assert "driver" in finding.title
    assert "boom" in words_of(finding, "ko")["detail"]
    assert finding.remediation is not None


def _korean_strings() -> list[tuple[str, str]]:
    """(where, text) of every Korean string in the catalogues: the Korean catalogue (finding texts,
    labels: resources/texts/ko/), the evidence words and the log signatures' explanations (the "ko"
    entries of resources/**/*.json)."""
    import json

    from fallback_doctor.core.platform.resource_files import RESOURCES

    found: list[tuple[str, str]] = []

    def walk(node: object, where: str, korean: bool = False) -> None:
        if korean and isinstance(node, str):
            found.append((where, node))
        elif korean and isinstance(node, dict | list):
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                walk(value, f"{where}/{key}", korean)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key == "ko" and isinstance(value, str):
                    found.append((where, value))
                elif key == "ko" and isinstance(value, dict):
                    found.extend(
                        (f"{where}.{part}", text) for part, text in value.items() if isinstance(text, str)
                    )
                else:
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}[{index}]")

    def files(folder) -> list:  # type: ignore[no-untyped-def, type-arg]
        out = []
        for item in folder.iterdir():
            out.extend(files(item) if item.is_dir() else [item] if item.name.endswith(".json") else [])
        return out

    korean_catalogue = RESOURCES / "texts" / "ko"
    for path in files(RESOURCES):
        if path.name in ("readings.json", "grammar.json"):
            continue  # the Korean grammar's data: readings of letters, not prose
        walk(json.loads(path.read_text("utf-8")), path.name, korean_catalogue in path.parents)
    assert len(found) > 500
    return found


def test_korean_prose_has_no_backticks() -> None:
    """Issue 26: literal backticks in Korean prose; a command in a Korean sentence is quoted “ ”."""
    with_backticks = [(where, text[:80]) for where, text in _korean_strings() if "`" in text]
    assert with_backticks == []


def test_korean_says_fallback_with_one_word() -> None:
    """Issue 26: three words for "fallback" (대체 / 전환됨 / 전환): the catalogue's own, 전환, only."""
    other = [
        (where, text[:80]) for where, text in _korean_strings() if "대체" in text and "서로 대체" not in text
    ]
    assert other == []  # ("서로 대체할 수 없고": cuDNN 8 and 9 cannot replace each other, not a fallback)
    assert sum("전환" in text for _, text in _korean_strings()) > 25


def test_a_korean_verify_command_is_still_the_script_s_last_line() -> None:
    """The quoted command of a Korean verify sentence is what the fix script runs last, as in English."""
    from fallback_doctor.core.document.basics import to_jsonable
    from fallback_doctor.core.document.script import fix_script

    spec = declared()["config.duplicate_key"]
    assert spec.cause is not None and spec.layer is not None
    params = {"key": "libPath", "config_file": "/etc/bareun.json", "file": "bareun.json", "line": 3}
    finding = make_finding("config.duplicate_key", spec.cause, spec.layer, spec.severities[0], params=params)
    document = to_jsonable(finding)
    scripts = {lang: fix_script(document, lang) for lang in LANGUAGES}
    last = {lang: script.rstrip().splitlines()[-1] for lang, script in scripts.items()}
    assert last["ko"] == last["en"] and "grep -c" in last["en"], scripts


def test_the_particle_after_fallback_fits_its_final_consonant() -> None:
    """전환 ends in a consonant: 전환은, 전환이, 전환을, 전환과, 전환으로, never the forms after a
    vowel (대체는 became "전환는" where the word was swapped by hand)."""
    wrong = [
        (where, text[:80])
        for where, text in _korean_strings()
        if re.search(r"전환(는|가|를|와|로(?!그))", text)
    ]
    assert wrong == []


def test_the_log_knowledge_s_words_are_complete_in_english_and_korean() -> None:
    """What a log line means, a cause's words and what tells causes apart are labels of each
    catalogue (resources/texts/<lang>/labels/log_*.json): none of them left to English in Korean."""
    from fallback_doctor.core.language.texts import catalogue

    prefixes = ("log_says.", "log_cause.", "log_told_apart.")
    english = {key: words for key, words in catalogue("en", "labels").items() if key.startswith(prefixes)}
    korean = catalogue("ko", "labels")
    assert len(english) > 200
    assert [key for key in english if not korean.get(key)] == []
    hangul = re.compile("[\uac00-\ud7a3]")
    assert [key for key in english if not hangul.search(str(korean[key]))] == []
    assert set(korean) >= set(english)
