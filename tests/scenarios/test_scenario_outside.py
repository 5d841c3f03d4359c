"""A probe killed from outside never displaces the cause the static inspection found (issues
27 and 28).

``diagnose --quick`` on the GPU package without CUDA libraries, while a thread of the test
SIGKILLs every native probe child it sees (as the out-of-memory killer or a person would): the
first cause stays the missing CUDA libraries, the probe's end is a note ("killed from outside",
information), never "Loading a GPU library crashed the test process", and no finding shows
"ONNX Runtime ?".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario


def _descendants_running(root: int, marker: bytes) -> list[int]:
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if marker in cmdline and _under(int(name), root):
            found.append(int(name))
    return found


def _under(pid: int, root: int) -> bool:
    for _ in range(16):
        if pid == root:
            return True
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            return False
        pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        if pid <= 1:
            return False
    return False


def test_a_native_probe_killed_from_outside_is_a_note_below_the_static_cause(
    stack: Callable[[str], stacks.Stack],
) -> None:
    bare = stack("gpu13-bare")
    cmd = [*runs.tool_command(), "diagnose", "--python", str(bare.python_exe), "--json", "--quick"]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=stacks.clean_env())
    killed: list[int] = []
    done = threading.Event()

    def killer() -> None:
        while not done.is_set():
            for pid in _descendants_running(process.pid, b"native_child.py"):
                if pid not in killed:
                    killed.append(pid)
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        out, err = process.communicate(timeout=300)
    finally:
        done.set()
        thread.join()
    document = json.loads(out)
    findings = document["findings"]
    ids = [finding["id"] for finding in findings]
    assert len(killed) >= 2, (killed, err[-2000:])  # the first run and the one run again (at least)
    assert "probe.native_failed" not in ids, ids
    [note] = [finding for finding in findings if finding["id"] == "probe.interrupted"]
    assert note["severity"] == "info"
    text = runs.finding_text(note)
    assert "killed from outside with SIGKILL" in text and "not a crash" in text, text
    assert findings[0]["cause"] not in ("probe_failed", "collection_failed"), ids
    assert ids.index("probe.interrupted") > 0
    assert "ONNX Runtime ?" not in json.dumps(findings)
