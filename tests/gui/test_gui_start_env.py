"""Page 1 takes the environment the application starts with (issue 26, item 5): the steps run with
it, so the diagnosis (and "Check again") sees what the application sees, a fix made there included.

A real wizard, the real static diagnosis of this interpreter in the step's child process. The
variable is one the diagnosis reads and shows (CUDA_VISIBLE_DEVICES hides every GPU); the control
is the same run without the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.flow.step_child import start_environment
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui

UNIT_LINES = 'Environment=CUDA_VISIBLE_DEVICES=-1 "APP_NOTE=two words"\n# a comment\nexport ORT_LOG=1\n'


def _diagnosed(qtbot: Any, tmp_path: Path, env_text: str) -> dict[str, Any]:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    try:
        wizard.start_page.env.setPlainText(env_text)
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=120_000)
        assert wizard.currentId() == Page.CONFIG
        assert (wizard.target.get("start_env") or "") == env_text.strip()
        return dict(wizard.document or {})
    finally:
        wizard.shutdown()
        set_language("en")


def _seen(document: dict[str, Any]) -> Any:
    return (document["environment"].get("environment") or {}).get("CUDA_VISIBLE_DEVICES")


def test_the_start_up_environment_reaches_the_diagnosis(qtbot, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    without = _diagnosed(qtbot, tmp_path, "")
    assert _seen(without) in (None, "")  # the control: this machine's shell does not set it
    given = _diagnosed(qtbot, tmp_path, UNIT_LINES)
    assert _seen(given) == "-1", given["environment"].get("environment")


def test_the_field_takes_env_files_and_unit_lines() -> None:
    assert start_environment({"start_env": UNIT_LINES}) == {
        "CUDA_VISIBLE_DEVICES": "-1",
        "APP_NOTE": "two words",
        "ORT_LOG": "1",
    }
    assert start_environment({}) == {}
