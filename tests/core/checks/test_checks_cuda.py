"""CUDA runtime checks on snapshots collected from real library layouts."""

from __future__ import annotations

from pathlib import Path

from checks_layouts import by_id, ld_path, make_site, run, snapshot
from fallback_doctor.core.judgement.checks import cuda
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.result import Layer, Severity


def test_nothing_installed_one_finding_names_every_library(tmp_path: Path) -> None:
    findings = run(cuda.CHECKS, snapshot(make_site(tmp_path)))
    missing = by_id(findings, "cuda.runtime_missing")
    assert len(missing) == 1  # the TensorRT provider's needs are not reported twice
    finding = missing[0]
    assert finding.cause == "cuda_runtime_missing" and finding.layer == Layer.CUDA
    assert finding.severity == Severity.ERROR
    for name in ("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13"):
        assert name in finding.detail
    assert finding.remediation is not None
    command = finding.remediation.commands[0]
    assert command.startswith("/app/venv/bin/python -m pip install ")
    assert {"nvidia-cublas", "nvidia-curand", "nvidia-cuda-runtime"} <= set(command.split())
    # CUDA 13 runtime packages carry no -cu13 suffix; cuDNN, missing too, is named with its own
    assert [p for p in command.split() if p.endswith("-cu13")] == ["nvidia-cudnn-cu13"]
    assert finding.remediation.verify and "ldd " in finding.remediation.verify
    assert "cuBLAS" in finding.remediation.summary
    assert any(e.label == "searched" for e in finding.evidence)
    assert "CUDA 13" in words_of(finding, "ko")["title"]
    # Those opened at run time are part of the same fix: in its evidence and its install, not a
    # second finding with the same cause and the same steps.
    assert not by_id(findings, "cuda.optional_runtime_missing")
    evidence = " ".join(f"{e.label} {e.value}" for e in finding.evidence)
    assert "libcufft.so.12" in evidence and "libnvrtc.so.13" in evidence
    assert {"nvidia-cufft", "nvidia-cuda-nvrtc"} <= set(command.split())
    assert not by_id(findings, "cuda.major_mismatch")


def test_wheels_installed_but_not_on_loader_path(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True)
    findings = run(cuda.CHECKS, snapshot(site))
    assert not by_id(findings, "cuda.runtime_missing")
    (finding,) = by_id(findings, "cuda.runtime_not_on_loader_path")
    assert finding.cause == "cuda_runtime_missing"
    lib_dir = str(site / "nvidia" / "cu13" / "lib")
    assert finding.remediation is not None
    assert finding.remediation.commands[0] == f"export LD_LIBRARY_PATH={lib_dir}:$LD_LIBRARY_PATH"
    assert "preload_dlls()" in finding.remediation.commands[1]
    assert any(e.label == "installed elsewhere" and e.value.startswith(lib_dir) for e in finding.evidence)
    # On the loader path the finding is gone.
    fixed = run(cuda.CHECKS, snapshot(site, env=ld_path(site / "nvidia" / "cu13" / "lib")))
    assert not by_id(fixed, "cuda.runtime_not_on_loader_path")
    assert not by_id(fixed, "cuda.runtime_missing")


def test_no_preload_dlls_for_a_native_application(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True)
    (finding,) = by_id(run(cuda.CHECKS, snapshot(site, python=False)), "cuda.runtime_not_on_loader_path")
    assert finding.remediation is not None
    assert len(finding.remediation.commands) == 1


def test_cuda12_build_with_cuda13_wheels_is_a_major_mismatch(tmp_path: Path) -> None:
    site = make_site(tmp_path, ort="ort123", cuda13=True)
    findings = run(
        cuda.CHECKS, snapshot(site, ort_version="1.23.2", env=ld_path(site / "nvidia" / "cu13" / "lib"))
    )
    (finding,) = by_id(findings, "cuda.major_mismatch")
    assert finding.cause == "cuda_major_mismatch"
    assert "needs CUDA 12" in finding.title and "CUDA 13" in finding.title
    assert "libcublasLt.so.12" in finding.detail and "libcublasLt.so.13" in finding.detail
    assert finding.remediation is not None
    commands = finding.remediation.commands
    assert "nvidia-cublas-cu12" in commands[0] and "nvidia-cuda-runtime-cu12" in commands[0]
    assert any('"onnxruntime-gpu==1.' in command for command in commands)
    # libcufft.so.11 has no other-major copy here: it is plainly missing.
    (missing,) = by_id(findings, "cuda.runtime_missing")
    assert "libcufft.so.11" in missing.detail


def test_link_to_another_major_is_shadowing(tmp_path: Path) -> None:
    site = make_site(tmp_path, cuda13=True)
    fake = tmp_path / "old-cuda"
    fake.mkdir()
    real = site / "nvidia" / "cu13" / "lib" / "libcudart.so.13"
    (fake / "libcudart.so.12.8.90").write_bytes(real.read_bytes())
    (fake / "libcudart.so.13").symlink_to("libcudart.so.12.8.90")
    findings = run(cuda.CHECKS, snapshot(site, env=ld_path(fake, site / "nvidia" / "cu13" / "lib")))
    (finding,) = by_id(findings, "cuda.shadowed_by_other_major")
    assert finding.cause == "cuda_major_mismatch"
    assert "libcudart.so.12.8.90" in finding.title
