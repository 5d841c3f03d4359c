"""Page 1 takes the running server's process id (issue 26/27): the diagnosis is then of that
process (its own interpreter and environment), as ``diagnose --pid`` is. A real process, offscreen Qt."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.page_base import Page
from fallback_doctor.gui.wizard import DoctorWizard
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest

pytestmark = pytest.mark.gui


@pytest.fixture
def server() -> Iterator[subprocess.Popen[bytes]]:
    """A running Python application (this interpreter, asleep) that we did not start as a probe."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    time.sleep(0.3)
    yield process
    process.kill()
    process.wait()


def test_the_running_servers_process_is_what_is_diagnosed(qtbot, tmp_path, server) -> None:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    try:
        qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
        start = wizard.start_page
        assert start.pid.isVisible() and start.pid_label.text().startswith("Running server")
        QTest.keyClicks(start.pid, "x-1.5")
        assert start.pid.text() == "15"  # typed: digits only
        start.pid.clear()
        start.pid.setText(str(server.pid))
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=120_000)
        assert wizard.currentId() == Page.CONFIG
        target = wizard.document["target"]  # type: ignore[index]
        assert target["pid"] == str(server.pid)
        assert target["kind"] == "python"
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_pid_given_on_the_command_line_fills_the_field(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "python", "pid": 4242}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    try:
        assert wizard.start_page.pid.text() == "4242"
        target, problem = wizard.start_page.target()
        assert problem is None and target is not None and target["pid"] == 4242
    finally:
        wizard.shutdown()
