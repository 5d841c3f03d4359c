"""scripts/gpu-check.sh without a GPU: its plumbing, its assertions and its outputs.

The script runs for real against the fake driver libraries the driver tests build
(tests/fakes: libcuda.so.1 and libnvidia-ml.so.1 found through LD_LIBRARY_PATH) and the real
scenario stacks: every diagnosis, the NVML recorder, the expectations, the recordings and
docs/gpu-run.md. Only the GPU is missing, so the working-stack expectations must FAIL there and
the broken-stack ones must hold; the assertion logic is also shown to PASS on the shape of a
GPU-verified report. It has never run on a GPU here (no GPU on these machines).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-check.sh"
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "fakes"))
sys.path.insert(0, str(ROOT / "tests" / "scenarios"))

import fakebuild  # noqa: E402
import gpu_check  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a bash script for Linux GPU machines")


def test_the_script_parses_and_passes_shellcheck() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_without_a_gpu_and_without_fakes_it_refuses_to_start(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GPU_CHECK")}
    env["PATH"] = "/usr/bin:/bin"  # no nvidia-smi here
    done = subprocess.run(
        ["bash", str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2
    assert "nvidia-smi not found" in done.stderr
    done = subprocess.run(
        ["bash", str(SCRIPT), "--fake", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2 and "GPU_CHECK_FAKE_LIBS" in done.stderr


def _session(verdict: str, providers: dict[str, int], p50: float, memory: int | None) -> dict[str, Any]:
    return {
        "verdict": verdict,
        "nodes_per_provider": providers,
        "latency": {"p50_ms": p50},
        "gpu_memory": {"probe_bytes": memory},
    }


def _report_1(*, on_gpu: bool, causes: list[str]) -> dict[str, Any]:
    gpu = (
        _session("gpu_active", {"CUDAExecutionProvider": 104, "CPUExecutionProvider": 5}, 12.0, 512 << 20)
        if on_gpu
        else _session("fell_back_to_cpu", {"CPUExecutionProvider": 109}, 470.0, None)
    )
    return {
        "verdict": "gpu_verified" if on_gpu else "gpu_unusable",
        "findings": [{"cause": cause} for cause in causes],
        "environment": {
            "inference": {
                "verdict": "gpu_verified" if on_gpu else "fell_back_to_cpu",
                "gpu_verified": on_gpu,
                "result": {
                    "cpu": _session("cpu", {"CPUExecutionProvider": 109}, 480.0, None),
                    "strategies": [{"name": "as_is", "gpu": gpu}],
                },
            }
        },
    }


def _schema_2(report: dict[str, Any]) -> dict[str, Any]:
    """The same report in the document of schema 2 (the test inference at the top level)."""
    inference = report["environment"].pop("inference")
    result = inference.pop("result")
    inference["cpu_baseline"] = {"session": result["cpu"]}
    inference["gpu_retry"] = {"strategies": result["strategies"]}
    return {**report, "inference": inference}


@pytest.mark.parametrize("schema", [1, 2])
def test_the_expectations_hold_on_a_gpu_report_and_fail_on_a_fallback(tmp_path: Path, schema: int) -> None:
    def _report(**kwargs: Any) -> dict[str, Any]:
        made = _report_1(**kwargs)
        return made if schema == 1 else _schema_2(made)

    busy = tmp_path / "busy.csv"
    busy.write_text(
        "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
        "2026/12/03 08:00:00.000, 0, NVIDIA T4, 97 %, 900 MiB, 15360 MiB\n"
    )
    working = gpu_check.expectations("working", _report(on_gpu=True, causes=[]), str(busy))
    assert [ok for ok, _what, _evidence in working] == [True] * 5
    application = gpu_check.expectations("app_model", _report(on_gpu=True, causes=[]), str(busy))
    assert [ok for ok, _what, _evidence in application] == [True] * 5
    running = _report(on_gpu=True, causes=[])
    running["target"] = {"kind": "python", "pid": "4242", "python": "/srv/app/venv/bin/python"}
    assert all(ok for ok, _what, _evidence in gpu_check.expectations("pid_running", running, str(busy)))
    running["target"] = {"kind": "python"}
    assert not gpu_check.expectations("pid_running", running, str(busy))[-1][0]
    fell_back = gpu_check.expectations("working", _report(on_gpu=False, causes=[]), None)
    assert not any(ok for ok, _what, _evidence in fell_back)
    broken = gpu_check.expectations("cudnn_hidden", _report(on_gpu=False, causes=["cudnn_missing"]), None)
    assert all(ok for ok, _what, _evidence in broken)
    # The right finding with a GPU that still worked is not a fallback: both must show.
    wrong = gpu_check.expectations("cudnn_hidden", _report(on_gpu=True, causes=["tensorrt_missing"]), None)
    assert [ok for ok, _what, _evidence in wrong] == [False, False, False]


def test_the_pins_are_the_scenario_stacks() -> None:
    import scenario_stacks as stacks

    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_check.py"), "pins"],
        capture_output=True,
        text=True,
        check=True,
    )
    working, other = done.stdout.splitlines()
    assert stacks.ORT_GPU_CUDA13 in working.split() and stacks.CUDNN_CUDA13[0] in working.split()
    assert stacks.ORT_GPU_CUDA12 in other.split() and set(stacks.CUDA13_WHEELS) <= set(other.split())


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not fakebuild.gcc_available():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    folder = tmp_path_factory.mktemp("fake-driver")
    fakebuild.compile_library(
        "fake_libnvidia_ml.c",
        folder,
        "libnvidia-ml.so.580.65.06",
        {"FAKE_DRIVER_VERSION": "580.65.06"},
        links=("libnvidia-ml.so.1",),
    )
    fakebuild.compile_library(
        "fake_libcuda.c",
        folder,
        "libcuda.so.580.65.06",
        {"FAKE_DRIVER_VERSION": 13000},
        links=("libcuda.so.1",),
    )
    return folder


@pytest.mark.scenario
@pytest.mark.slow
def test_a_fake_run_goes_through_every_step(fake_driver: Path, tmp_path: Path) -> None:
    import scenario_stacks as stacks

    pythons = {}
    for name in ("gpu13-full", "gpu12-cuda13-wheels"):
        try:
            stacks.build(stacks.STACKS[name])
        except stacks.StackBuildError as error:
            pytest.fail(f"could not build scenario stack {name!r}: {error}", pytrace=False)
        pythons[name] = str(stacks.STACKS[name].python_exe)
    before = subprocess.run(
        ["git", "status", "--porcelain", "--", "tests/data/gpu_series", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    env = stacks.clean_env()
    env.update(
        GPU_CHECK_FAKE_LIBS=str(fake_driver),
        GPU_CHECK_TOOL_PYTHON=sys.executable,
        GPU_CHECK_APP_PYTHON=pythons["gpu13-full"],
        GPU_CHECK_OTHER_PYTHON=pythons["gpu12-cuda13-wheels"],
    )
    out = tmp_path / "out"
    done = subprocess.run(
        ["bash", str(SCRIPT), "--fake", "--out", str(out), "--runs", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    log = done.stderr
    assert done.returncode == 1, log  # the GPU expectations cannot hold without a GPU
    results = (out / "results.txt").read_text().splitlines()
    by_case: dict[str, list[str]] = {}
    for line in results:
        verdict, case, _rest = line.split(" ", 2)
        by_case.setdefault(case, []).append(verdict)
    assert set(by_case) == {
        "working",
        "app_model",
        "pid_running",
        "cudnn_hidden",
        "no_visible_gpu",
        "other_major",
    }, results
    assert by_case["working"] == by_case["app_model"] == ["FAIL"] * 5, results
    # The running process is described (its pid, its own interpreter) even where the GPU is fake.
    assert by_case["pid_running"] == ["FAIL"] * 5 + ["PASS"], results
    for case in ("cudnn_hidden", "no_visible_gpu", "other_major"):
        assert by_case[case] == ["PASS"] * 3, results
    # Each diagnosis really ran with the case's environment.
    for case in by_case:
        report = json.loads((out / "work" / f"{case}.json").read_text())
        assert gpu_check.inference_of(report).get("verdict") == "fell_back_to_cpu", case
    environment = json.loads((out / "work" / "no_visible_gpu.json").read_text())["environment"]
    assert environment["environment"].get("CUDA_VISIBLE_DEVICES") == "-1"
    # The recordings: five header lines, then a series the recording parsers read back.
    from fallback_doctor.core.readers.sampling.recordings import load_recording

    recordings = sorted((out / "gpu_series").glob("*.txt"))
    assert [path.name for path in recordings] == [
        "01-none-fake-libnvidia-ml-gfd-working.txt",
        "02-none-fake-libnvidia-ml-gfd-no-visible-gpu.txt",
    ]
    for path in recordings:
        lines = path.read_text().splitlines()
        assert [line.split(":")[0] for line in lines[:5]] == [
            "# source",
            "# gpu",
            "# workload",
            "# command",
            "# note",
        ]
        recording = load_recording(path)
        assert recording.format == "query-gpu-csv"
        assert recording.samples, recording.problems
        assert {sample.memory_total_mib for sample in recording.samples} == {24576.0}  # the fake's 24 GiB
    doc = (out / "docs" / "gpu-run.md").read_text()
    assert "fake driver libraries" in doc and "| FAIL | working |" in doc and "| PASS | other_major |" in doc
    assert "10 of 25 expectations held" in doc
    after = subprocess.run(
        ["git", "status", "--porcelain", "--", "tests/data/gpu_series", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert after == before  # a fake run writes nothing into the checkout
