"""The wizard's tests: a wizard closed by a test (qtbot closes every widget it holds at the end)
with an unsaved diagnosis would wait on the modal "not saved" question. Here the technician's
answer is "close without saving", unless a test answers otherwise (tests/gui/test_gui_leaving.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _close_without_saving(monkeypatch: pytest.MonkeyPatch) -> None:
    from fallback_doctor.gui.leaving import DISCARD
    from fallback_doctor.gui.wizard import DoctorWizard

    monkeypatch.setattr(DoctorWizard, "ask_to_leave", lambda _self: DISCARD)
