"""The wizard's first page offers every registered kind of target with its field: the built-in
native kind (issue 24: `diagnose` could diagnose it, the wizard could not) and a kind registered
by a test alone (tests/core/targets/targets_dummy.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fallback_doctor.gui.app import build_parser, target_from_args
from fallback_doctor.gui.wizard import DoctorWizard
from PySide6.QtCore import QSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from targets_dummy import triton_registered

pytestmark = pytest.mark.gui


def _wizard(qtbot, tmp_path: Path, target: dict[str, object]) -> DoctorWizard:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard(target, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    return wizard


def test_a_native_application_is_a_choice_with_its_library_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, tmp_path, {"kind": "native", "lib_dir": str(tmp_path), "pid": 42})
    page = wizard.start_page
    assert page.radios["native"].isChecked()
    assert page.fields_labels["native"].text() == "ONNX Runtime library folder:"
    assert page.target() == ({"kind": "native", "lib_dir": str(tmp_path), "pid": 42}, None)
    page.fields["native"].setText("")
    target, problem = page.target()
    assert target is None and "ONNX Runtime library folder" in (problem or "")
    wizard.shutdown()


def test_a_registered_kind_is_a_choice_with_its_field(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with triton_registered():
        wizard = _wizard(qtbot, tmp_path, {"kind": "python"})
        page = wizard.start_page
        assert page.radios["triton"].text() == "A Triton server (its backend folder)"
        assert page.fields_labels["triton"].text() == "Backend folder:"
        page.fields["triton"].setText(str(tmp_path))
        page.radios["triton"].setChecked(True)
        assert page.target() == ({"kind": "triton", "lib_dir": str(tmp_path), "pid": None}, None)
        wizard.shutdown()


def test_a_virtual_environments_folder_names_its_interpreter(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    wizard = _wizard(qtbot, tmp_path, {"kind": "python", "python": str(tmp_path / "venv")})
    assert wizard.start_page.target() == ({"kind": "python", "python": str(python), "pid": None}, None)
    wizard.shutdown()


def test_the_wizards_command_line_offers_every_registered_kind() -> None:
    with triton_registered():
        args = build_parser().parse_args(["--target", "triton", "--lib-dir", "/opt/triton/backends"])
    assert target_from_args(args) == {"kind": "triton", "lib_dir": "/opt/triton/backends"}
    native = build_parser().parse_args(["--lib-dir", "/opt/app/lib", "--pid", "7"])
    assert target_from_args(native) == {"kind": "native", "lib_dir": "/opt/app/lib", "pid": 7}
