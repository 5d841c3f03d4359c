"""The window runs the diagnosis off the GUI thread and shows the report (offscreen Qt)."""

from __future__ import annotations

import sys

import pytest
from fallback_doctor.gui.app import MainWindow
from PySide6.QtCore import Qt


@pytest.mark.gui
def test_run_diagnosis_shows_the_verdict(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(sys.executable)
    qtbot.addWidget(window)
    window.show()
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    assert not window.run_button.isEnabled()
    qtbot.waitUntil(window.run_button.isEnabled, timeout=120_000)
    text = window.output.toPlainText()
    assert "Verdict:" in text or "판정:" in text
