"""`--python` names an interpreter or a virtual environment's folder, and says plainly when not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.readers.targets.interpreter import NotAnInterpreterError, interpreter_of


def test_a_virtual_environments_folder_names_its_interpreter() -> None:
    venv = Path(sys.prefix)  # the tool's own .venv: a real virtual environment
    assert os.path.samefile(interpreter_of(str(venv)), venv / "bin" / "python")


def test_an_interpreter_is_taken_as_it_is() -> None:
    assert interpreter_of(sys.executable) == sys.executable


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/bin/ls", "not a Python interpreter"),
        ("/no/such/python", "no such file"),
    ],
)
def test_what_is_not_an_interpreter_is_refused_saying_what_it_is(path: str, words: str) -> None:
    with pytest.raises(NotAnInterpreterError, match=words):
        interpreter_of(path)


def test_diagnose_refuses_a_program_that_is_not_python_before_collecting() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "diagnose", "--python", "/bin/ls", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not a Python interpreter" in proc.stderr
    assert "not installed" not in proc.stdout + proc.stderr


def test_a_folder_that_is_no_virtual_environment_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotAnInterpreterError, match="not a virtual environment"):
        interpreter_of(str(tmp_path))
