"""Usage errors exit 2 with one line; no display means the headless diagnosis, not a Qt trace."""

from __future__ import annotations

import os
import subprocess
import sys

from fallback_doctor.launcher import display_problem


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor", *args], capture_output=True, text=True, timeout=180, env=env
    )


def test_missing_interpreter_is_a_usage_error() -> None:
    result = _run(["diagnose", "--python", "/nonexistent/bin/python"])
    assert result.returncode == 2
    assert "/nonexistent/bin/python" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_flag_is_a_usage_error() -> None:
    result = _run(["diagnose", "--no-such-flag"])
    assert result.returncode == 2


def test_without_a_display_the_headless_diagnosis_runs() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    result = _run([], env=env)
    assert result.returncode in (0, 1), result.stderr
    first_line = result.stderr.strip().splitlines()[0]
    assert "no display" in first_line and "fallback-doctor diagnose" in first_line
    assert "Traceback" not in result.stderr
    assert "Verdict:" in result.stdout or "판정:" in result.stdout


def test_display_detection() -> None:
    assert display_problem({}, "linux") == "no display (DISPLAY is not set)"
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert display_problem({"DISPLAY": ":987"}, "linux") == "the display :987 cannot be reached"
    assert display_problem({}, "win32") is None
