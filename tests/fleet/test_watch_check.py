"""`fallback-doctor check` and its textfile against REAL running servers.

The servers map real ONNX Runtime libraries: a Python server in a scenario environment that
created a session asking for CUDA (ONNX Runtime's own log lines in its log file), and processes
that dlopen a Bareun-like libPath's real library. The check runs as the CLI, as Nagios runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scenario_stacks as stacks
from fleet_hosts import bareun_host
from servers import loader, ort_server, workers_parent

pytestmark = [pytest.mark.scenario, pytest.mark.timeout(300)]

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is in the test extras")


def check(*args: str) -> tuple[int, str]:
    """``fallback-doctor check ARGS``: (exit status, the one line it printed)."""
    proc = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "check", *args],
        capture_output=True,
        text=True,
        env=stacks.clean_env(),
        timeout=120,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, (proc.stdout, proc.stderr)
    return proc.returncode, lines[0]


def metrics(path: Path) -> dict[str, list[Any]]:
    """The textfile parsed by Prometheus' own text-format parser: name -> samples."""
    families = parser.text_string_to_metric_families(path.read_text(encoding="utf-8"))
    return {family.name: list(family.samples) for family in families}


def perf(line: str) -> dict[str, str]:
    """The performance data after ``|``."""
    return dict(item.split("=", 1) for item in line.split(" | ", 1)[1].split())


def test_a_server_without_its_cuda_provider_is_critical_and_names_the_missing_library(tmp_path: Path) -> None:
    with ort_server("s3_no_cuda", tmp_path) as server:
        assert server.ready == "CPUExecutionProvider"  # ONNX Runtime itself fell back
        prom = tmp_path / "textfile" / "ort.prom"
        prom.parent.mkdir()
        code, line = check("--pid", str(server.pid), "--log", str(server.log), "--prometheus", str(prom))
    assert code == 2, line
    assert line.startswith("CRITICAL - python3.11 on the CPU: libcublasLt.so.13 not found | "), line
    data = perf(line)
    assert data["cuda_provider_loaded"] == "0" and data["onnxruntime_loaded"] == "1"
    assert data["gpu_memory_mib"] in ("0", "U")
    found = metrics(prom)
    [status] = found["fallback_doctor_check_status"]
    assert status.value == 2 and status.labels == {"target": "python3.11"}
    [loaded] = found["fallback_doctor_cuda_provider_loaded"]
    assert loaded.value == 0 and loaded.labels["pid"] == str(server.pid)
    [cause] = found["fallback_doctor_first_cause_info"]
    assert cause.labels["cause"] == "cuda_runtime_missing"
    assert [p.name for p in prom.parent.iterdir()] == ["ort.prom"]  # no temporary file left


def test_a_mapped_provider_is_no_proof_when_the_log_says_it_fell_back(tmp_path: Path) -> None:
    with ort_server("s9_cuda12_full_stack", tmp_path) as server:
        assert server.ready == "CPUExecutionProvider"  # no driver: the CUDA session failed
        maps = Path(f"/proc/{server.pid}/maps").read_text()
        assert "libonnxruntime_providers_cuda.so" in maps  # ... and the provider stayed mapped
        with_log = check("--pid", str(server.pid), "--log", str(server.log))
        without_log = check("--pid", str(server.pid), "--no-log", "--name", "encoder")
    code, line = with_log
    assert code == 2 and line.startswith("CRITICAL - python3.11 on the CPU: "), line
    assert perf(line)["cuda_provider_loaded"] == "1"
    code, line = without_log
    assert code == 1 and line.startswith("WARNING - encoder "), line  # GPU use not confirmed
    assert "cuda_provider_loaded=1" in line
    assert "(libcudart.so.12, libcudnn.so.9)" in line  # which CUDA runtime and cuDNN it mapped


