"""The bundle dialog names what it masks in words, in both languages (issue 26, item 4).

It showed the redactor's codes: "12 values masked (key 4, license 8)", in Korean too. The
document is the planted one of tests/core/bundle (identities and secrets where real collectors put
facts), exported by the real preview.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.gui.bundle_dialog import BundleDialog, kind_words
from fallback_doctor.gui.i18n import set_language

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "bundle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from bundle_plants import planted_document
from korean_leftovers import leftovers

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_summary_names_each_kind_in_words(qtbot, lang: str) -> None:  # type: ignore[no-untyped-def]
    set_language(lang)
    try:
        dialog = BundleDialog(planted_document())
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.preview is not None and dialog.save.isEnabled(), timeout=30_000)
        counts = dialog.preview.redaction_counts()
        summary = dialog.summary.text().splitlines()[0]  # the lines after it: what was cut, and why
        dialog.close()
    finally:
        set_language("en")
    assert len(counts) >= 3, counts  # the planted document holds secrets and identities of several kinds
    for kind in counts:
        assert has_label(f"redaction.kind.{kind}"), kind  # no kind falls back to "other value"
        assert label(f"redaction.kind.{kind}", lang) in summary
    inside = summary[summary.index("(") + 1 : summary.rindex(")")]
    assert not re.search(r"\b[a-z]+(-[a-z]+)* \d+\b", inside), summary  # not "key 4, license 8"
    if lang == "ko":
        assert leftovers(summary) == [], summary


def test_an_unknown_kind_is_other_value_not_its_code() -> None:
    set_language("ko")
    try:
        assert kind_words("license") == "라이선스"
        assert kind_words("a-kind-of-next-year") == label("redaction.kind.other", "ko")
    finally:
        set_language("en")


def test_nothing_to_mask_says_so_without_an_empty_list(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import contextlib
    import io

    from fallback_doctor.core.flow.step_child import run_inspection

    with contextlib.redirect_stdout(io.StringIO()):  # the step child's progress lines
        document = run_inspection({"kind": "log", "log_text": "falling back to CPU execution provider\n"})
    set_language("en")
    dialog = BundleDialog(document)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.preview is not None and dialog.save.isEnabled(), timeout=30_000)
    assert dialog.preview.redaction_counts() == {}
    files = len(dialog.preview.included())
    assert dialog.summary.text().splitlines()[0] == label("preview.summary.none", "en", files=files)
    dialog.close()
