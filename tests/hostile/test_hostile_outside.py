"""A probe ended by something outside the tool is said to be that, run again once, and never
reported as the library's crash (issues 27 and 28).

Real children: one killed with SIGKILL by a thread of the test (as the out-of-memory killer or a
person would), one that aborts itself (a crash stays a crash), one that sleeps past its time on
an idle CPU (a plain timeout), and one that spins past its time on a CPU shared with three other
spinners (the machine too busy: it waits most of its time for that CPU).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from fallback_doctor.core.readers.probes.outside import BUSY, KILLED
from fallback_doctor.core.readers.probes.runner import run_child

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")
SLEEPER = [sys.executable, "-c", "import time; time.sleep(30)"]


def _killer(kill_first: int) -> tuple[Callable[[int], None], list[int]]:
    """An on_start that SIGKILLs the first ``kill_first`` children from another thread."""
    seen: list[int] = []

    def start(pid: int) -> None:
        seen.append(pid)
        if len(seen) <= kill_first:
            threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()

    return start, seen


def test_a_child_killed_from_outside_is_said_so_and_run_again_once() -> None:
    start, seen = _killer(kill_first=2)
    started = time.monotonic()
    outcome = run_child(SLEEPER, timeout_s=20, on_start=start)
    assert len(seen) == 2 and outcome.retried
    assert outcome.outside == KILLED and outcome.returncode == -signal.SIGKILL
    sentence = outcome.sentence("loading libcudnn.so.9")
    assert "killed from outside with SIGKILL" in sentence and "not a crash" in sentence
    assert "crashed" not in sentence
    assert time.monotonic() - started < 10


def test_a_second_run_that_finishes_is_the_outcome() -> None:
    start, seen = _killer(kill_first=1)
    argv = [sys.executable, "-c", "import time; time.sleep(1.0); print('done')"]
    outcome = run_child(argv, timeout_s=20, on_start=start)
    assert len(seen) == 2 and outcome.ok and outcome.retried and outcome.outside is None
    assert outcome.stdout.strip() == "done"


def test_a_crash_stays_a_crash_and_is_not_run_again() -> None:
    start, seen = _killer(kill_first=0)
    outcome = run_child([sys.executable, "-c", "import os; os.abort()"], timeout_s=20, on_start=start)
    assert len(seen) == 1 and not outcome.retried and outcome.outside is None
    assert "crashed with SIGABRT" in outcome.sentence("loading libcudnn.so.9")


def test_a_child_that_sleeps_past_its_time_is_a_plain_timeout() -> None:
    start, seen = _killer(kill_first=0)
    outcome = run_child(["sleep", "30"], timeout_s=2, on_start=start)
    assert outcome.timed_out and outcome.outside is None and len(seen) == 1
    assert "did not finish within 2 s" in outcome.sentence()


@pytest.fixture
def crowded_cpu() -> Iterator[int]:
    """Three processes spinning on one CPU (the one the child will be held to)."""
    cpu = min(os.sched_getaffinity(0))
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
    try:
        time.sleep(0.5)
        yield cpu
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_a_child_out_of_time_on_a_busy_cpu_is_said_to_have_met_a_busy_machine(crowded_cpu: int) -> None:
    code = f"import os; os.sched_setaffinity(0, {{{crowded_cpu}}})\nwhile True: pass"
    start, seen = _killer(kill_first=0)
    outcome = run_child([sys.executable, "-c", code], timeout_s=2, on_start=start)
    assert outcome.outside == BUSY and outcome.retried and len(seen) == 2
    sentence = outcome.sentence("probing the native libraries")
    assert "the machine was too busy to finish in 2 s" in sentence, sentence
    assert "waited" in sentence and "cores" in sentence and "not a fault of the libraries" in sentence