def test_a_bareun_server_is_found_by_its_library_and_its_cpu_only_libpath_is_critical(tmp_path: Path) -> None:
    root = Path(bareun_host(tmp_path / "install", lib="cpu")["fallback_doctor_bareun_root"])
    library = root / "lib" / "libonnxruntime.so.1"
    prom = tmp_path / "bareun.prom"
    with loader([library], tmp_path / "server") as server:
        code, line = check("--bareun-root", str(root), "--prometheus", str(prom))
    assert code == 2, line
    assert line.startswith("CRITICAL - bareun on the CPU: "), line
    found = metrics(prom)
    [provider] = found["fallback_doctor_configured_provider_info"]
    assert provider.labels == {"target": "bareun", "provider": "cuda"}
    [onnxruntime] = found["fallback_doctor_onnxruntime_loaded"]
    assert onnxruntime.value == 1 and onnxruntime.labels["pid"] == str(server.pid)
    [cause] = found["fallback_doctor_first_cause_info"]
    assert cause.labels["cause"] == "ep_not_in_build", cause


def test_a_bareun_server_configured_for_the_cpu_is_ok(tmp_path: Path) -> None:
    import bareun_layout

    config = {**bareun_layout.SAMPLE_CONFIG, "executionProvider": {"provider": "cpu"}}
    root = Path(
        bareun_host(tmp_path / "install", lib="gpu", config=config, log=None)["fallback_doctor_bareun_root"]
    )
    with loader([root / "lib" / "libonnxruntime.so.1"], tmp_path / "server"):
        code, line = check("--bareun-root", str(root))
    assert code == 0 and line.startswith("OK - bareun runs on the CPU, as configured"), line


def test_a_process_that_maps_no_onnxruntime_is_a_warning(tmp_path: Path) -> None:
    with loader([], tmp_path) as server:
        code, line = check("--pid", str(server.pid), "--name", "idle")
    assert code == 1 and line.startswith("WARNING - idle (pid ") and "has not loaded ONNX Runtime" in line
    assert perf(line)["onnxruntime_loaded"] == "0"


def test_no_process_and_bad_targets_are_unknown(tmp_path: Path) -> None:
    with loader([], tmp_path) as server:
        pid = server.pid
    code, line = check("--pid", str(pid))  # it was killed: gone
    # A --pid that does not exist is said plainly (issue 10): "--pid N: no such process".
    assert code == 3 and line.startswith("UNKNOWN - ") and f"--pid {pid}: no such process" in line, line
    code, line = check("--bareun-root", str(tmp_path / "nothing"))
    assert code == 3 and "the target could not be read" in line
    prom = tmp_path / "unknown.prom"
    code, _ = check("--bareun-root", str(tmp_path / "nothing"), "--prometheus", str(prom))
    assert metrics(prom)["fallback_doctor_check_status"][0].value == 3
    assert json.dumps(sorted(metrics(prom)))  # parses


def test_a_parent_without_onnxruntime_is_judged_by_its_worst_worker(tmp_path: Path) -> None:
    root = Path(bareun_host(tmp_path / "install", lib="cpu")["fallback_doctor_bareun_root"])
    prom = tmp_path / "workers.prom"
    with workers_parent(
        "s9_cuda12_full_stack", [root / "lib" / "libonnxruntime.so.1"], tmp_path / "w"
    ) as parent:
        gpu_worker, cpu_worker = parent.ready.split()
        code, line = check("--pid", str(parent.pid), "--no-log", "--prometheus", str(prom))
    assert code == 2, line  # one worker runs a CPU-only ONNX Runtime
    assert line.startswith("CRITICAL - ") and f"(pid {cpu_worker}, the worst of 2 worker processes" in line
    loaded = {
        sample.labels["pid"]: sample.value for sample in metrics(prom)["fallback_doctor_cuda_provider_loaded"]
    }
    assert loaded == {gpu_worker: 1, cpu_worker: 0}  # the provider loaded, per process
