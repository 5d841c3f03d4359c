"""cuDNN checks on snapshots collected from real library layouts."""

from __future__ import annotations

import os
from pathlib import Path

from checks_layouts import by_id, ld_path, make_site, run, snapshot
from fallback_doctor.core.judgement.checks import cudnn
from fallback_doctor.core.model.result import Layer, Severity


def test_lazy_cudnn_missing_says_it_will_not_show_at_startup(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True)
    findings = run(cudnn.CHECKS, snapshot(site, env=ld_path(site / "nvidia" / "cu13" / "lib")))
    (finding,) = by_id(findings, "cudnn.missing.lazy")
    assert finding.cause == "cudnn_missing" and finding.layer == Layer.CUDNN
    assert finding.severity == Severity.ERROR
    assert "1.28" in finding.detail
    assert finding.remediation is not None
    assert finding.remediation.commands == ("/app/venv/bin/python -m pip install nvidia-cudnn-cu13",)
    assert finding.remediation.verify and "ctypes.CDLL('libcudnn.so.9')" in finding.remediation.verify


def test_cudnn_in_site_packages_not_on_path(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True, cudnn=True)
    findings = run(cudnn.CHECKS, snapshot(site, env=ld_path(site / "nvidia" / "cu13" / "lib")))
    (finding,) = by_id(findings, "cudnn.not_on_loader_path.lazy")
    assert finding.remediation is not None
    assert str(site / "nvidia" / "cudnn" / "lib") in finding.remediation.commands[0]


def test_cuda12_build_needs_cudnn_at_load_time(tmp_path: Path) -> None:
    site = make_site(tmp_path, ort="ort123")
    findings = run(cudnn.CHECKS, snapshot(site, ort_version="1.23.2"))
    (finding,) = by_id(findings, "cudnn.missing")
    assert "nvidia-cudnn-cu12" in finding.remediation.commands[0]  # type: ignore[union-attr]


def test_sublibrary_missing(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True, cudnn=True)
    lib = site / "nvidia" / "cudnn" / "lib"
    os.remove(lib / "libcudnn_graph.so.9")
    findings = run(cudnn.CHECKS, snapshot(site, env=ld_path(site / "nvidia" / "cu13" / "lib", lib)))
    (finding,) = by_id(findings, "cudnn.sublibrary_missing")
    assert "libcudnn_graph.so.9" in finding.title
    assert not by_id(findings, "cudnn.missing.lazy")


def test_cudnn8_only_is_a_major_mismatch(tmp_path: Path) -> None:
    site = make_site(tmp_path, ort="ort123")
    old = tmp_path / "cudnn8"
    old.mkdir()
    source = site / "onnxruntime" / "capi" / "libonnxruntime_providers_shared.so"
    (old / "libcudnn.so.8").write_bytes(source.read_bytes())
    findings = run(cudnn.CHECKS, snapshot(site, ort_version="1.23.2", env=ld_path(old)))
    (finding,) = by_id(findings, "cudnn.major_mismatch")
    assert finding.cause == "cudnn_major_mismatch"
    assert str(old / "libcudnn.so.8") in finding.detail
    assert not by_id(findings, "cudnn.missing")
