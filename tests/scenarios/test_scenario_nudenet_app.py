"""A third real application in the broken stacks (issue 27): NudeNet 3.0.8, its own model, CUDA asked.

NudeNet's ``NudeDetector()`` creates its session with every provider the installed package has
(``C.get_available_providers()`` in its own code), on a picture the test application draws. In
each broken stack it runs as a service; ``diagnose --pid`` must name the cause ``--python VENV
--log app.log`` names, with a fix that installs into the application's environment; ``check
--pid`` says CRITICAL; ``explain-log`` on its stderr names the same cause where ONNX Runtime
wrote one; and the advice of ``--pid``, followed round by round with the service restarted,
leaves only the driver (TensorRT, which NudeNet asks for first, aside: its wheels download from
NVIDIA's index, which this machine cannot reach). In the CUDA 12 build it does not yet: see
TENSORRT_FIRST_DEFECT.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scenario_runs as runs
import scenario_stacks as stacks
from test_scenario_running_app import (
    HARDWARE,
    RunningApp,
    diagnose,
    first_cause,
    follow_pid_advice,
    running,
    same_file,
    stack_copy,
    tool_env,
)

pytestmark = [pytest.mark.scenario, pytest.mark.slow]

__all__ = ["running"]  # the fixture, shared with the RapidOCR tests

NUDENET_APP = Path(__file__).resolve().parent / "nudenet_app.py"

#: NudeNet's broken stacks: stack -> (loader path relative to site-packages, whether ONNX Runtime
#: writes the failure to the log; on the CPU packages no GPU provider is available, so NudeNet
#: asks for none and nothing is written)
NUDENET_STACKS: dict[str, tuple[tuple[str, ...], bool]] = {
    "nudenet-cpu-only": ((), False),
    "nudenet-gpu-and-cpu": ((), False),
    "nudenet-gpu13-bare": ((), True),
    "nudenet-gpu13-cuda13-wheels": ((), True),
    "nudenet-gpu12-cuda13-wheels": ((runs.CU13_LIB,), True),
}


def start_nudenet(python: Path, env: dict[str, str], tmp: Path) -> RunningApp:
    """NudeNet as a service under ``python``; returns once it has run its model on the picture."""
    tmp.mkdir(exist_ok=True)
    app = RunningApp([str(python), str(NUDENET_APP), str(tmp / "picture.png"), "300"], env, tmp / "app.log")
    # it really ran its own model: the session's providers (the CPU in every broken stack) and a count
    assert app.said.startswith("ready ") and "CPUExecutionProvider" in app.said, app.said
    return app


def stack_env(site: Path, stack_name: str) -> dict[str, str]:
    """The application's environment: clean, with the stack's loader path where it has one."""
    env = stacks.clean_env()
    if NUDENET_STACKS[stack_name][0]:
        env["LD_LIBRARY_PATH"] = ":".join(str(site / p) for p in NUDENET_STACKS[stack_name][0])
    return env


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    """``fallback-doctor ARGS`` from the technician's shell."""
    return subprocess.run(
        [*runs.tool_command(), *args], capture_output=True, text=True, env=tool_env(), timeout=300
    )


@pytest.mark.parametrize("stack_name", sorted(NUDENET_STACKS))
def test_nudenet_in_a_broken_stack_pid_agrees_with_python_log_explain_log_and_check(
    stack_name: str, stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    st = stack(stack_name)
    env = stack_env(stacks.site_packages(st), stack_name)
    app = start_nudenet(st.python_exe, env, tmp_path)
    running.append(app)
    by_pid = diagnose("--pid", str(app.pid), env=tool_env())
    by_files = diagnose("--python", str(st.path), "--log", str(app.log), env=env)
    cause = first_cause(by_files)
    assert first_cause(by_pid)["id"] == cause["id"], (
        f"--pid:\n{by_pid.describe()}\n--python --log:\n{by_files.describe()}"
    )
    assert same_file(by_pid.doc["target"]["python"], st.python_exe)
    commands = json.dumps(first_cause(by_pid).get("remediation") or {})
    assert sys.executable not in commands
    if "pip" in commands:
        assert str(st.path / "bin" / "python") in commands, commands
    check = tool("check", "--pid", str(app.pid), "--log", str(app.log))
    assert check.returncode == 2 and check.stdout.startswith("CRITICAL - "), check.stdout + check.stderr
    said = "(nothing: no GPU provider to ask for)"
    if NUDENET_STACKS[stack_name][1]:
        explained = tool("explain-log", "--json", str(app.log))
        said = json.loads(explained.stdout)["causes"][0]["cause"]
        assert said == cause["cause"], explained.stdout[:3000]
    else:
        assert app.log.read_text().strip() == "", app.log.read_text()[:2000]
    print(f"\n[{stack_name}] --pid: {first_cause(by_pid)['id']}; --python --log: {cause['id']}; "
          f"explain-log: {said}; check: {check.stdout.split(' | ')[0]}")  # fmt: skip


# The CUDA 12 stack found a defect: once its libraries were on the loader path, NudeNet's TensorRT
# (asked first) still could not load libnvinfer.so.10 and ONNX Runtime 1.23.2's Python binding fell
# back to ['CPUExecutionProvider'] alone, never opening CUDA; --pid alone said "the application
# does not ask for the GPU". The process's own output file (/proc/PID/fd/2, where ONNX Runtime
# wrote "Failed to load library libonnxruntime_providers_tensorrt.so") is now read as its log.
@pytest.mark.parametrize("stack_name", sorted(NUDENET_STACKS))
def test_following_the_pid_advice_on_nudenet_leaves_only_the_driver(
    stack_name: str, stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    """The advice of ``--pid`` followed on a copy of the stack, the service restarted each round:
    every install goes into the application's environment, and only the driver is left."""
    from apply_steps import Applied

    python, site = stack_copy(stack, stack_name, tmp_path)
    applied = Applied(stack_env(site, stack_name))

    def start(round_: int) -> RunningApp:
        return start_nudenet(python, applied.env, tmp_path / f"round{round_}")

    followed, diag = follow_pid_advice(start, python, applied, running)
    left = [f["id"] for f in diag.findings if f["severity"] != "info"]
    print(f"\n[{stack_name}] followed: {followed}; done: {applied.done}; left: {left}")
    errors = {f["layer"] for f in diag.findings if f["severity"] in ("critical", "error")}
    assert errors and errors <= {*HARDWARE, "tensorrt"}, diag.describe()
    assert errors & set(HARDWARE), diag.describe()
