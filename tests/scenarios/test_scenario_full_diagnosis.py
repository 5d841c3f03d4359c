"""The whole diagnosis, test inference included, on real broken stacks (no --quick).

The static scenarios (test_scenario_diagnosis.py) say why the GPU cannot work; here the
test inference must show it too: ONNX Runtime's own warning quoted, the strict run failing
with ONNX Runtime's own message, and never gpu_verified on a machine without a GPU.
"""

from __future__ import annotations

import pytest
import scenario_runs as runs

pytestmark = pytest.mark.scenario


@pytest.mark.parametrize("scenario_id", ["s3_no_cuda", "s1_cpu_only"])
def test_full_diagnosis_runs_the_inference_and_sees_the_cpu(diagnosis, scenario_id):
    diag = diagnosis(scenario_id, "--full", "--runs", "2")
    assert diag.returncode == 1, diag.describe()
    assert diag.doc["verdict"] == "gpu_unusable"
    assert diag.doc["quick"] is False
    inference = diag.doc["inference"]  # the document's one place for the test inference
    assert inference["gpu_retry"] is not None and inference["cpu_baseline"] is not None, diag.describe()
    assert inference["verdict"] in {"fell_back_to_cpu", "failed"}
    assert inference["gpu_verified"] is False
    assert diag.findings[0]["cause"] == "driver_missing"
    probe_findings = [f for f in diag.findings if f["id"].startswith("inference.")]
    assert probe_findings, diag.describe()


def test_full_diagnosis_quotes_onnx_runtime_and_the_strict_run(diagnosis, ort):
    diag = diagnosis("s3_no_cuda", "--full", "--runs", "2")
    own = ort("s3_no_cuda")
    fell_back = [f for f in diag.findings if f["id"] == "inference.fell_back"]
    assert fell_back, diag.describe()
    text = runs.finding_text(fell_back[0])
    # ONNX Runtime names the first missing library itself; the finding quotes its words.
    assert "libcublasLt.so.13" in text
    assert "libcublasLt.so.13" in own.output
    assert "disable_cpu_ep_fallback" in text or "explicitly disabled" in text


def test_the_loader_path_fix_is_tried_and_the_finding_says_what_onnx_runtime_did(diagnosis, ort):
    """Tried, not only advised: the wheels are installed but not on the loader path; the test
    inference runs ONNX Runtime with their folders first, and the finding whose remedy that is
    says where ONNX Runtime stops then (the driver), in the default text report too."""
    diag = diagnosis("s4_wheels_not_on_path", "--full", "--runs", "2")
    [finding] = [f for f in diag.findings if f["id"] == "cuda.runtime_not_on_loader_path"]
    [tried] = [e["value"] for e in finding["evidence"] if e["label"] == "tried here"]
    assert "LD_LIBRARY_PATH=" in tried and "nvidia/cu13/lib" in tried, tried
    assert "now stops at libcuda.so.1 instead of libcublasLt.so.13" in tried, tried
    # ONNX Runtime itself agrees: with that folder first it fails on the driver only.
    folder = tried.split("LD_LIBRARY_PATH=", 1)[1].split(" first", 1)[0]
    own = ort("s4_wheels_not_on_path", ld_path=folder)
    assert "libcuda.so.1" in own.output and "libcublasLt.so.13" not in own.output, own.output[-2000:]
