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


RECORDING = "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
"""A real GPU utilization recording (tests/data/gpu_series) the replayed wizards sample: not a GPU here."""


@pytest.fixture
def replayed_wizard(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    """A wizard on this interpreter (a python target) whose GPU readings are replayed from a real
    recording; its probe children are real. Shown, held by qtbot (closed at the end)."""
    from pathlib import Path

    from fallback_doctor.core.readers.sampling.recordings import load_recording
    from fallback_doctor.core.readers.sampling.sources import ReplaySource
    from fallback_doctor.gui.wizard import DoctorWizard
    from PySide6.QtCore import QSettings

    recording = load_recording(Path(__file__).parents[1] / "data" / "gpu_series" / RECORDING)
    wizard = DoctorWizard(
        {"kind": "python"},
        settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
        probe_options={"runs": 50, "warmup": 1},
        sample_source=lambda: ReplaySource(recording, speed=None),
        lang="en",
    )
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard
