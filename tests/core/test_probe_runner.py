"""The child runner: crashes, hangs and floods become sentences, and no child outlives its run."""

from __future__ import annotations

import os
import sys
import time

import pytest
from fallback_doctor.core.probes.runner import run_child


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
