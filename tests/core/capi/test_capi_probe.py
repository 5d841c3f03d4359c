"""The C-API probe on real ONNX Runtime libraries: onnxruntime-node's CPU library and the GPU wheel's.

No GPU and no NVIDIA driver here: the GPU retry is exercised up to the furthest stage reachable
(the CUDA provider's libraries missing, or loaded but no driver); the "GPU active" verdict path is
not exercised on a GPU here.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from fallback_doctor.core.readers.inference.capi import lib_path_first_env, run_capi_probe
from fallback_doctor.core.readers.inference.result import FailureKind, ProbeResult, Stage, Verdict

REPO = Path(__file__).resolve().parents[3]
ADD = REPO / "tests" / "scenarios" / "data" / "add.onnx"
ENCODER = REPO / "resources" / "model" / "encoder.onnx"
SMALL = {"runs": 5, "warmup": 1, "threads": 1, "nice": 0}


def _env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root")}
    env.update(extra)
    return env


def _probe(
    lib: Path | str,
    model: Path = ADD,
    timeout_s: float = 60,
    env: dict[str, str] | None = None,
    **request: object,
) -> ProbeResult:
    return run_capi_probe(str(lib), str(model), {**SMALL, **request}, env or _env(), timeout_s)


def _children_alive() -> list[str]:
    """The C API probe children still running: this test process's, and any left to init (an
    orphan, whoever started it); not another test worker's child still at work."""
    import psutil

    ours = {child.pid for child in psutil.Process().children(recursive=True)}
    found = []
    for process in psutil.process_iter(["pid", "ppid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or ())
        if "ort_capi_child.py" in cmdline and (process.info["pid"] in ours or process.info["ppid"] == 1):
            found.append(cmdline)
    return found


@pytest.fixture(scope="module")
def npm_add(npm_ort: Path) -> ProbeResult:
    return _probe(npm_ort)


def test_cpu_baseline_through_the_c_api(npm_add: ProbeResult, npm_ort: Path) -> None:
    result = npm_add
    assert result.kind == "capi" and result.completed and result.failure is None
    assert result.runtime.ort_version == "1.23.2"
    assert result.runtime.ort_location == str(npm_ort)
    assert "CPUExecutionProvider" in result.runtime.available_providers
    assert any("ONNX Runtime 1.23.2 ran" in note and str(npm_ort) in note for note in result.notes)
    cpu = result.cpu
    assert cpu is not None and cpu.error is None and cpu.latency is not None
    assert cpu.latency.runs == 5 and cpu.latency.warmup == 1
    assert 0 < cpu.latency.min_ms <= cpu.latency.p50_ms <= cpu.latency.p95_ms <= cpu.latency.p99_ms
    assert cpu.latency.p99_ms <= cpu.latency.max_ms
    assert cpu.nodes_per_provider == {"CPUExecutionProvider": 1}
    (digest,) = cpu.outputs
    assert digest.name == "Z" and digest.dtype == "float32" and digest.shape == (1, 4)
    assert len(digest.sha256) == 64 and len(digest.head) == 4
    assert result.model is not None and [i.name for i in result.model.inputs] == ["X", "Y"]
    names = [p.name for p in result.phases]
    assert names[:4] == ["import", "cpu.session", "cpu.warmup", "cpu.timed"]
    assert all(p.ok for p in result.phases if p.name != "gpu.strict")
    assert result.cost.import_s and result.cost.cpu_session_create_s and result.cost.total_s
    assert result.cost.process_start_s is not None and result.cost.process_start_s > 0


def test_cuda_on_the_cpu_library_fails_with_onnx_runtimes_own_words(npm_add: ProbeResult) -> None:
    strategy = npm_add.as_is
    assert strategy is not None and strategy.gpu is not None
    gpu = strategy.gpu
    # ONNX Runtime's own message, quoted: the provider bridge library is not shipped by npm.
    assert gpu.error is not None and "SessionOptionsAppendExecutionProvider_CUDA_V2 failed" in gpu.error
    assert "libonnxruntime_providers_shared.so" in gpu.error
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU
    assert strategy.stage == Stage.RUNTIME_LOADED
    assert gpu.active_providers == ("CPUExecutionProvider",)
    assert gpu.nodes_per_provider == {"CPUExecutionProvider": 1}
    assert gpu.comparison is not None and gpu.comparison.equal and gpu.comparison.bitwise_equal
    assert gpu.strict is not None and gpu.strict.attempted and not gpu.strict.session_created
    assert gpu.strict.error is not None
    assert "fallback to CPU EP has been explicitly disabled" in gpu.strict.error
    assert gpu.gpu_memory is not None and "NVML" in gpu.gpu_memory.note


def test_encoder_model_symbolic_dims_and_node_counts(npm_ort: Path, tmp_path: Path) -> None:
    if not ENCODER.is_file():
        pytest.skip("resources/model/encoder.onnx is not generated yet")
    dims = {"batch": 2, "seq": 16}
    result = _probe(npm_ort, ENCODER, dims=dims, baseline_dir=str(tmp_path), gpu_retry=False)
    assert result.completed and result.model is not None
    assert [i.resolved_shape for i in result.model.inputs] == [(2, 16), (2, 16)]
    assert result.model.inputs[0].shape == ("batch", "seq")
    assert result.model.batch_size == 2
    assert result.cpu is not None and result.cpu.latency is not None
    assert result.cpu.latency.items_per_s == pytest.approx(result.cpu.latency.batches_per_s * 2)
    assert result.cpu.nodes_per_provider.get("CPUExecutionProvider", 0) > 10
    assert result.cpu.outputs[0].shape == (2, 2)
    # A later child with no CPU baseline of its own compares with the stored one.
    later = _probe(
        npm_ort,
        ENCODER,
        dims={"batch": 2, "seq": 16},
        baseline_dir=str(tmp_path),
        cpu_baseline=False,
        strict=False,
    )
    gpu = later.as_is.gpu if later.as_is else None
    assert gpu is not None and gpu.comparison is not None and gpu.comparison.equal
    assert later.cpu is not None and later.cpu.latency is None


def test_gpu_wheel_library_without_cuda_libraries(gpu_wheel_ort: Path) -> None:
    result = _probe(gpu_wheel_ort)
    assert result.runtime.ort_version == "1.31.1"
    assert "CUDAExecutionProvider" in result.runtime.available_providers
    gpu = result.as_is.gpu if result.as_is else None
    assert gpu is not None and gpu.error is not None
    # The provider library is there; one of its CUDA dependencies is not (ONNX Runtime's words).
    assert "libonnxruntime_providers_cuda.so" in gpu.error and "cannot open shared object file" in gpu.error
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU
    assert result.best_strategy is not None and result.best_strategy.stage == Stage.RUNTIME_LOADED


def test_tensorrt_first_then_cuda(gpu_wheel_ort: Path, tmp_path: Path) -> None:
    providers = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    result = _probe(gpu_wheel_ort, providers=providers, trt_cache_dir=str(tmp_path / "trt"))
    gpu = result.as_is.gpu if result.as_is else None
    assert gpu is not None and gpu.requested_providers == tuple(providers)
    assert gpu.error is not None
    # ONNX Runtime's words: the TensorRT provider library is there, a dependency of it is not.
    trt = gpu.error.split("; CUDAExecutionProvider:")[0]
    assert trt.startswith("TensorrtExecutionProvider:") and "libonnxruntime_providers_tensorrt.so" in trt
    assert "cannot open shared object file" in trt
    assert "CUDAExecutionProvider:" in gpu.error
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU


@pytest.mark.scenario
def test_lib_path_first_reaches_further_on_1_23(request: pytest.FixtureRequest) -> None:
    """gpu12-full (onnxruntime-gpu 1.23.2 + every CUDA 12 wheel): the libraries load, no driver."""
    sys.path.insert(0, str(REPO / "tests" / "scenarios"))
    import scenario_stacks as stacks

    stack = stacks.STACKS["gpu12-full"]
    stacks.build(stack)
    site = stacks.site_packages(stack)
    (lib,) = sorted((site / "onnxruntime" / "capi").glob("libonnxruntime.so.1*"))
    env = lib_path_first_env(_env(), [str(d) for d in stacks.nvidia_lib_dirs(stack)])
    result = _probe(lib, env=env, strategy="lib_path_first")
    strategy = result.strategies[0]
    assert strategy.name == "lib_path_first" and strategy.stage == Stage.LIBRARIES_LOADED
    gpu = strategy.gpu
    assert gpu is not None and gpu.verdict == Verdict.FAILED
    # Through the C API a CUDA provider that cannot start fails the session (no silent fallback).
    assert gpu.error is not None and "CreateSession failed" in gpu.error and "CUDA failure 35" in gpu.error
    assert gpu.strict is not None and gpu.strict.error is not None and "CUDA failure 35" in gpu.strict.error


def test_missing_library_is_a_sentence(tmp_path: Path) -> None:
    result = _probe(tmp_path / "nowhere" / "libonnxruntime.so.1")
    assert result.failure is not None and result.failure.kind == FailureKind.START
    assert "could not be loaded" in result.failure.sentence
    assert "No such file" in result.failure.sentence or "cannot open" in result.failure.sentence
    assert result.strategies[0].stage == Stage.NOTHING and not result.completed


def test_a_library_that_is_not_onnx_runtime(tmp_path: Path) -> None:
    fake = tmp_path / "libonnxruntime.so.1"
    fake.write_bytes(b"\x7fELF this is not a library")
    result = _probe(fake)
    assert result.failure is not None and result.failure.kind == FailureKind.START
    assert str(fake) in result.failure.sentence
    libz = next(
        (
            p
            for p in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1")
            if Path(p).exists()
        ),
        None,
    )
    if libz:
        other = _probe(libz)
        assert other.failure is not None and other.failure.kind == FailureKind.ERROR
        assert "not an ONNX Runtime library" in other.failure.sentence


def test_missing_model_quotes_onnx_runtime(npm_ort: Path, tmp_path: Path) -> None:
    result = _probe(npm_ort, tmp_path / "missing.onnx")
    assert not result.completed
    assert result.cpu is not None and result.cpu.error is not None
    assert "CreateSession failed" in result.cpu.error and "missing.onnx" in result.cpu.error


def test_crash_becomes_a_sentence_with_the_phase(npm_ort: Path) -> None:
    result = _probe(npm_ort, test_mode="crash")
    failure = result.failure
    assert failure is not None and failure.kind == FailureKind.CRASH and failure.signal == "SIGSEGV"
    assert failure.phase == "gpu.session"
    assert failure.sentence.startswith("the probe crashed with SIGSEGV while creating the CUDA session")
    # What it did before the crash still counts.
    assert result.runtime.ort_version == "1.23.2"
    assert [p.name for p in result.phases][:4] == ["import", "cpu.session", "cpu.warmup", "cpu.timed"]
    assert result.phases[-1].name == "gpu.session" and result.phases[-1].end_s is None
    assert not _children_alive()


def test_hang_is_stopped_at_the_timeout(npm_ort: Path) -> None:
    started = time.monotonic()
    result = _probe(npm_ort, timeout_s=2, test_mode="hang")
    assert time.monotonic() - started < 10
    assert result.failure is not None and result.failure.kind == FailureKind.TIMEOUT
    assert "did not finish within 2 s" in result.failure.sentence
    assert not _children_alive()


def test_garbage_and_flood(npm_ort: Path) -> None:
    garbage = _probe(npm_ort, test_mode="garbage")
    assert garbage.failure is not None and garbage.failure.kind == FailureKind.GARBAGE
    assert "this is not JSON" in garbage.failure.sentence
    flood = _probe(npm_ort, test_mode="flood")
    assert flood.failure is not None and flood.failure.kind == FailureKind.FLOOD
    assert not _children_alive()


def test_lib_path_first_env_puts_directories_first() -> None:
    env = lib_path_first_env({"LD_LIBRARY_PATH": "/b:/a", "X": "1"}, ["/a", "/c"])
    assert env["LD_LIBRARY_PATH"] == "/a:/c:/b" and env["X"] == "1"
    assert lib_path_first_env({}, ["/x"])["LD_LIBRARY_PATH"] == "/x"


def test_the_child_runs_under_python_3_8(npm_ort: Path) -> None:
    """The child is stdlib-only and Python 3.8-compatible (a native target's host may be old)."""
    old = Path("/root/.pyenv/versions/3.8.18/bin/python")
    if not old.is_file():
        pytest.skip("no Python 3.8 here")
    result = run_capi_probe(str(npm_ort), str(ADD), SMALL, _env(), 60, python=str(old))
    assert result.completed and result.runtime.python_version is not None
    assert result.runtime.python_version.startswith("3.8")


def test_phases_and_the_pid_arrive_live_through_the_c_api(npm_ort: Path) -> None:
    """The child's phase lines reach on_phase while it runs; on_start has its PID first."""
    import psutil

    pids: list[int] = []
    heard: list[tuple[str, str, bool | None, bool]] = []

    def on_phase(name: str, edge: str, at: float, ok: bool | None) -> None:
        alive = psutil.Process(pids[0]).status() != psutil.STATUS_ZOMBIE
        heard.append((name, edge, ok, alive))

    result = run_capi_probe(
        str(npm_ort), str(ADD), SMALL, _env(), 60, on_phase=on_phase, on_start=pids.append
    )
    assert result.completed and pids == [result.runtime.pid]
    assert ("cpu.session", "start", None, True) in heard
    assert ("cpu.timed", "end", True, True) in heard
    assert all(alive for *_, alive in heard)
    starts = [name for name, edge, _, _ in heard if edge == "start"]
    assert starts == [mark.name for mark in result.phases]
    assert [o.name for o in result.outputs] == ["capi.stdout.txt", "capi.stderr.txt"]  # no strategy asked
