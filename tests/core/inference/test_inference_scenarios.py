"""Strategy grading on real broken stacks (tests/scenarios builders): 1.23.2 gets further than 1.31.1.

No strategy reaches the GPU here (no driver): what is graded is how far each gets.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scenarios"))
import scenario_stacks as stacks
from fallback_doctor.core.readers.inference.findings import inference_findings
from fallback_doctor.core.readers.inference.python_probe import run_python_probe
from fallback_doctor.core.readers.inference.result import ProbeRequest, Stage, StrategyName, Verdict

pytestmark = pytest.mark.scenario
MODEL = str(Path(__file__).resolve().parents[3] / "resources" / "model" / "encoder.onnx")


def _probe(stack_name: str):  # type: ignore[no-untyped-def]
    python, _ = stacks.build(stacks.STACKS[stack_name])
    request = ProbeRequest(
        model=MODEL, runs=2, warmup=1, dims={"batch": 2, "seq": 16}, input_ranges={"input_ids": (0, 1024)}
    )
    return run_python_probe(str(python), request, env=stacks.clean_env())


def test_cuda12_full_stack_gets_to_the_libraries_with_a_fix() -> None:
    result = _probe("gpu12-full")
    stages = {s.name: s.stage for s in result.strategies}
    assert stages[StrategyName.AS_IS] == Stage.RUNTIME_LOADED
    assert stages[StrategyName.PRELOAD_DLLS] == Stage.LIBRARIES_LOADED
    assert stages[StrategyName.LIB_PATH_FIRST] == Stage.LIBRARIES_LOADED
    assert result.verdict == Verdict.FELL_BACK_TO_CPU
    preload = next(s for s in result.strategies if s.name == StrategyName.PRELOAD_DLLS)
    assert preload.gpu is not None and preload.gpu.comparison is not None and preload.gpu.comparison.equal
    assert preload.gpu.strict is not None
    assert "CUDA failure 35" in (preload.gpu.strict.error or "")  # the provider's own error comes first
    findings = {f.id: f for f in inference_findings(result)}
    assert findings["inference.fell_back"].cause == "cuda_runtime_missing"  # libcublasLt.so.12
    further = findings["inference.strategy_further"]
    assert "preload_dlls" in further.title


def test_cuda13_build_stops_earlier() -> None:
    result = _probe("gpu13-cuda13-wheels")
    stages = {s.name: s.stage for s in result.strategies}
    assert set(stages.values()) == {Stage.RUNTIME_LOADED}  # 1.31.1 links libcuda.so.1: no driver, no load
    quoted = "\n".join(m for s in result.strategies if s.gpu for m in s.gpu.ort_messages)
    assert "libcuda.so.1: cannot open shared object file" in quoted  # after preload: the driver is next
    findings = {f.id: f for f in inference_findings(result)}
    assert "inference.strategy_further" not in findings


def test_cpu_only_package_has_no_cuda_provider() -> None:
    result = _probe("cpu-only")
    assert result.runtime.available_providers == ("AzureExecutionProvider", "CPUExecutionProvider")
    assert result.verdict == Verdict.FELL_BACK_TO_CPU
    # No GPU provider is built in: no library strategy can differ, so none is run, and each says why.
    for name in (StrategyName.PRELOAD_DLLS, StrategyName.LIB_PATH_FIRST):
        strategy = next(s for s in result.strategies if s.name == name)
        assert strategy.skipped and "no GPU provider built in" in strategy.skipped, strategy
    findings = {f.id: f for f in inference_findings(result)}
    assert findings["inference.fell_back"].cause == "ep_not_in_build"
