"""Closing the wizard with a diagnosis that was never saved asks first (issue 26: Finish and Close
quit at once and the technician's half hour of steps was gone)."""

from __future__ import annotations

from typing import Protocol

from fallback_doctor.gui.i18n import t
from PySide6.QtWidgets import QMessageBox, QWidget

SAVE, DISCARD, STAY = "save", "discard", "stay"


class Leaving(Protocol):
    """What closing reads of the window (gui/wizard.py DoctorWizard)."""

    @property
    def document(self) -> object: ...
    @property
    def saved_document(self) -> object: ...
    @property
    def bundle_mode(self) -> bool: ...
    def ask_to_leave(self) -> str: ...
    def open_export_dialog(self) -> object: ...


def has_unsaved_diagnosis(wizard: Leaving) -> bool:
    """A diagnosis made here (not an opened bundle) that changed since it was last exported."""
    document = wizard.document
    return document is not None and not wizard.bundle_mode and wizard.saved_document is not document


def ask_to_leave(parent: QWidget) -> str:
    """Export, close without saving, or stay: the technician's answer, as SAVE, DISCARD or STAY."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent,
        t("leave.title"),
        t("leave.text"),
        buttons.Save | buttons.Discard | buttons.Cancel,
        buttons.Save,
    )
    return {buttons.Save: SAVE, buttons.Discard: DISCARD}.get(answer, STAY)


def may_leave(wizard: Leaving) -> bool:
    """Whether the wizard may close now; SAVE opens the export and keeps the window open."""
    if not has_unsaved_diagnosis(wizard):
        return True
    answer: str = wizard.ask_to_leave()
    if answer == SAVE:
        wizard.open_export_dialog()
    return answer == DISCARD
