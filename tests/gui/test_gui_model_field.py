"""The CPU page's model field: the application's own model and its dimensions, run by the real steps.

Offscreen Qt, the real step child and probe under this interpreter's onnxruntime-gpu without CUDA
libraries (the GPU retry falls back for real), a real convolutional model (tests/app_models.py).
"""

from __future__ import annotations

from pathlib import Path

import app_models
import pytest
from fallback_doctor.gui.app import build_parser, probe_options_from_args
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.model_field import dims_from_text
from fallback_doctor.gui.wizard import DoctorWizard, Page
from fallback_doctor.wizard_options import headless_argv
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui
pytest.importorskip("onnx")

STEP_TIMEOUT_MS = 120_000


def test_the_model_chosen_runs_in_both_steps_and_both_pages_say_which_with_its_dims(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    model = app_models.write_conv_model(tmp_path / "tiny_convnet.onnx")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    options = {"runs": 2, "warmup": 1, "model": str(model), "dims": {"batch": 2, "images:2": 16}}
    wizard = DoctorWizard({"kind": "python"}, settings=settings, probe_options=options, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    try:
        qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
        cpu = wizard.pages[Page.CPU]
        field = cpu.model
        assert field.path.text() == str(model)  # the field starts with the options (gui --model)
        assert field.dims.text() == "batch=2 images:2=16"
        # What will run, read from the model's signature before anything runs.
        assert field.note.text() == (
            "tiny_convnet.onnx: batch=2 (given), images:2=16 (given), "
            "images:3=1 (default for a dimension without a name)"
        )
        field.dims.setText("batch=3 images:2=16 images:3=20")
        field.apply()
        assert wizard.probe_options["dims"] == {"batch": 3, "images:2": 16, "images:3": 20}
        wizard.next()  # the static inspection first: the steps are added to its document
        qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
        wizard.run_step("cpu")
        qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
        wizard.flush_rendering()
        assert cpu.table.item(0, 1).text().endswith("ms"), wizard.failures
        expected = "tiny_convnet.onnx (batch=3 (given), images:2=16 (given), images:3=20 (given))"
        assert cpu.model_used.text() == f"Test inference model: {expected}"
        cpu_run = wizard.document["inference"]["cpu_baseline"]["session"]
        assert [o["shape"] for o in cpu_run["outputs"]] == [[3, 10]]
        wizard.run_step("gpu")
        qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
        wizard.flush_rendering()
        note = wizard.pages[Page.GPU].cpu_note.text().splitlines()
        assert note[0] == f"Test inference model: {expected}"
        assert note[1] == "Node placement: CPU 7 of 7 nodes"
        assert wizard.document["inference"]["model"]["shapes"] == {"images": [3, 3, 16, 20]}
        # In Korean: the sources in Korean, the names as they are.
        wizard.switch_language("ko")
        wizard.flush_rendering()
        assert "(지정한 값)" in cpu.model_used.text() and "given" not in cpu.model_used.text()
        assert field.note.text().startswith("tiny_convnet.onnx: batch=3 (지정한 값)")
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_wrong_field_says_why_and_changes_nothing(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model = app_models.write_conv_model(tmp_path / "conv.onnx")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "python"}, settings=settings, probe_options={"runs": 2}, lang="en")
    qtbot.addWidget(wizard)
    try:
        field = wizard.pages[Page.CPU].model
        assert field.note.text().startswith("encoder.onnx: batch=16 (from the model's description)")
        field.dims.setText("batch=two")
        field.apply()
        assert field.note.text() == "Not NAME=VALUE with a positive number: batch=two"
        assert "dims" not in wizard.probe_options
        field.dims.setText("seq=128")
        field.path.setText(str(model))
        field.apply()
        assert field.note.text().splitlines()[1] == (
            "The model has no dynamic dimension seq (its dynamic dimensions: batch, images:2, images:3)"
        )
        broken = tmp_path / "broken.onnx"
        broken.write_bytes(model.read_bytes()[:100])
        field.path.setText(str(broken))
        field.apply()
        assert field.note.text().startswith(f"This model cannot be run: {broken}: not an ONNX model")
    finally:
        wizard.shutdown()


def test_gui_model_and_dims_options_reach_the_wizard_and_the_headless_diagnosis() -> None:
    args = build_parser().parse_args(
        ["--model", "/srv/app/model.onnx", "--dim", "batch=16", "--dim", "seq=128"]
    )
    assert probe_options_from_args(args) == {
        "model": "/srv/app/model.onnx",
        "dims": {"batch": 16, "seq": 128},
    }
    assert headless_argv(args)[-6:] == [
        "--model",
        "/srv/app/model.onnx",
        "--dim",
        "batch=16",
        "--dim",
        "seq=128",
    ]
    bad = build_parser().parse_args(["--dim", "batch"])
    assert (
        probe_options_from_args(bad)
        == "--dim batch: expected NAME=VALUE with a positive integer, e.g. --dim batch=4"
    )
    assert dims_from_text("batch=16, seq=128") == ({"batch": 16, "seq": 128}, None)
