"""The Python probe for real: the tool's own .venv (onnxruntime-gpu 1.31.1, no CUDA libraries here).

No GPU and no NVIDIA driver on this machine: the GPU retry falls back to the CPU, which is the
path under test. The "GPU active" verdict path is NOT exercised on a GPU here (see
test_inference_checks.py, which feeds it a constructed result).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from fallback_doctor.core.readers.inference.python_probe import run_python_probe
from fallback_doctor.core.readers.inference.result import (
    FailureKind,
    ProbeRequest,
    Stage,
    StrategyName,
    Verdict,
)

ROOT = Path(__file__).resolve().parents[3]
MODEL = str(ROOT / "resources" / "model" / "encoder.onnx")
SMALL = {"batch": 2, "seq": 16}


def _request(**changes: object) -> ProbeRequest:
    base: dict[str, object] = {
        "model": MODEL,
        "runs": 3,
        "warmup": 1,
        "dims": SMALL,
        "input_ranges": {"input_ids": (0, 1024)},
    }
    base.update(changes)
    return ProbeRequest(**base)  # type: ignore[arg-type]


RUN_ID = uuid.uuid4().hex


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env["GFD_PROBE_TEST_RUN"] = RUN_ID  # finds this run's probe processes, not a concurrent run's
    return env


def _probe_processes() -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info.get("cmdline") or [])
        if "ort_python_child.py" not in cmdline:
            continue
        try:
            if process.environ().get("GFD_PROBE_TEST_RUN") == RUN_ID:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.fixture(scope="module")
def fallback_result():  # type: ignore[no-untyped-def]
    return run_python_probe(sys.executable, _request(), env=_env(), strategies=(StrategyName.AS_IS,))


def test_cpu_baseline_in_a_python_target(fallback_result) -> None:  # type: ignore[no-untyped-def]
    result = fallback_result
    assert result.completed and result.failure is None
    assert result.runtime.ort_version == "1.31.1"
    cpu = result.cpu
    assert cpu is not None and cpu.latency is not None
    assert cpu.active_providers == ("CPUExecutionProvider",)
    assert cpu.latency.runs == 3 and cpu.latency.warmup == 1
    assert 0 < cpu.latency.p50_ms <= cpu.latency.p95_ms <= cpu.latency.p99_ms <= cpu.latency.max_ms
    assert cpu.latency.items_per_s == pytest.approx(cpu.latency.batches_per_s * 2)
    assert cpu.nodes_per_provider["CPUExecutionProvider"] > 50
    (logits,) = cpu.outputs
    assert logits.shape == (2, 2) and logits.dtype == "float32" and len(logits.sha256) == 64
    assert result.model is not None
    assert [i.resolved_shape for i in result.model.inputs] == [(2, 16), (2, 16)]
    assert [p.name for p in result.phases][:4] == ["import", "cpu.session", "cpu.warmup", "cpu.timed"]
    assert result.cost.process_start_s is not None and result.cost.import_s is not None


def test_gpu_retry_falls_back_with_ort_quoted(fallback_result) -> None:  # type: ignore[no-untyped-def]
    gpu = fallback_result.as_is.gpu
    assert gpu is not None
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU
    assert gpu.active_providers == ("CPUExecutionProvider",)
    assert fallback_result.as_is.stage == Stage.RUNTIME_LOADED
    quoted = "\n".join(gpu.ort_messages)
    assert "Failed to create CUDAExecutionProvider" in quoted
    assert "cannot open shared object file" in quoted
    assert gpu.strict is not None and gpu.strict.attempted and not gpu.strict.session_created
    assert "fallback to CPU EP has been explicitly disabled" in (gpu.strict.error or "")
    assert gpu.comparison is not None and gpu.comparison.equal and gpu.comparison.bitwise_equal
    assert gpu.gpu_memory is not None and gpu.gpu_memory.probe_bytes is None and gpu.gpu_memory.note


def test_other_dims_for_the_symbolic_model() -> None:
    result = run_python_probe(
        sys.executable,
        _request(dims={"batch": 3, "seq": 8}, gpu_retry=False),
        env=_env(),
        strategies=(StrategyName.AS_IS,),
    )
    assert result.model is not None
    assert [i.resolved_shape for i in result.model.inputs] == [(3, 8), (3, 8)]
    assert result.cpu is not None and result.cpu.outputs[0].shape == (3, 2)


@pytest.mark.parametrize(
    ("mode", "kind", "words"),
    [
        ("crash", FailureKind.CRASH, "crashed with SIGSEGV while creating the CUDA session"),
        ("garbage", FailureKind.GARBAGE, "something other than its JSON lines"),
        ("flood", FailureKind.FLOOD, "more output than is kept"),
    ],
)
def test_misbehaving_probe_becomes_a_failure_in_words(mode: str, kind: FailureKind, words: str) -> None:
    result = run_python_probe(
        sys.executable,
        _request(test_mode=mode, cpu_baseline=False),
        env=_env(),
        strategies=(StrategyName.AS_IS,),
        timeout_s=60,
    )
    assert result.failure is not None, result
    assert result.failure.kind == kind, result.failure
    assert words in result.failure.sentence
    assert result.as_is is not None and result.as_is.failure is not None
    if mode == "crash":
        assert result.failure.phase == "gpu.session" and result.failure.signal == "SIGSEGV"
        assert result.as_is.stage == Stage.RUNTIME_LOADED  # import had ended before the crash
        assert "about to crash on purpose" in result.failure.stderr_tail  # fd-level capture survived
    assert not _probe_processes()


def test_hang_is_killed_with_its_grandchild() -> None:
    started = time.monotonic()
    result = run_python_probe(
        sys.executable,
        _request(test_mode="hang", cpu_baseline=False),
        env=_env(),
        strategies=(StrategyName.AS_IS,),
        timeout_s=4,
    )
    assert time.monotonic() - started < 30
    assert result.failure is not None and result.failure.kind == FailureKind.TIMEOUT
    assert "did not finish within 4 s while creating the CUDA session" in result.failure.sentence
    assert not _probe_processes()


def test_test_mode_is_ignored_without_the_test_variable() -> None:
    from fallback_doctor.core.readers.inference import python_probe

    request = _request(test_mode="crash", cpu_baseline=False)
    # run_child_once sets the variable only when test_mode is set; prove the child checks it itself.
    import json
    import subprocess

    env = _env()
    env.pop(python_probe.TEST_ENV, None)
    proc = subprocess.run(
        [sys.executable, str(python_probe.child_script())],
        input=json.dumps(request.to_json()),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    assert '"event": "result"' in proc.stdout


def test_the_whole_test_inference_is_bounded_not_each_strategy() -> None:
    # A probe that hangs used to cost the timeout once per strategy (361 s for two of 180 s).
    started = time.monotonic()
    result = run_python_probe(
        sys.executable,
        _request(test_mode="hang", cpu_baseline=False),
        env=_env(),
        strategies=tuple(StrategyName),
        lib_dirs=[str(ROOT)],
        timeout_s=6,
    )
    assert time.monotonic() - started < 20
    first, *later = result.strategies
    assert first.failure is not None and first.failure.kind == FailureKind.TIMEOUT
    assert [s.name for s in later] == [StrategyName.PRELOAD_DLLS, StrategyName.LIB_PATH_FIRST]
    assert all("the test inference's 6 s were used up" in (s.skipped or "") for s in later)
    assert not _probe_processes()


def test_a_child_that_exits_without_a_result_says_so() -> None:
    from fallback_doctor.core.readers.inference.capi import parse_capi_output
    from fallback_doctor.core.readers.inference.python_probe import parse_child_output
    from fallback_doctor.core.readers.probes.runner import ChildOutcome

    begin = '{"event": "phase", "name": "gpu.session", "state": "start", "t": 0.1}\n'
    outcome = ChildOutcome(("python",), 0, begin, "", False, 0.5)
    python = parse_child_output(outcome, _request())
    assert python.failure is not None
    said = "the probe exited without writing its result while creating the CUDA session"
    assert python.failure.sentence == said
    capi_begin = '{"event": "begin", "phase": "gpu.session", "step": "phase", "t": 0.1}\n'
    capi = parse_capi_output(ChildOutcome(("python",), 0, capi_begin, "", False, 0.5), {})
    assert capi.failure is not None
    assert capi.failure.sentence.startswith("the probe exited without writing its result while creating")
    assert "finished" not in python.failure.sentence + capi.failure.sentence


def test_a_strategy_that_cannot_differ_is_skipped_with_the_reason() -> None:
    from fallback_doctor.core.language.texts import words_text
    from fallback_doctor.core.model.result import Words
    from fallback_doctor.core.readers.inference.python_probe import _strategy_env

    env = {"LD_LIBRARY_PATH": "/opt/lib:/usr/lib"}
    reason = _strategy_env(StrategyName.LIB_PATH_FIRST, env, sys.executable, ["/opt/lib"])
    assert isinstance(reason, Words)  # the reason is said by catalogue id, shown in each language
    assert words_text(reason) == "cannot differ from as is: LD_LIBRARY_PATH already starts with /opt/lib"
    assert words_text(reason, "ko").startswith("그대로 실행한 경우와 다를 수 없음")
    prepared = _strategy_env(StrategyName.LIB_PATH_FIRST, env, sys.executable, ["/srv/lib"])
    assert not isinstance(prepared, Words)
    assert prepared[1] == {"LD_LIBRARY_PATH": "/srv/lib:/opt/lib:/usr/lib"}


def test_the_child_and_its_parts_are_python38_and_staged_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The application's interpreter may be Python 3.8; the child runs from the work folder, so
    everything it imports (probe_shared.py, the python_child package) is copied beside it."""
    import subprocess
    from pathlib import Path

    from fallback_doctor.core.readers.inference import python_probe

    script = python_probe.stage_child(str(tmp_path))
    parts = [script, tmp_path / "probe_shared.py", *sorted((tmp_path / "python_child").glob("*.py"))]
    assert {p.name for p in parts} >= {"ort_python_child.py", "main.py", "capture.py", "sessions.py"}
    python38 = Path("/root/.pyenv/versions/3.8.18/bin/python3.8")
    if not python38.exists():
        pytest.skip("no Python 3.8 on this machine")
    for part in parts:
        subprocess.run([str(python38), "-m", "py_compile", str(part)], check=True, timeout=60)
