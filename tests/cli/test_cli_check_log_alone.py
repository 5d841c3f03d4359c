"""`check --target log`: the log alone, no server looked for on this machine (issue 26, item 2).

A log target's evidence is a customer's log read on the technician's laptop
(TargetProfile.inspects_machine is False). ``check`` used to look for a server process here and
answered "UNKNOWN - no running server process found" for a log that says it fell back. A real
process of this machine is given with ``--pid`` to show it is not read; the control test shows the
same command with another target does read it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fallback_doctor.core.language.texts import label

LOGS = Path(__file__).parents[1] / "data" / "logs"


def _check(*args: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "check", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, (proc.stdout, proc.stderr)
    return proc.returncode, lines[0]


def _perf(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split(" | ", 1)[1].split())


@pytest.fixture
def a_process() -> Iterator[int]:
    """A real process of this machine (Python, no ONNX Runtime mapped)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_log_that_names_a_cause_is_critical_without_any_process(lang: str, a_process: int) -> None:
    log = str(LOGS / "corpus_cublaslt11.log")
    code, line = _check("--target", "log", "--log", log, "--pid", str(a_process), "--lang", lang)
    assert code == 2, line
    head = label("watch.log_alone.on_cpu", lang, app=label("watch.log_alone.app", lang), cause="")
    assert line.startswith("CRITICAL - " + head.split("(")[0].strip()), line
    assert "libcublasLt.so.11" in line
    assert set(_perf(line).values()) - {"U"} == {_perf(line)["time"]}  # no process, no NVML read


def test_a_log_without_a_problem_is_ok_and_no_log_is_unknown(tmp_path: Path) -> None:
    clean = tmp_path / "server.log"
    clean.write_text("2026-12-05 10:00:00 server started on port 5656\nready\n", encoding="utf-8")
    code, line = _check("--target", "log", "--log", str(clean))
    assert code == 0 and line.startswith("OK - the server's log shows no fallback"), line
    code, line = _check("--target", "log", "--log", str(clean), "--no-log")
    assert code == 3 and "reads a log and nothing else" in line, line


def test_another_target_with_the_same_pid_does_read_the_process(a_process: int) -> None:
    """The control: the check above can fail. With a Python target the same --pid is read."""
    log = str(LOGS / "corpus_cublaslt11.log")
    code, line = _check("--target", "python", "--log", log, "--pid", str(a_process), "--name", "p")
    assert code == 1 and "has not loaded ONNX Runtime" in line, line
    assert _perf(line)["onnxruntime_loaded"] == "0"
