"""Real library layouts for the CUDA / cuDNN / TensorRT check tests, collected into snapshots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "loader"))

import loader_wheels as wheels
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts, ProviderLibrary
from fallback_doctor.core.model.facts.python_env import PythonEnvFacts
from fallback_doctor.core.model.result import Finding
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.libraries import collect_libraries
from fallback_doctor.core.readers.loader.search_path import detect_linux_host

CUDA13 = ("cudart13", "cublas13", "curand10")


def make_site(tmp: Path, ort: str = "ort131", cuda13: bool = False, cudnn: bool = False) -> Path:
    """A site-packages with onnxruntime/capi of ``ort`` and, optionally, the NVIDIA wheels."""
    site = tmp / "site-packages"
    capi = wheels.provider(ort).parent
    wheels.place(
        {
            name: capi / name
            for name in (
                "libonnxruntime_providers_cuda.so",
                "libonnxruntime_providers_shared.so",
                "libonnxruntime_providers_tensorrt.so",
            )
        },
        site / "onnxruntime" / "capi",
    )
    if cuda13:
        for key in CUDA13:
            wheels.link_tree(wheels.cu13_lib(key), site / "nvidia" / "cu13" / "lib")
    if cudnn:
        wheels.link_tree(wheels.cudnn_lib(), site / "nvidia" / "cudnn" / "lib")
    return site


def snapshot(
    site: Path, *, ort_version: str = "1.31.1", env: dict[str, str] | None = None, python: bool = True
) -> EnvironmentSnapshot:
    """Collect the libraries of ``site`` (no ldconfig cache: hermetic) into a snapshot."""
    capi = site / "onnxruntime" / "capi"
    providers = (
        ("CUDAExecutionProvider", str(capi / "libonnxruntime_providers_cuda.so")),
        ("TensorrtExecutionProvider", str(capi / "libonnxruntime_providers_tensorrt.so")),
    )
    libraries = collect_libraries(
        site_packages=[str(site)],
        provider_libraries=providers,
        env=env or {},
        platform="linux",
        cache_path=None,
        system_places=False,
        host=detect_linux_host(),
        budget_s=10.0,
    )
    major = 13 if ort_version.startswith("1.31") else 12
    ort = OrtFacts(
        distributions=(),
        package_dir=str(site / "onnxruntime"),
        version=ort_version,
        cuda_build_version=f"{major}.0",
        providers_in_build=tuple(p for p, _ in providers),
        provider_libraries=tuple(ProviderLibrary(p, path) for p, path in providers),
        required_cuda_major=major,
        required_cudnn_major=9,
        requirement_source="test",
    )
    py = (
        PythonEnvFacts(
            executable="/app/venv/bin/python",
            version="3.11.7",
            prefix="/app/venv",
            platform="linux",
            machine="x86_64",
            site_packages=(str(site),),
            distributions=(),
        )
        if python
        else None
    )
    return EnvironmentSnapshot(python=py, onnxruntime=ort, libraries=libraries, environment=dict(env or {}))


def run(checks: tuple[object, ...], snap: EnvironmentSnapshot) -> list[Finding]:
    """Every finding of the given checks."""
    found: list[Finding] = []
    for check in checks:
        assert callable(check)
        found.extend(check(snap))
    return found


def by_id(findings: list[Finding], finding_id: str) -> list[Finding]:
    """The findings with this id."""
    return [finding for finding in findings if finding.id == finding_id]


def ld_path(*dirs: Path) -> dict[str, str]:
    """An environment with these directories on LD_LIBRARY_PATH."""
    return {"LD_LIBRARY_PATH": os.pathsep.join(str(item) for item in dirs)}
