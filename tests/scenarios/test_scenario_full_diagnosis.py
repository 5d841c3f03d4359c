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
