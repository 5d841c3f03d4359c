"""The reports scripts/gpu-check.sh wrote on an NVIDIA H200 (docs/gpu-run.md, 2026-12-04), read
back through the same interfaces as a live run: the GPU success path, which no machine of this
project's CI can run (no GPU here). Nothing below touches a GPU; the data were measured on one.

- h200-working.json: onnxruntime-gpu 1.31.1 with NVIDIA's CUDA 13 and cuDNN 9 wheels on the loader
  path: every node on CUDAExecutionProvider, GPU memory held by the probe, verdict gpu_verified.
  Automatic selection (PREFER_GPU) still picked the CPU, and picked CUDA once the CUDA provider's
  library was registered with the environment: ONNX Runtime itself proving the advice.
- h200-no-visible-gpu.json: the same stack with CUDA_VISIBLE_DEVICES=-1: a real fallback.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.document.schema import check_document
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.readers.inference.findings import inference_findings
from fallback_doctor.core.readers.inference.result import ProbeResult
from fallback_doctor.core.views.text_report import render_text

DATA = Path(__file__).resolve().parents[2] / "data" / "gpu_run"


def _report(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return document


def _probe(document: dict[str, Any]) -> ProbeResult:
    return ProbeResult.from_json(document["inference"]["gpu_retry"])


@pytest.mark.parametrize("name", ["h200-working.json", "h200-no-visible-gpu.json"])
def test_the_h200_reports_follow_the_schema_and_render_in_both_languages(name: str) -> None:
    document = _report(name)
    check_document(document)
    for lang in ("en", "ko"):
        for verbose in (False, True):
            text = render_text(document, lang, verbose=verbose)
            first = text.splitlines()[0]  # the verdict in words; its code is --json's (issue 26)
            assert label(f"verdict.{document['verdict']}", lang) in first and document["verdict"] not in first


def test_the_working_stack_is_verified_with_every_node_on_cuda_and_memory_held() -> None:
    document = _report("h200-working.json")
    assert document["verdict"] == "gpu_verified"
    result = _probe(document)
    gpu = result.as_is.gpu if result.as_is is not None else None
    assert gpu is not None and gpu.verdict.value == "gpu_active"
    assert gpu.nodes_per_provider == {"CUDAExecutionProvider": 151}
    assert gpu.gpu_memory is not None and (gpu.gpu_memory.probe_bytes or 0) > 100 << 20


def test_automatic_selection_needs_the_cuda_library_registered_and_that_is_proven_on_the_gpu() -> None:
    result = _probe(_report("h200-working.json"))
    selection = result.as_is.selection if result.as_is is not None else None
    assert selection is not None and selection.silent
    assert selection.active_providers == ("CPUExecutionProvider",)
    registered = selection.registered
    assert registered is not None and registered.error is None
    assert registered.active_providers[0] == "CUDAExecutionProvider"
    assert any(d.ep_name == "CUDAExecutionProvider" and d.device_type == "GPU" for d in registered.ep_devices)
    findings = {f.id: f for f in inference_findings(result)}
    assert "inference.auto_select_silent" not in findings  # the GPU works: not a warning
    info = findings["inference.auto_select_needs_registration"]
    assert info.severity.value == "info"
    assert info.remediation is not None
    (step,) = info.remediation.steps
    assert step.kind == "code" and "register_execution_provider_library" in step.code  # type: ignore[union-attr]
    assert "picked CUDAExecutionProvider" in info.detail


def test_the_same_silence_on_a_stack_that_fell_back_stays_a_warning_without_the_code_step() -> None:
    raw = copy.deepcopy(_report("h200-working.json")["inference"]["gpu_retry"])
    as_is = raw["strategies"][0]
    as_is["gpu"]["verdict"] = "fell_back_to_cpu"
    library = "capi/libonnxruntime_providers_cuda.so"
    as_is["selection"]["registered"] = {"library": library, "error": "Fail: x"}
    findings = {f.id: f for f in inference_findings(ProbeResult.from_json(raw))}
    warning = findings["inference.auto_select_silent"]
    assert warning.severity.value == "warning"
    assert warning.remediation is not None and warning.remediation.steps == ()
    assert "Fail: x" in warning.detail


def test_hiding_the_gpu_falls_back_and_says_so() -> None:
    document = _report("h200-no-visible-gpu.json")
    assert document["verdict"] == "gpu_unusable"
    assert "no_gpu_visible" in [f["cause"] for f in document["findings"]]
    result = _probe(document)
    assert result.as_is is not None and result.as_is.gpu is not None
    assert result.as_is.gpu.verdict.value == "fell_back_to_cpu"
