"""The frozen one-folder build, run as a technician would: ``env -i``, from an empty folder.

Every answer is compared with the pip-installed tool's (``python -m fallback_doctor`` of this
environment) on the same machine and the same target: the same verdict and findings, the same
test-inference outcome. The broken stacks are the real ones of tests/scenarios (onnxruntime-gpu
without any CUDA library) and a Bareun-like installation whose libPath holds the real
onnxruntime-gpu 1.31.1 libraries (tests/core/targets/bareun_layout.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "scenarios"))
sys.path.insert(0, str(ROOT / "tests" / "core" / "targets"))

import scenario_stacks as stacks  # noqa: E402
from bareun_layout import make_install  # noqa: E402

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(1800)]

PIP_TOOL = [sys.executable, "-m", "fallback_doctor"]
FAST = ("--runs", "3")

# ONNX Runtime's own message when the CUDA provider library cannot load one of its CUDA
# libraries (corpus ort-001: github.com/stepfun-ai/Step-Audio-EditX/issues/3).
ORT_LOG = (
    "2025-11-08 19:02:18.488301611 [E:onnxruntime:Default, provider_bridge_ort.cc:1546 "
    "TryGetProviderInfo_CUDA] "
    "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
    "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
    "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: "
    "No such file or directory\n"
)


def run(cmd: list[str], cwd: Path, extra_env: dict[str, str] | None = None, timeout: float = 300) -> Any:
    """``env -i [extra] cmd`` in ``cwd``: nothing of this shell's environment reaches the tool."""
    assignments = [f"{key}={value}" for key, value in (extra_env or {}).items()]
    return subprocess.run(
        ["env", "-i", *assignments, *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def document(proc: Any) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as error:
        raise AssertionError(
            f"not one JSON document (rc={proc.returncode}): {error}\n{proc.stderr[-3000:]}"
        ) from None
    return doc


def findings(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["id"], item["severity"]) for item in doc["findings"]]


def inference_outcome(doc: dict[str, Any]) -> dict[str, Any]:
    """What the test inference found, without timings: verdicts, providers, the outputs' hashes.

    The report's ``inference`` (schema 2): the CPU baseline's session and the GPU retry's strategies.
    """
    inference = doc.get("inference") or {}
    retry = inference.get("gpu_retry") or {}
    strategies = []
    for item in retry.get("strategies") or []:
        gpu = item.get("gpu") or {}
        strategies.append(
            {
                "name": item.get("name"),
                "stage": item.get("stage"),
                "verdict": gpu.get("verdict"),
                "active": gpu.get("active_providers"),
                "outputs": [out.get("sha256") for out in gpu.get("outputs") or []],
            }
        )
    session = (inference.get("cpu_baseline") or {}).get("session") or {}
    return {
        "verdict": inference.get("verdict"),
        "gpu_verified": inference.get("gpu_verified"),
        "kind": retry.get("kind"),
        "failure": bool(retry.get("failure")),
        "cpu_active": session.get("active_providers"),
        "cpu_outputs": [out.get("sha256") for out in session.get("outputs") or []],
        "strategies": strategies,
    }


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_quick_diagnosis_matches_the_pip_installed_tool(frozen_exe: Path, empty: Path) -> None:
    frozen = document(run([str(frozen_exe), "diagnose", "--quick", "--json"], empty))
    # A frozen build has no interpreter of its own: it diagnoses python3 of the PATH.
    python = frozen["target"]["python"]
    assert Path(python).name.startswith("python3"), frozen["target"]
    pip = document(run([*PIP_TOOL, "diagnose", "--quick", "--json", "--python", python], empty))
    assert frozen["verdict"] == pip["verdict"]
    assert findings(frozen) == findings(pip)
    # The build's own folder is nowhere in the environment the diagnosis reports.
    assert str(frozen_exe.parent) not in json.dumps(frozen["environment"].get("environment"))
    assert frozen["environment"]["native"]["outcome"] == pip["environment"]["native"]["outcome"]


def test_the_archive_a_technician_carries_unpacks_and_runs_anywhere(
    frozen_exe: Path, empty: Path, tmp_path: Path
) -> None:
    """The .tar.gz beside the folder, unpacked where a technician would put it (not the build
    folder), answers the same as the folder it was made from."""
    import tarfile

    (archive,) = frozen_exe.parent.parent.glob("fallback-doctor-*-linux-x86_64.tar.gz")
    unpacked = tmp_path / "carried"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="tar")
    (exe,) = unpacked.glob("fallback-doctor-*/fallback-doctor")
    carried = document(run([str(exe), "diagnose", "--quick", "--json"], empty))
    built = document(run([str(frozen_exe), "diagnose", "--quick", "--json"], empty))
    assert carried["verdict"] == built["verdict"] and findings(carried) == findings(built)
    assert str(unpacked) not in json.dumps(carried["environment"].get("environment"))


