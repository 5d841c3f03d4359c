"""A finding's words are a key and parameters, chosen where shown; the catalogue split is repeatable."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.document.basics import to_jsonable
from fallback_doctor.core.language.texts import (
    finding_words,
    label,
    label_ref,
    make_finding,
    render_text,
    system_language,
    words_of,
)
from fallback_doctor.core.model.result import Layer, Severity

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))


def _collect_failed() -> Any:
    return make_finding(
        "collect.failed",
        "collection_failed",
        Layer.PROBE,
        Severity.WARNING,
        params={"collector": "driver", "reason": "boom"},
    )


def test_a_finding_carries_its_key_and_parameters_and_no_words_per_language() -> None:
    finding = _collect_failed()
    assert finding.text == {"key": "collect.failed", "params": {"collector": "driver", "reason": "boom"}}
    assert finding.texts == {}
    assert finding.title == render_text("collect.failed", "en", finding.text["params"])["title"]
    document = json.loads(json.dumps(to_jsonable(finding)))  # as a bundle keeps it
    for lang in ("en", "ko"):
        assert finding_words(document, lang) == words_of(finding, lang)
        assert (
            finding_words(document, lang)["detail"]
            == render_text("collect.failed", lang, finding.text["params"])["detail"]
        )


def test_a_label_parameter_is_put_in_the_reader_s_language() -> None:
    finding = make_finding(
        "collect.failed",
        "collection_failed",
        Layer.PROBE,
        Severity.WARNING,
        params={"collector": label_ref("reached.stage.session_created"), "reason": "boom"},
    )
    assert label("reached.stage.session_created", "ko") in words_of(finding, "ko")["title"]
    assert label("reached.stage.session_created", "en") in words_of(finding, "en")["title"]


@pytest.mark.parametrize(
    "finding",
    [
        {"text": {"key": 5, "params": "x"}, "texts": "bad", "title": None},
        {"text": {"key": "collect.failed", "params": {"collector": [1, {"a": 2}]}, "append": {"detail": 5}}},
        {"text": {"key": "collect.failed", "params": {"collector": {"key": "no.such", "part": "label"}}}},
        {
            "text": {
                "key": "collect.failed",
                "params": {"collector": {"key": "ms", "part": "label", "params": 1}},
            }
        },
        {"text": {"key": "a later version's key", "params": {}}, "title": "kept"},
    ],
)
def test_a_hostile_or_later_text_record_gives_words_and_never_raises(finding: dict[str, Any]) -> None:
    words = finding_words(finding, "ko")
    assert set(words) == {"title", "detail", "fix", "verify"}
    assert all(isinstance(value, str) for value in words.values())


def test_the_locale_picks_any_catalogue_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    assert system_language() == "ko"
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")  # no Japanese catalogue
    assert system_language() == "en"


def test_the_split_converts_a_bilingual_file_left_and_changes_nothing_when_run_again(tmp_path: Path) -> None:
    from split_catalogues import split

    texts = tmp_path / "texts"
    (texts / "labels").mkdir(parents=True)
    (texts / "en" / "labels").mkdir(parents=True)
    (texts / "en" / "labels" / "ui.json").write_text('{"kept": "already split"}', encoding="utf-8")
    (texts / "cuda.json").write_text(
        json.dumps({"cuda.x": {"en": {"title": "T"}, "ko": {"title": "제목"}, "source": "the docs"}}),
        encoding="utf-8",
    )
    (texts / "labels" / "ui.json").write_text(
        json.dumps({"_source": "ours", "new": {"en": "New", "ko": "새"}}), encoding="utf-8"
    )
    split(texts)
    assert not (texts / "cuda.json").exists() and not (texts / "labels").exists()
    read = lambda *parts: json.loads((texts.joinpath(*parts)).read_text(encoding="utf-8"))  # noqa: E731
    assert read("en", "findings", "cuda.json") == {"cuda.x": {"title": "T", "source": "the docs"}}
    assert read("ko", "findings", "cuda.json") == {"cuda.x": {"title": "제목"}}
    assert read("en", "labels", "ui.json") == {"kept": "already split", "_source": "ours", "new": "New"}
    assert read("ko", "labels", "ui.json") == {"new": "새"}
    before = {path: path.read_bytes() for path in texts.rglob("*.json")}
    assert split(texts) == []
    assert {path: path.read_bytes() for path in texts.rglob("*.json")} == before


def test_the_shipped_catalogues_have_no_bilingual_file_left() -> None:
    from split_catalogues import TEXTS, bilingual_files

    assert bilingual_files(TEXTS) == []


def test_a_language_lacking_a_key_shows_it_in_english(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fallback_doctor.core.language import texts

    (tmp_path / "yy" / "labels").mkdir(parents=True)
    (tmp_path / "yy" / "labels" / "ui.json").write_text('{"button.next": "yy-next"}', encoding="utf-8")
    monkeypatch.setenv(texts.CATALOGUES_VARIABLE, str(tmp_path))
    assert "yy" in texts.languages()
    assert label("button.next", "yy") == "yy-next"
    assert label("button.back", "yy") == label("button.back", "en")
    finding = _collect_failed()
    assert words_of(finding, "yy") == words_of(finding, "en")
