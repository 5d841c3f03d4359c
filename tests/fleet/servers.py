"""Real running servers for the check tests: processes that map real ONNX Runtime libraries.

``ort_server`` runs tests/fleet/ort_server.py under a scenario environment's interpreter (real
wheels: tests/scenarios/scenario_stacks.py), its stdout and stderr going to a log file as a
service's would. ``loader`` is a process that maps the given libraries with ctypes (a native server
such as Bareun loads its libPath's library the same way). Each is killed with its group on exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "scenarios"))

import scenario_runs as runs  # noqa: E402
import scenario_stacks as stacks  # noqa: E402

LOADER = """
import ctypes, sys
for path in sys.argv[2:]:
    ctypes.CDLL(path)
open(sys.argv[1], "w").write("ready")
sys.stdin.read()
"""


PARENT = """
import json, os, subprocess, sys, time
commands = json.loads(sys.argv[2])
children = [subprocess.Popen(command, stdin=subprocess.PIPE) for command, _ in commands]
while not all(os.path.exists(ready) and open(ready).read() for _, ready in commands):
    time.sleep(0.1)
open(sys.argv[1], "w").write(" ".join(str(child.pid) for child in children))
sys.stdin.read()
"""


@dataclass(frozen=True)
class Server:
    """A running server: its pid, its log file, what it said when ready."""

    pid: int
    log: Path
    ready: str


def ort_server(scenario_id: str, folder: Path) -> contextlib.AbstractContextManager[Server]:
    """tests/fleet/ort_server.py in a scenario's environment, with the scenario's library path."""
    folder.mkdir(parents=True, exist_ok=True)
    scenario = runs.SCENARIOS[scenario_id]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    ready = folder / "ready"
    command = [str(stack.python_exe), str(HERE / "ort_server.py"), str(runs.MODEL), str(ready)]
    return _running_cmd(command, scenario.env(), folder, ready)


def workers_parent(
    scenario_id: str, libraries: Sequence[str | Path], folder: Path
) -> contextlib.AbstractContextManager[Server]:
    """A parent that maps no ONNX Runtime, with two workers: ort_server.py in the scenario and a
    process that has mapped ``libraries``. ``ready`` holds the workers' pids."""
    folder.mkdir(parents=True, exist_ok=True)
    scenario = runs.SCENARIOS[scenario_id]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    first, second = folder / "ready-1", folder / "ready-2"
    commands = [
        ([str(stack.python_exe), str(HERE / "ort_server.py"), str(runs.MODEL), str(first)], str(first)),
        ([sys.executable, "-c", LOADER, str(second), *map(str, libraries)], str(second)),
    ]
    ready = folder / "ready"
    command = [sys.executable, "-c", PARENT, str(ready), json.dumps(commands)]
    return _running_cmd(command, scenario.env(), folder, ready)


@contextlib.contextmanager
def loader(
    libraries: Sequence[str | Path], folder: Path, env: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """A process that has mapped ``libraries`` with ctypes and then waits."""
    folder.mkdir(parents=True, exist_ok=True)
    ready = folder / "ready"
    command = [sys.executable, "-c", LOADER, str(ready), *map(str, libraries)]
    with _running_cmd(command, env or stacks.clean_env(), folder, ready) as server:
        yield server


@contextlib.contextmanager
def _running_cmd(
    command: Sequence[str], env: Mapping[str, str], folder: Path, ready: Path
) -> Iterator[Server]:
    log = folder / "server.log"
    ready.unlink(missing_ok=True)
    with open(log, "w") as out:
        child = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, env=dict(env),
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (ready.exists() and ready.read_text()):
            if child.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the server did not start (rc={child.poll()}): {log.read_text()[-3000:]}"
                )
            time.sleep(0.1)
        yield Server(child.pid, log, ready.read_text())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