def test_explain_log_and_bundle_show(frozen_exe: Path, empty: Path, tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text(ORT_LOG, encoding="utf-8")
    frozen = run([str(frozen_exe), "explain-log", str(log)], empty)
    pip = run([*PIP_TOOL, "explain-log", str(log)], empty)
    assert frozen.returncode == pip.returncode, frozen.stderr
    assert frozen.stdout == pip.stdout
    assert "cuda_runtime_missing" in frozen.stdout

    bundle = tmp_path / "case.zip"
    made = run([str(frozen_exe), "diagnose", "--quick", "--json", "--bundle", str(bundle)], empty)
    assert bundle.is_file(), made.stderr[-2000:]
    shown = run([str(frozen_exe), "bundle", "show", "--json", str(bundle)], empty)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert findings(document(shown)) == findings(document(made))
    verified = run([str(frozen_exe), "bundle", "verify", str(bundle)], empty)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_every_subcommand_answers_help(frozen_exe: Path, empty: Path) -> None:
    top = run([str(frozen_exe), "--help"], empty)
    assert top.returncode == 0, top.stderr
    commands = re.findall(r"^    (\w[\w-]+)\s", top.stdout, re.MULTILINE)
    assert {"diagnose", "explain-log", "test-inference", "bundle"} <= set(commands), top.stdout
    for command in commands:
        proc = run([str(frozen_exe), command, "--help"], empty)
        assert proc.returncode == 0, f"{command}: {proc.stderr[-1000:]}"
    version = run([str(frozen_exe), "--version"], empty)
    assert version.stdout.strip().startswith("fallback-doctor "), version


def test_the_wizards_first_page_paints_offscreen(frozen_exe: Path, empty: Path, tmp_path: Path) -> None:
    picture = tmp_path / "first-page.png"
    proc = run(
        [str(frozen_exe), "--run-module", "gfd_first_paint", str(picture)],
        empty,
        {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert facts["page"].startswith("Step 1 of"), facts
    assert facts["distinct"] > 10, facts  # text, buttons and frames: not a blank window
    assert picture.stat().st_size > 10_000
    assert "qt.qpa.plugin" not in proc.stderr, proc.stderr[-2000:]


def test_without_a_display_gui_is_the_headless_command(frozen_exe: Path, empty: Path) -> None:
    """No display under env -i: `gui --help` is gui's own usage (issue 13), from the frozen build too."""
    proc = run([str(frozen_exe), "gui", "--help"], empty)
    assert proc.returncode == 0, proc.stderr
    assert "usage: fallback-doctor gui" in proc.stdout
    assert "--bundle" in proc.stdout


def test_a_python_stack_without_cuda_libraries(frozen_exe: Path, empty: Path) -> None:
    """onnxruntime-gpu 1.31.1 without any CUDA library: findings and test inference as pip's."""
    stack = stacks.STACKS["gpu13-bare"]
    stacks.build(stack)
    cmd = ["diagnose", "--json", *FAST, "--python", str(stack.python_exe)]
    frozen = document(run([str(frozen_exe), *cmd], empty))
    pip = document(run([*PIP_TOOL, *cmd], empty))
    assert ("cuda.runtime_missing", "error") in findings(frozen)
    assert findings(frozen) == findings(pip)
    assert inference_outcome(frozen) == inference_outcome(pip)
    assert inference_outcome(frozen)["verdict"] == "fell_back_to_cpu"


def bareun_documents(frozen_exe: Path, root: Path, cwd: Path, ld_debug: Path) -> tuple[dict[str, Any], ...]:
    cmd = ["diagnose", "--json", *FAST, "--target", "bareun", "--bareun-root", str(root)]
    debug = {"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(ld_debug / "ld")}
    frozen = document(run([str(frozen_exe), *cmd], cwd, debug))
    pip = document(run([*PIP_TOOL, *cmd], cwd))
    return frozen, pip


def test_a_bareun_libpath_and_what_its_probe_children_load(
    frozen_exe: Path, empty: Path, tmp_path: Path
) -> None:
    """The real onnxruntime-gpu 1.31.1 libraries in libPath, no CUDA: the C-API probe runs in the
    frozen executable re-invoked; LD_DEBUG=libs of every child shows where each library came from."""
    root = make_install(tmp_path, lib="gpu")
    ld_debug = tmp_path / "ld-debug"
    ld_debug.mkdir()
    frozen, pip = bareun_documents(frozen_exe, root, empty, ld_debug)
    assert findings(frozen) == findings(pip)
    assert inference_outcome(frozen) == inference_outcome(pip)
    assert inference_outcome(frozen)["kind"] == "capi"

    build = str(frozen_exe.parent)
    probes = [log for log in ld_debug.iterdir() if str(root / "lib") in log.read_text(errors="replace")]
    assert probes, "no child loaded the libPath's libraries"
    for log in probes:
        text = log.read_text(errors="replace")
        # The build's folder is not on the loader's search path of a child that loads the target.
        searched = [entry for value in re.findall(r"search path=(\S+)", text) for entry in value.split(":")]
        assert not [entry for entry in searched if entry.startswith(build)], log
        loaded = {Path(path).name: path for path in re.findall(r"calling init: (\S+)", text)}
        for needed in set(re.findall(r"file=(\S+) \[0\];\s+needed by " + re.escape(str(root)), text)):
            where = loaded.get(needed, "")
            assert not where.startswith(build), (
                f"{needed}, needed by the target, came from the build: {where}"
            )
        for path in re.findall(r"calling init: (\S+)", text):
            name = Path(path).name
            if re.match(r"lib(onnxruntime|cudart|cublas|cudnn|cuda|nvinfer|stdc\+\+|gcc_s|z\.)", name):
                assert not path.startswith(build), f"{path}: the target's library came from the build"


def step(cmd: list[str], request: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """One wizard step in its child process (what gui/jobs.py starts), its result event's data."""
    proc = subprocess.run(
        ["env", "-i", *cmd],
        input=json.dumps(request),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    results = [event for event in events if event.get("event") == "result"]
    assert results, f"rc={proc.returncode} {events[-3:]} {proc.stderr[-2000:]}"
    data: dict[str, Any] = results[-1]["data"]
    return data


def test_the_wizards_steps_run_in_the_frozen_executable(
    frozen_exe: Path, empty: Path, tmp_path: Path
) -> None:
    """The wizard runs each step as ``--run-module fallback_doctor.core.flow.step_child``: the inspection
    and the CPU baseline on a Bareun-like libPath give what the pip-installed tool's steps give."""
    root = make_install(tmp_path, lib="gpu")
    target = {"kind": "bareun", "bareun_root": str(root)}
    frozen_cmd = [str(frozen_exe), "--run-module", "fallback_doctor.core.flow.step_child"]
    pip_cmd = [sys.executable, "-m", "fallback_doctor.core.flow.step_child"]
    inspection = step(frozen_cmd, {"step": "diagnose", "target": target}, empty)
    assert findings(inspection) == findings(step(pip_cmd, {"step": "diagnose", "target": target}, empty))
    options = {"runs": 2, "warmup": 1}
    frozen_cpu = step(frozen_cmd, {"step": "cpu", "target": target, "options": options}, empty)
    pip_cpu = step(pip_cmd, {"step": "cpu", "target": target, "options": options}, empty)
    assert json.dumps(frozen_cpu, sort_keys=True).count("sha256") == json.dumps(
        pip_cpu, sort_keys=True
    ).count("sha256")
    hashes = re.findall(r'"sha256": "([0-9a-f]{64})"', json.dumps(frozen_cpu))
    assert hashes and hashes == re.findall(r'"sha256": "([0-9a-f]{64})"', json.dumps(pip_cpu))
