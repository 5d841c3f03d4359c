"""The children `diagnose` starts before its imports: taken when they fit, killed when not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from fallback_doctor.core.flow.diagnosis import exit_code_for
from fallback_doctor.core.readers.collect import early
from fallback_doctor.core.readers.collect.native import collect_native, start_native

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups")


def test_the_native_child_started_early_is_taken_only_for_the_same_environment() -> None:
    env = dict(os.environ)
    early.start_native(sys.executable, env)
    assert early.take_native(sys.executable, {**env, "CUDA_VISIBLE_DEVICES": "-1"}) is None
    started = start_native(env)  # the collector's call takes the early one
    assert early.take_native(sys.executable, env) is None
    facts = collect_native([], env, started=started)
    assert facts.outcome == "ok", facts
    assert facts.libcuda is not None  # the driver-first probe ran in that child


def test_children_not_taken_are_killed_at_exit() -> None:
    code = (
        "import os, sys, json\n"
        "from fallback_doctor.core.readers.collect import early\n"
        "early.start_diagnose_children(sys.executable, dict(os.environ))\n"
        "print(json.dumps([c.process.pid for c in [*early._STARTED.values(), *early._NATIVE.values()]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    pids = json.loads(done.stdout)
    assert len(pids) == 2
    time.sleep(0.2)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_program_exits_with_the_whole_report_and_its_status() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "diagnose", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    document = json.loads(done.stdout)  # complete: flushed before the fast exit
    assert done.returncode in (0, 1), done.stderr
    assert done.returncode == exit_code_for(document["verdict"])
    collectors = {item["name"]: item for item in document["environment"]["collectors"]}
    assert collectors["native"]["ok"] and collectors["python"]["ok"], collectors
