"""Why a member was left out or shortened: English in the manifest, the reader's language on a page."""

from __future__ import annotations

import re

import pytest
from fallback_doctor.core.bundle.manifest import Cut, cut_words, said_cut

KEYS = {
    "bundle.cut.not_taken": {"source": "/var/log/app.log", "why": "refused: a FIFO"},
    "bundle.cut.unreadable": {"error": "[Errno 13] Permission denied"},
    "bundle.cut.log_end": {"bound": 1048576},
    "bundle.cut.start": {"bound": 65536},
    "bundle.cut.total_shortened": {"total": 8388608},
    "bundle.cut.total_emptied": {"total": 8388608},
    "bundle.cut.total_left_out": {},
    "bundle.cut.by_person": {},
}


@pytest.mark.parametrize("key", sorted(KEYS))
def test_a_cut_is_english_in_the_manifest_and_korean_on_a_korean_page(key: str) -> None:
    made = said_cut("logs/app.log", key, 10, 5, **KEYS[key])
    assert made.why == cut_words(made, "en") and re.search(r"[a-z]{4}", made.why)
    korean = cut_words(made, "ko")
    assert re.search(r"[\uac00-\ud7a3]", korean), korean
    assert not re.search(r"\b(?:left|kept|bound|shortened|emptied|taken)\b", korean), korean
    for value in KEYS[key].values():  # the data is shown as written
        assert str(value) in korean


def test_a_cut_of_an_earlier_version_shows_its_english() -> None:
    assert cut_words(Cut("x.log", "left out: something"), "ko") == "left out: something"
