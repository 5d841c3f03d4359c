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
