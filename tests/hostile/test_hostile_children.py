"""Fake interpreters that hang, flood, crash, fork and setsid: bounded, said, nothing left running."""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import pytest
from fake_interpreters import alive, make, pids_of, wait_gone
from fallback_doctor.core.readers.collect.errors import CollectError
from fallback_doctor.core.readers.collect.python_env import MAX_LISTING, collect_python_env
from fallback_doctor.core.readers.probes.reaper import TOKEN_NAME, carriers
from fallback_doctor.core.readers.probes.runner import run_child

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and fork: Linux")


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _listing(tmp_path: Path, name: str, timeout_s: float = 20.0) -> tuple[str, float]:
    python = make(tmp_path, name)
    started = time.monotonic()
    with pytest.raises(CollectError) as error:
        collect_python_env(str(python), dict(os.environ), timeout_s=timeout_s)
    return str(error.value), time.monotonic() - started


def test_a_hanging_interpreter_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    message, seconds = _listing(tmp_path, "hang", timeout_s=1.5)
    assert "did not finish within 2 s while listing the installed packages" in message
    assert seconds < 8


@pytest.mark.parametrize("name", ["flood", "endless", "newlines"])
def test_a_flooding_interpreter_is_stopped_while_it_is_read(tmp_path: Path, name: str) -> None:
    """1 GiB, endless bytes, endless newlines: stopped after MAX_LISTING, memory stays bounded."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    message, seconds = _listing(tmp_path, name, timeout_s=60)
    grown = _rss_mib() - before
    assert f"printed more than {MAX_LISTING // (1024 * 1024)} MiB" in message
    assert seconds < 30
    assert grown < 100, f"memory grew by {grown:.0f} MiB"


def test_a_crashing_interpreter_is_a_sentence(tmp_path: Path) -> None:
    message, _seconds = _listing(tmp_path, "crash")
    assert "crashed with SIGSEGV while listing the installed packages" in message


def test_garbage_output_is_said_not_raised(tmp_path: Path) -> None:
    message, _seconds = _listing(tmp_path, "garbage")
    assert "printed no package listing" in message


def test_forked_children_of_a_hanging_interpreter_end_with_it(tmp_path: Path) -> None:
    _listing(tmp_path, "fork", timeout_s=1.5)
    pids = pids_of(tmp_path, "fork")
    assert len(pids) == 4  # the interpreter and its three children
    assert wait_gone(pids) == []


def test_a_setsid_grandchild_holding_the_pipe_neither_stalls_nor_survives(tmp_path: Path) -> None:
    """The listing ends when the interpreter does, not at the timeout; the grandchild is killed."""
    python = make(tmp_path, "setsid")
    started = time.monotonic()
    outcome = run_child([str(python)], timeout_s=30)
    seconds = time.monotonic() - started
    assert outcome.ok, outcome
    assert seconds < 10, f"waited {seconds:.1f} s for a grandchild holding the pipe"
    grandchildren = pids_of(tmp_path, "setsid")
    assert len(grandchildren) == 1
    assert wait_gone(grandchildren) == []


def test_a_setsid_grandchild_without_our_environment_is_still_ended(tmp_path: Path) -> None:
    """env={} drops the token; the subreaper still finds it (re-parented to us) and ends it."""
    python = make(tmp_path, "setsid_env_cleared")
    run_child([str(python)], timeout_s=30)
    grandchildren = pids_of(tmp_path, "setsid_env_cleared")
    assert len(grandchildren) == 1
    assert wait_gone(grandchildren, 2.0) == []


def test_no_child_carries_our_token_after_the_runs() -> None:
    """Every child's token is gone from the process table once its run returned."""
    outcome = run_child([sys.executable, "-c", f"import os; print(os.environ['{TOKEN_NAME}'])"], timeout_s=30)
    token = outcome.stdout.strip()
    assert len(token) == 32
    assert carriers(token) == []
    assert not any(alive(pid) for pid in carriers(token))
