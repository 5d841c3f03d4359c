"""Libraries of another CUDA major: same-name files taken by the loader, and whether the other
major's libraries are complete enough to offer its onnxruntime-gpu build as the fix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import loader_wheels as wheels
from checks_layouts import by_id, ld_path, make_site, run, snapshot
from fallback_doctor.core.judgement.checks import cuda, cuda_major, cudnn
from fallback_doctor.core.model.facts.libraries import DependencyReport, LibraryCopy, LibraryFacts, Resolution
from fallback_doctor.core.model.facts.python_env import Distribution
from fallback_doctor.core.model.result import Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot


def _commands(finding: object) -> str:
    remediation = getattr(finding, "remediation", None)
    assert remediation is not None
    return "\n".join((remediation.summary, *remediation.commands))


def test_cuda13_curand_taken_by_a_cuda12_build_is_named_by_what_it_needs(tmp_path: Path) -> None:
    # CUDA 13's cuRAND and runtime in a folder that says nothing about CUDA: only the file's own
    # DT_NEEDED (libcudart.so.13) tells that this libcurand.so.10 is not CUDA 12's.
    site = make_site(tmp_path, ort="ort123")
    lib = tmp_path / "opt" / "lib"
    for key in ("curand10", "cudart13"):
        wheels.link_tree(wheels.cu13_lib(key), lib)
    findings = run(cuda.CHECKS, snapshot(site, ort_version="1.23.2", env=ld_path(lib)))
    (finding,) = [f for f in findings if f.cause == "cuda_major_mismatch"]
    assert "libcurand.so.10" in finding.detail
    assert any(e.label == "CUDA 13 file" and "needs libcudart.so.13" in e.value for e in finding.evidence)
    text = _commands(finding)
    assert "nvidia-curand-cu12" in text
    # cuBLAS 13 is nowhere: the CUDA 13 build of onnxruntime-gpu is no way out, and it says why.
    assert finding.id == "cuda.major_mismatch.other_incomplete"
    assert "onnxruntime-gpu==" not in text
    assert "libcublasLt.so.13" in text and "nvidia-cublas" in text
    # The CUDA 13 runtime the wrong cuRAND pulls in is no need of the build.
    for other in by_id(findings, "cuda.runtime_missing"):
        assert "libcudart.so.13" not in other.detail


def test_complete_cuda13_set_offers_the_cuda13_build(tmp_path: Path) -> None:
    site = make_site(tmp_path, ort="ort123", cuda13=True)
    lib = site / "nvidia" / "cu13" / "lib"
    findings = run(cuda.CHECKS, snapshot(site, ort_version="1.23.2", env=ld_path(lib)))
    (finding,) = by_id(findings, "cuda.major_mismatch")
    assert "libcurand.so.10" in finding.detail  # the folder nvidia/cu13 says it
    assert any(e.label == "CUDA 13 file" and "a CUDA 13 folder" in e.value for e in finding.evidence)
    text = _commands(finding)
    assert '"onnxruntime-gpu==1.31.1"' in text
    assert "nvidia-curand-cu12" in text and "nvidia-cublas-cu12" in text


def test_partial_cuda13_install_is_not_a_way_out(tmp_path: Path) -> None:
    # Like a toolkit folder with only the runtime: libcudart.so.13 alone.
    site = make_site(tmp_path, ort="ort123")
    lib = tmp_path / "cuda-13.0" / "lib"
    wheels.link_tree(wheels.cu13_lib("cudart13"), lib)
    findings = run(cuda.CHECKS, snapshot(site, ort_version="1.23.2", env=ld_path(lib)))
    (finding,) = by_id(findings, "cuda.major_mismatch.other_incomplete")
    assert finding.severity == Severity.ERROR
    text = _commands(finding)
    assert "onnxruntime-gpu==" not in text
    for name in ("libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10"):
        assert name in text
    assert "nvidia-cuda-runtime-cu12" in text and "nvidia-cublas-cu12" in text


def test_ort_cuda_families_follow_the_release() -> None:
    assert "cufft" in cuda_major.ort_cuda_families("1.23.2", windows=False)
    assert "cufft" not in cuda_major.ort_cuda_families("1.31.1", windows=False)
    assert "nvrtc" in cuda_major.ort_cuda_families("1.27.0", windows=False)
    assert cuda_major.ort_cuda_families("1.31.1", windows=True) == ("cublasLt", "cublas")
    assert "curand" in cuda_major.ort_cuda_families("1.18.1", windows=False)


# -- facts alone (the check is a function of the snapshot) ---------------------------------------


def _res(name: str, needed_by: str, path: str | None, **kwargs: object) -> Resolution:
    return Resolution(
        name=name,
        needed_by=needed_by,
        path=path,
        via="LD_LIBRARY_PATH" if path else None,
        installed_elsewhere=(),
        other_majors=(),
        **kwargs,
    )  # type: ignore[arg-type]


def _facts_snapshot(
    resolutions: tuple[Resolution, ...],
    inventory: tuple[LibraryCopy, ...] = (),
    distributions: tuple[Distribution, ...] = (),
) -> EnvironmentSnapshot:
    base = snapshot(Path("/nonexistent"), ort_version="1.23.2")
    report = DependencyReport("CUDAExecutionProvider", "/ort/libonnxruntime_providers_cuda.so", resolutions)
    libraries = LibraryFacts(search_dirs=(), inventory=inventory, reports=(report,), budget_exhausted=False)
    assert base.python is not None
    python = dataclasses.replace(base.python, distributions=distributions)
    return dataclasses.replace(base, libraries=libraries, python=python)


def test_loaded_from_other_major_when_everything_is_found_is_a_warning() -> None:
    root = "/ort/libonnxruntime_providers_cuda.so"
    curand = "/opt/cu13/libcurand.so.10.4.0.35"  # the version in the real file name says CUDA 13
    snap = _facts_snapshot(
        (
            _res("libcudart.so.12", root, "/opt/cu12/libcudart.so.12"),
            _res("libcurand.so.10", root, curand),
            _res("libcudart.so.13", curand, "/opt/cu13/libcudart.so.13"),
        )
    )
    (finding,) = [f for f in run(cuda.CHECKS, snap) if f.cause == "cuda_major_mismatch"]
    assert finding.id == "cuda.major_mismatch.loaded_from_other_major"
    assert finding.severity == Severity.WARNING
    assert "nvidia-curand-cu12" in _commands(finding)


def test_same_name_of_the_right_major_is_not_flagged() -> None:
    root = "/ort/libonnxruntime_providers_cuda.so"
    snap = _facts_snapshot(
        (
            _res("libcudart.so.12", root, "/opt/cu12/libcudart.so.12"),
            _res("libcurand.so.10", root, "/site/nvidia/curand/lib/libcurand.so.10"),
        ),
        distributions=(Distribution("nvidia-curand-cu12", "10.3.10.19", "/site"),),
    )
    assert not [f for f in run(cuda.CHECKS, snap) if f.cause == "cuda_major_mismatch"]
    belongs = cuda_major.file_cuda_major(snap, "/site/nvidia/curand/lib/libcurand.so.10", "libcurand.so.10")
    assert belongs is not None and belongs.major == 12 and "nvidia-curand-cu12" in belongs.reason


def test_cudnn_of_the_other_cuda_build_is_flagged_by_its_wheel(tmp_path: Path) -> None:
    site = make_site(tmp_path, ort="ort123", cudnn=True)
    dist = Distribution("nvidia-cudnn-cu13", "9.28.1.4", str(site))
    snap = snapshot(site, ort_version="1.23.2", env=ld_path(site / "nvidia" / "cudnn" / "lib"))
    assert snap.python is not None
    snap = dataclasses.replace(snap, python=dataclasses.replace(snap.python, distributions=(dist,)))
    findings = run(cudnn.CHECKS, snap)
    (finding,) = by_id(findings, "cudnn.built_for_other_cuda")
    assert finding.cause == "cudnn_major_mismatch" and finding.severity == Severity.ERROR
    assert "libcudnn.so.9" in finding.title and "CUDA 13" in finding.title
    commands = finding.remediation.commands if finding.remediation else ()
    assert commands == (
        "/app/venv/bin/python -m pip uninstall -y nvidia-cudnn-cu13",
        "/app/venv/bin/python -m pip install --force-reinstall nvidia-cudnn-cu12",
    )
    # Without the wheel's metadata nothing says which CUDA it is for: no claim.
    plain = snapshot(site, ort_version="1.23.2", env=ld_path(site / "nvidia" / "cudnn" / "lib"))
    assert not by_id(run(cudnn.CHECKS, plain), "cudnn.built_for_other_cuda")
    # The CUDA 13 build with the CUDA 13 cuDNN: nothing to say.
    right = snapshot(site, ort_version="1.31.1", env=ld_path(site / "nvidia" / "cudnn" / "lib"))
    right = dataclasses.replace(right, python=dataclasses.replace(snap.python, distributions=(dist,)))
    assert not by_id(run(cudnn.CHECKS, right), "cudnn.built_for_other_cuda")
