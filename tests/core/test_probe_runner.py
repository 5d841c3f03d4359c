"""The child runner: crashes, hangs and floods become sentences, and no child outlives its run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest
from fallback_doctor.core.readers.probes.runner import run_child


def test_a_crash_is_a_sentence_with_the_signal() -> None:
    outcome = run_child(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
        timeout_s=30,
    )
    assert outcome.returncode == -11
    assert outcome.sentence("creating the CUDA session") == (
        "the probe crashed with SIGSEGV while creating the CUDA session"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX here")
def test_a_hang_is_stopped_with_its_grandchildren(tmp_path: object) -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    outcome = run_child([sys.executable, "-c", script], timeout_s=2)
    assert outcome.timed_out and outcome.returncode is None
    assert "did not finish" in outcome.sentence("loading cuDNN")
    grandchild = int(outcome.stdout.split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived the probe's timeout")


def test_a_flood_of_output_is_capped() -> None:
    outcome = run_child(
        [sys.executable, "-c", "import sys\nfor _ in range(3000): sys.stdout.write('x' * 4096)"],
        timeout_s=60,
    )
    assert outcome.ok
    assert outcome.truncated
    assert len(outcome.stdout) <= 4 * 1024 * 1024


def test_a_missing_program_is_reported_not_raised() -> None:
    outcome = run_child(["/nonexistent/python"], timeout_s=5)
    assert outcome.returncode is None and not outcome.timed_out
    assert "could not be started" in outcome.sentence("listing packages")


# --- live progress: on_start and on_stdout_line ---------------------------------------------------


def test_lines_arrive_while_the_child_runs(tmp_path: Path) -> None:
    """The child waits for a file that only the line listener creates: lines must arrive live."""
    flag = tmp_path / "go"
    script = (
        "import os, sys, time\n"
        "print('ready', flush=True)\n"
        f"deadline = time.monotonic() + 20\n"
        f"while not os.path.exists({str(flag)!r}) and time.monotonic() < deadline: time.sleep(0.01)\n"
        "print('done', flush=True)\n"
    )
    pids: list[int] = []
    lines: list[tuple[str, bool]] = []

    def on_line(line: str) -> None:
        try:  # the last line may be handed over after the child was reaped (a busy machine)
            alive = bool(pids) and psutil.Process(pids[0]).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            alive = False
        lines.append((line, alive))
        if line == "ready":
            flag.write_text("1")

    outcome = run_child(
        [sys.executable, "-c", script], timeout_s=30, on_start=pids.append, on_stdout_line=on_line
    )
    assert outcome.ok and outcome.duration_s < 10
    assert lines[0] == ("ready", True)
    assert [line for line, _ in lines] == ["ready", "done"]
    assert outcome.stdout == "ready\ndone\n"
    assert len(pids) == 1 and pids[0] > 0


def test_stdin_and_stderr_with_listeners() -> None:
    script = "import sys\ndata = sys.stdin.read()\nsys.stderr.write('err:' + data)\nprint('out:' + data)"
    seen: list[str] = []
    outcome = run_child(
        [sys.executable, "-c", script], timeout_s=30, stdin_text="hello", on_stdout_line=seen.append
    )
    assert outcome.ok and outcome.stderr == "err:hello" and seen == ["out:hello"]


def test_a_listener_that_raises_does_not_stop_the_run() -> None:
    def bad(_: object) -> None:
        raise RuntimeError("listener broke")

    outcome = run_child(
        [sys.executable, "-c", "print(1); print(2)"], timeout_s=30, on_start=bad, on_stdout_line=bad
    )
    assert outcome.ok and outcome.stdout == "1\n2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX here")
def test_a_hang_with_listeners_is_stopped_with_its_grandchildren() -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    seen: list[str] = []
    outcome = run_child([sys.executable, "-c", script], timeout_s=2, on_stdout_line=seen.append)
    assert outcome.timed_out and outcome.returncode is None and outcome.duration_s < 10
    grandchild = int(seen[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild outlived the probe's timeout")


def test_a_flood_with_listeners_is_capped_and_long_lines_are_not_handed_over() -> None:
    script = "import sys\nfor _ in range(3000): sys.stdout.write('x' * 4096)\nprint()\nprint('end')"
    seen: list[str] = []
    outcome = run_child([sys.executable, "-c", script], timeout_s=60, on_stdout_line=seen.append)
    assert outcome.truncated and len(outcome.stdout) <= 4 * 1024 * 1024
    assert outcome.stdout.endswith("end\n")
    assert seen == ["end"]
