"""A ``--pid`` that names no process is said plainly: a usage error (exit 2), not ignored."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fallback_doctor.cli.main import main
from fallback_doctor.core.readers.collect.run import CollectRequest, collect_snapshot, process_exists
from fallback_doctor.core.readers.targets.profile import TargetNotFound
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_process_exists() -> None:
    import os

    assert process_exists(os.getpid())
    assert not process_exists(_gone_pid())


def test_a_gone_pid_is_a_usage_error_of_the_collection() -> None:
    pid = _gone_pid()
    request = CollectRequest(target=TargetSpec(kind=TargetKind.PYTHON, pid=pid))
    with pytest.raises(TargetNotFound, match=f"--pid {pid}: no such process"):
        collect_snapshot(request)


def test_diagnose_with_a_gone_pid_exits_2_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    pid = _gone_pid()
    assert main(["diagnose", "--quick", "--pid", str(pid)]) == 2
    assert f"--pid {pid}: no such process" in capsys.readouterr().err
