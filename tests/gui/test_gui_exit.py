"""The wizard, opened and closed as `fallback-doctor gui` does, exits cleanly every time.

Qt must delete the window before the application; left to the interpreter's teardown, the order
was sometimes the other one and the process died with SIGSEGV at exit (seen about once in fifteen
runs of the wizard children of tests/gui/test_gui_look.py, which open a bundle and draw every page;
none in thirty after). gui/app.py ``run`` closes the window itself (``close_window``). This child,
on page 1 only, did not crash before the change either: it holds the exit path (status 0, nothing
left running) as `fallback-doctor gui` takes it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gui

CHILD = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from fallback_doctor.gui.app import make_application, run
app = make_application()
def close():
    from fallback_doctor.gui.wizard import DoctorWizard
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, DoctorWizard)]
    if not windows:
        QTimer.singleShot(50, close)
        return
    windows[0].done(0)
QTimer.singleShot(300, close)
print("status", run(["--lang", "en"]))
"""


def test_the_wizard_closes_and_the_process_exits_cleanly_every_time() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONFAULTHANDLER": "1"}
    for attempt in range(8):
        done = subprocess.run(
            [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120, check=False
        )
        assert done.returncode == 0, (attempt, done.returncode, done.stderr[-2000:])
        assert "status 0" in done.stdout
