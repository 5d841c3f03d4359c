"""Closing with a diagnosis that was never saved asks first (issue 26); a saved one, a bundle
opened from elsewhere, or nothing diagnosed yet closes at once. Real wizard, real steps, offscreen."""

from __future__ import annotations

import pytest
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.leaving import DISCARD, SAVE, STAY
from fallback_doctor.gui.wizard import DoctorWizard
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui

FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}


@pytest.fixture
def wizard(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DoctorWizard({"kind": "python"}, settings=settings, probe_options=FAST, lang="en")
    qtbot.addWidget(made)
    made.show()
    qtbot.waitUntil(lambda: not made.searching, timeout=10_000)
    yield made
    made.shutdown()
    set_language("en")


def _diagnosed(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    wizard.next()
    qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=120_000)


def _answer(wizard: DoctorWizard, answer: str, exports: list[bool] | None = None) -> list[str]:
    asked: list[str] = []
    exports = [] if exports is None else exports
    wizard.ask_to_leave = lambda: asked.append(answer) or answer  # type: ignore[method-assign]
    wizard.open_export_dialog = lambda: exports.append(True)  # type: ignore[method-assign]
    return asked


def test_nothing_diagnosed_closes_without_a_question(wizard: DoctorWizard) -> None:
    asked = _answer(wizard, STAY)
    wizard.reject()
    assert asked == [] and not wizard.isVisible()


@pytest.mark.parametrize(("answer", "closes"), [(STAY, False), (SAVE, False), (DISCARD, True)])
def test_an_unsaved_diagnosis_asks_and_the_answer_is_kept(
    qtbot, wizard: DoctorWizard, answer: str, closes: bool
) -> None:  # type: ignore[no-untyped-def]
    _diagnosed(qtbot, wizard)
    exports: list[bool] = []
    asked = _answer(wizard, answer, exports)
    assert wizard.close() is closes
    assert asked == [answer]
    assert exports == ([True] if answer == SAVE else [])
    assert wizard.isVisible() is not closes


def test_a_saved_diagnosis_closes_until_it_changes(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    _diagnosed(qtbot, wizard)
    wizard._on_exported("/tmp/fallback-doctor-x.zip")  # what the export's job reports when written
    asked = _answer(wizard, STAY)
    wizard.document = dict(wizard.document or {})  # a step ran since: a new document
    wizard.reject()
    assert asked == [STAY] and wizard.isVisible()
    wizard.saved_document = wizard.document
    wizard.reject()
    assert asked == [STAY] and not wizard.isVisible()


def test_save_report_writes_the_bundles_page_and_offers_its_folder(
    qtbot, wizard: DoctorWizard, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    _diagnosed(qtbot, wizard)
    for _ in range(5):
        wizard.next()
    wizard.flush_rendering()
    page = wizard.diagnosis_page
    assert page.handover.save_report.isVisible() and not page.handover.open_folder.isVisible()
    assert page.handover.save_report.text() == "Save report…"
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    page.handover.write_report(str(target))
    qtbot.waitUntil(lambda: target.exists() and page.handover.folder is not None, timeout=60_000)
    html = target.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype html")
    assert "<script" not in html.lower()
    assert page.handover.open_folder.isVisible() and page.handover.folder == str(target.parent)
    assert str(target) in page.note.text()
    assert wizard.saved_document is wizard.document  # saved: closing asks nothing now
    asked = _answer(wizard, STAY)
    wizard.reject()
    assert asked == [] and not wizard.isVisible()


def test_save_report_refuses_to_replace_a_file_that_is_not_a_page(
    qtbot, wizard: DoctorWizard, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    _diagnosed(qtbot, wizard)
    config = tmp_path / "bareun.json"
    config.write_text('{"executionProvider": "gpu"}', encoding="utf-8")
    page = wizard.diagnosis_page
    page.handover.write_report(str(config))
    qtbot.waitUntil(lambda: "not an HTML page" in page.note.text(), timeout=60_000)
    assert config.read_text(encoding="utf-8") == '{"executionProvider": "gpu"}'
