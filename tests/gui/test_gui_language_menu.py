"""The wizard's language menu lists every catalogue language by its own name, a catalogue added in
FALLBACK_DOCTOR_CATALOGUES included (no code touched), and choosing one re-words the window."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fallback_doctor.core.language import texts
from fallback_doctor.gui.i18n import language, set_language
from fallback_doctor.gui.wizard import DoctorWizard
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWizard

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

pytestmark = pytest.mark.gui

FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}


@pytest.fixture
def wizard(qtbot, tmp_path, monkeypatch) -> Iterator[DoctorWizard]:  # type: ignore[no-untyped-def]
    from test_texts_pseudo_language import write_pseudo_language

    write_pseudo_language(tmp_path / "catalogues")
    monkeypatch.setenv(texts.CATALOGUES_VARIABLE, str(tmp_path / "catalogues"))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DoctorWizard({"kind": "python"}, settings=settings, probe_options=FAST, lang="xx")
    qtbot.addWidget(made)
    try:
        yield made
    finally:
        made.shutdown()
        set_language("en")


def test_the_menu_names_every_catalogue_language_in_its_own_words(wizard: DoctorWizard) -> None:
    actions = wizard.language_menu.actions()
    assert [(action.data(), action.text()) for action in actions] == [
        ("en", "English"),
        ("ko", "한국어"),
        ("xx", "hsilgnE"),
    ]
    assert [action.isChecked() for action in actions] == [False, False, True]
    language_button = wizard.button(QWizard.WizardButton.CustomButton2)
    assert language_button.text() == texts.label("language.menu", "xx", name="hsilgnE")
    assert wizard.buttonText(QWizard.WizardButton.NextButton) == texts.label("button.next", "xx")


def test_choosing_a_language_re_words_the_window_and_is_remembered(wizard: DoctorWizard) -> None:
    korean = next(action for action in wizard.language_menu.actions() if action.data() == "ko")
    korean.trigger()
    assert language() == "ko"
    assert wizard.settings.value("language") == "ko"
    assert wizard.buttonText(QWizard.WizardButton.NextButton) == texts.label("button.next", "ko")
    assert [action.isChecked() for action in wizard.language_menu.actions()] == [False, True, False]


def test_a_catalogue_without_its_own_name_is_listed_by_its_code(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from fallback_doctor.gui.i18n import language_names

    (tmp_path / "yy" / "labels").mkdir(parents=True)
    (tmp_path / "yy" / "labels" / "ui.json").write_text('{"button.next": "yy-next"}', encoding="utf-8")
    monkeypatch.setenv(texts.CATALOGUES_VARIABLE, str(tmp_path))
    assert language_names() == [("en", "English"), ("ko", "한국어"), ("yy", "yy")]
