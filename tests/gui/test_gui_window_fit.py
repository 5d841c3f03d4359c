"""The window fits its screen at any scale: at QT_SCALE_FACTOR=2 a 2560x1440 screen is 1280x720
logical pixels, and the wizard's preferred 1100x780 put Next and Close below the screen's edge.

Each case is a real wizard in a child process on an offscreen screen of the given size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui

SCREENS = Path(__file__).resolve().parents[1] / "data" / "screens"

CHILD = """
import json, sys
from PySide6.QtWidgets import QApplication, QWizard
from PySide6.QtCore import QSettings
app = QApplication([])
from fallback_doctor.gui.wizard import DoctorWizard
settings = QSettings(sys.argv[1], QSettings.Format.IniFormat)
wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
wizard.show()
app.processEvents()
room = wizard.screen().availableGeometry()
frame = wizard.frameGeometry()
buttons = {}
for name in ("NextButton", "CancelButton"):
    button = wizard.button(getattr(QWizard.WizardButton, name))
    corner = button.mapToGlobal(button.rect().bottomRight())
    buttons[name] = [corner.x(), corner.y()]
print(json.dumps({"room": [room.width(), room.height()], "frame": [frame.x(), frame.y(), frame.width(),
      frame.height()], "size": [wizard.width(), wizard.height()], "buttons": buttons}))
wizard.shutdown()
import shiboken6
shiboken6.delete(wizard)  # the window before the application, as gui/app.py closes it
"""


def _open(screen: str, scale: str, tmp_path: Path) -> dict[str, object]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREENS / screen}"
    env["QT_SCALE_FACTOR"] = scale
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "settings.ini")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize(("screen", "scale"), [("2560x1440.json", "2"), ("1920x1080.json", "1.5")])
def test_the_window_and_its_buttons_are_on_a_scaled_screen(screen: str, scale: str, tmp_path: Path) -> None:
    seen = _open(screen, scale, tmp_path)
    width, height = seen["room"]  # type: ignore[misc]
    x, y, frame_width, frame_height = seen["frame"]  # type: ignore[misc]
    assert x >= 0 and y >= 0
    assert x + frame_width <= width and y + frame_height <= height, seen
    for corner in seen["buttons"].values():  # type: ignore[attr-defined]
        assert 0 <= corner[0] <= width and 0 <= corner[1] <= height, seen


def test_a_large_screen_gets_the_preferred_size(tmp_path: Path) -> None:
    assert _open("2560x1440.json", "1", tmp_path)["size"] == [1100, 780]
