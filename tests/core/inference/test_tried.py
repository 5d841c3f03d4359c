"""core/readers/inference/tried.py: a finding's own remedy, tried by a strategy, becomes its evidence."""

from __future__ import annotations

from fallback_doctor.core.model.result import (
    TRIED_LABEL,
    CodeStep,
    EnvironmentStep,
    Finding,
    Layer,
    Remediation,
    Severity,
)
from fallback_doctor.core.readers.inference.tried import missing_library, with_tried_evidence

_FAIL = (
    "Failed to load library /x/libonnxruntime_providers_cuda.so with error: {}: "
    "cannot open shared object file: No such file or directory"
)


def _strategy(name: str, missing: str, environment: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "name": name,
        "stage": "runtime_loaded",
        "environment": environment or {},
        "gpu": {"ort_messages": [_FAIL.format(missing)]},
    }


def _finding(*steps: object) -> Finding:
    return Finding(
        "cuda.runtime_not_on_loader_path",
        "cuda_runtime_missing",
        Layer.CUDA,
        Severity.ERROR,
        "t",
        "d",
        remediation=Remediation(summary="s", steps=tuple(steps)),  # type: ignore[arg-type]
    )


RETRY = {
    "strategies": [
        _strategy("as_is", "libcublasLt.so.13"),
        _strategy("preload_dlls", "libcublasLt.so.13"),
        _strategy("lib_path_first", "libcuda.so.1", {"LD_LIBRARY_PATH": "/w/nvidia/cu13/lib:/old"}),
    ]
}


def test_missing_library_is_read_from_onnx_runtimes_own_words() -> None:
    assert missing_library([_FAIL.format("libcudnn.so.9")]) == "libcudnn.so.9"
    assert missing_library(["nothing here"]) is None


def test_the_loader_path_step_gets_what_onnx_runtime_did_and_only_once() -> None:
    step = EnvironmentStep({"LD_LIBRARY_PATH": "/w/nvidia/cu13/lib"}, scope="process", mode="prepend")
    [once] = with_tried_evidence([_finding(step)], RETRY)
    [twice] = with_tried_evidence([once], RETRY)
    assert twice == once
    [tried] = [e.value for e in once.evidence if e.label == TRIED_LABEL]
    assert "now stops at libcuda.so.1 instead of libcublasLt.so.13 (the driver" in tried


def test_preload_dlls_that_changes_nothing_says_so() -> None:
    step = CodeStep("import onnxruntime\nonnxruntime.preload_dlls()", language="python", where="before")
    [finding] = with_tried_evidence([_finding(step)], RETRY)
    [tried] = [e.value for e in finding.evidence if e.label == TRIED_LABEL]
    assert "still stops at libcublasLt.so.13" in tried


def test_a_remedy_no_strategy_tried_gets_nothing() -> None:
    step = EnvironmentStep({"LD_LIBRARY_PATH": "/elsewhere"}, scope="process", mode="prepend")
    [finding] = with_tried_evidence([_finding(step)], RETRY)
    assert not [e for e in finding.evidence if e.label == TRIED_LABEL]
