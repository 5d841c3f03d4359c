"""Findings from probe results, the result JSON round trip, and the test-inference command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pytest
from fallback_doctor.cli import test_inference
from fallback_doctor.cli.common import UsageError
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.readers.inference.findings import (
    PYTHON_GUARD,
    cause_from_quote,
    gpu_verified,
    inference_findings,
)
from fallback_doctor.core.readers.inference.result import (
    FailureKind,
    LatencyStats,
    OutputComparison,
    ProbeFailure,
    ProbeResult,
    SessionRun,
    Stage,
    StrategyName,
    StrategyResult,
    StrictRun,
    Verdict,
)


def _latency(p50: float) -> LatencyStats:
    return LatencyStats(20, 3, p50, p50 * 1.1, p50 * 1.2, p50, p50 * 0.9, p50 * 1.3, 1000 / p50, 16000 / p50)


def test_gpu_active_path_constructed_not_exercised_on_a_gpu() -> None:
    """NOT EXERCISED ON A GPU: this machine has none; the result below is constructed by hand."""
    gpu = SessionRun(
        stage=Stage.INFERENCE_ON_GPU,
        requested_providers=("CUDAExecutionProvider", "CPUExecutionProvider"),
        active_providers=("CUDAExecutionProvider", "CPUExecutionProvider"),
        verdict=Verdict.GPU_ACTIVE,
        nodes_per_provider={"CUDAExecutionProvider": 105, "CPUExecutionProvider": 4},
        latency=_latency(12.0),
        comparison=OutputComparison(False, False, 0.5, 0.3, 1e-3, 1e-3, "logits differs: max |diff| 0.5"),
        strict=StrictRun(
            True, False, "FAIL : This session contains graph nodes that are assigned to the default CPU EP"
        ),
    )
    result = ProbeResult(
        completed=True,
        cpu=SessionRun(stage=Stage.SESSION_CREATED, latency=_latency(480.0)),
        strategies=(StrategyResult(StrategyName.AS_IS, Stage.INFERENCE_ON_GPU, gpu=gpu),),
    )
    assert gpu_verified(result)
    findings = {f.id: f for f in inference_findings(result)}
    assert "40.0x" in findings["inference.gpu_verified"].detail
    assert findings["inference.gpu_verified"].remediation.steps == PYTHON_GUARD  # type: ignore[union-attr]
    assert findings["inference.gpu_verified"].remediation.commands == ()  # type: ignore[union-attr]
    assert findings["inference.partial_placement"].title == "4 of 109 nodes stayed on the CPU"
    assert "logits differs" in findings["inference.outputs_differ"].detail
    # A GPU provider listed but no node placed on it is not verified.
    fake = ProbeResult(strategies=(StrategyResult(StrategyName.AS_IS, Stage.SESSION_CREATED, gpu=gpu),))
    assert not gpu_verified(fake)


def test_crash_is_a_probe_layer_finding() -> None:
    failure = ProbeFailure(
        FailureKind.CRASH,
        "the probe crashed with SIGSEGV while creating the CUDA session",
        phase="gpu.session",
        signal="SIGSEGV",
        stderr_tail="Segmentation fault",
    )
    result = ProbeResult(failure=failure, strategies=(StrategyResult(StrategyName.AS_IS, failure=failure),))
    (finding,) = inference_findings(result)
    assert finding.id == "inference.probe_failed" and finding.layer.value == "probe"
    assert "SIGSEGV while creating the CUDA session" in finding.title
    assert words_of(finding, "ko")["title"]


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        ("Failed to load library x.so with error: libcublasLt.so.12: cannot open", "cuda_runtime_missing"),
        ("with error: libcudnn.so.9: cannot open shared object file", "cudnn_missing"),
        ("with error: libcuda.so.1: cannot open shared object file", "driver_missing"),
        ("CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version", "driver_too_old"),
        (
            "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.",
            "ep_not_in_build",
        ),
        ("something else", "unknown"),
    ],
)
def test_cause_from_the_quoted_message(line: str, cause: str) -> None:
    assert cause_from_quote([line]) == cause


def test_result_json_round_trip() -> None:
    result = ProbeResult(
        completed=True,
        cpu=SessionRun(
            stage=Stage.SESSION_CREATED,
            latency=_latency(10.0),
            nodes_per_provider={"CPUExecutionProvider": 3},
        ),
        strategies=(StrategyResult(StrategyName.PRELOAD_DLLS, skipped="old"),),
    )
    assert ProbeResult.from_json(json.loads(json.dumps(result.to_json()))) == result
    assert ProbeResult.from_json({"completed": True, "unknown_key": 1}).completed


def _run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    test_inference.add_parser(parser.add_subparsers())
    args = parser.parse_args(["test-inference", *argv])
    return int(args.handler(args))


def test_cli_json_on_the_tools_own_runtime(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    monkeypatch.delenv("BAREUN_ROOT", raising=False)
    code = _run_cli(
        "--target",
        "python",
        "--python",
        sys.executable,
        "--runs",
        "2",
        "--warmup",
        "0",
        "--dim",
        "batch=2",
        "--dim",
        "seq=8",
        "--json",
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["verdict"] == "fell_back_to_cpu"
    assert document["model"]["dims"] == {"batch": 2, "seq": 8}
    assert document["result"]["cpu"]["latency"]["runs"] == 2
    ids = [f["id"] for f in document["findings"]]
    assert "inference.fell_back" in ids


def test_cli_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(UsageError, match="not an ONNX model"):
        _run_cli("--target", "python", "--model", str(bad))
    with pytest.raises(UsageError, match="NAME=VALUE"):
        _run_cli("--target", "python", "--dim", "batch")
    with pytest.raises(UsageError, match="no such file"):
        _run_cli("--target", "python", "--python", os.path.join(str(tmp_path), "nope"))
