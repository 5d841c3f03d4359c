"""Test-wide settings: Qt offscreen before any QApplication exists; every report document checked.

The offscreen screen is a 1920x1080 one (tests/data/screens/): Qt's own offscreen screen is
800x800, smaller than the wizard's default size, which the window now fits itself into.

FALLBACK_DOCTOR_VALIDATE_DOCUMENTS makes core check each document it builds or changes against the
published schema (core/views/text_report.py ``checked``, called by core/flow/steps.py ``judge``, the one
function
every document passes through); it is set here, before anything runs, so the children the tests
start (`fallback-doctor diagnose`, the wizard's step child) check theirs too. The fixture below
also checks every document a test holds when it is read back from a bundle or printed as JSON.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    _SCREEN = os.path.join(os.path.dirname(__file__), "data", "screens", "1920x1080.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_SCREEN}"
os.environ["FALLBACK_DOCTOR_VALIDATE_DOCUMENTS"] = "1"
# The text report into a pipe, as the tests read it, whatever the shell: pytest imports readline
# (_pytest/capture.py), and GNU readline sets COLUMNS and LINES in the C environment, which every
# child inherits although os.environ never shows them.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
    os.unsetenv(_name)

CHECKED: list[int] = []
"""How many documents the session checked (reported at the end; 0 would mean the hook is dead)."""


@pytest.fixture(autouse=True)
def _documents_follow_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count every document core checks in this process (the check itself raises on a bad one)."""
    from fallback_doctor.core.document import schema

    real = schema.check_document

    def counting(document: Any) -> None:
        CHECKED.append(1)
        real(document)

    monkeypatch.setattr(schema, "check_document", counting)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many report documents were checked against the schema in this process."""
    if CHECKED:
        terminalreporter.write_line(f"report documents checked against the schema: {len(CHECKED)}")


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_gui_thread() -> Iterator[None]:
    """After a test that made a wizard: its garbage collected here, on the GUI thread
    (gui/gc_guard.py), and Python's automatic collection back on for the tests that follow."""
    yield
    guard = sys.modules.get("fallback_doctor.gui.gc_guard")
    if guard is not None and not gc.isenabled():
        guard.collect_now_and_restore()
