"""TensorRT checks on snapshots collected from real library layouts."""

from __future__ import annotations

from pathlib import Path

from checks_layouts import by_id, make_site, run, snapshot
from fallback_doctor.core.judgement.checks import tensorrt
from fallback_doctor.core.model.result import Layer, Severity


def test_tensorrt_provider_without_tensorrt(tmp_path: Path) -> None:
    findings = run(tensorrt.CHECKS, snapshot(make_site(tmp_path, cuda13=True)))
    (finding,) = by_id(findings, "tensorrt.missing")
    assert finding.cause == "tensorrt_missing" and finding.layer == Layer.TENSORRT
    assert finding.severity == Severity.INFO  # nothing says the application asks for TensorRT
    assert "libnvinfer.so.10" in finding.title and "libnvonnxparser.so.10" in finding.title
    assert finding.remediation is not None
    # pinned to the provider's TensorRT major: unpinned, pip takes TensorRT 11 (libnvinfer.so.11)
    assert finding.remediation.commands == ("/app/venv/bin/python -m pip install 'tensorrt-cu13==10.*'",)
    assert "libonnxruntime_providers_tensorrt.so" in (finding.remediation.verify or "")


def test_tensorrt_of_another_major(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    trt = site / "tensorrt_libs"
    trt.mkdir()
    source = site / "onnxruntime" / "capi" / "libonnxruntime_providers_shared.so"
    (trt / "libnvinfer.so.11").write_bytes(source.read_bytes())
    findings = run(tensorrt.CHECKS, snapshot(site))
    (finding,) = by_id(findings, "tensorrt.other_major")
    assert str(trt / "libnvinfer.so.11") in finding.detail
