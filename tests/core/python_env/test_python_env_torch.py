"""PyTorch beside ONNX Runtime: its CUDA build and cuDNN, read from its files, and the check.

PyTorch wheels are hundreds of megabytes, so the torch package here is laid out on disk
the way a wheel installs it, with only the files that are read: torch/version.py as
pytorch's tools/generate_torch_version.py writes it, the dist-info METADATA headers, and
the library names in torch/lib. ONNX Runtime is the real onnxruntime-gpu wheel.
"""

from __future__ import annotations

import os
from pathlib import Path

from fallback_doctor.core.judgement.checks.torch import torch_cuda_major_differs, torch_cudnn_major_differs
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.onnxruntime import collect_onnxruntime
from fallback_doctor.core.readers.collect.python_env import collect_python_env
from fallback_doctor.core.readers.collect.torch import collect_torch
from python_env_venvs import scenario, venv_python

LINUX_MARKER = '; platform_system == "Linux" and platform_machine == "x86_64"'


def _version_py(version: str, cuda: str | None) -> str:
    return (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        f"__version__ = '{version}'\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda!r}\n"
        "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\n"
        "hip: Optional[str] = None\n"
    )


def _dist_info(site: Path, name: str, version: str, requires: list[str] = ()) -> None:  # type: ignore[assignment]
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {req}" for req in requires]
    (folder / "METADATA").write_text("\n".join(lines) + "\n\nRequires-Dist: nvidia-not-a-header\n")


def _torch(site: Path, version: str, cuda: str | None, lib_files: list[str], requires: list[str]) -> None:
    package = site / "torch"
    (package / "lib").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "version.py").write_text(_version_py(version, cuda))
    for name in lib_files:
        (package / "lib" / name).write_bytes(b"")
    _dist_info(site, "torch", version.split("+")[0], requires)


def _snapshot(venv_name: str, extra_site: Path) -> EnvironmentSnapshot:
    env = dict(os.environ, PYTHONPATH=str(extra_site))
    python = collect_python_env(str(venv_python(scenario(venv_name))), env)
    return EnvironmentSnapshot(
        python=python, onnxruntime=collect_onnxruntime(python), torch=collect_torch(python)
    )


def test_linux_torch_for_cuda_12_beside_onnxruntime_gpu_for_cuda_13(tmp_path: Path) -> None:
    site = tmp_path / "site"
    requires = [
        "filelock",
        f"nvidia-cuda-runtime-cu12==12.4.127{LINUX_MARKER}",
        f"nvidia-cudnn-cu12==9.1.0.70{LINUX_MARKER}",
        f"nvidia-cublas-cu12==12.4.5.8{LINUX_MARKER}",
    ]
    _torch(site, "2.5.1+cu124", "12.4", ["libtorch_cuda.so", "libc10_cuda.so", "libshm.so"], requires)
    _dist_info(site, "nvidia-cudnn-cu12", "9.1.0.70")
    _dist_info(site, "nvidia-cuda-runtime-cu12", "12.4.127")

    snapshot = _snapshot("gpu_1_31_1", site)
    torch = snapshot.torch
    assert torch is not None
    assert (torch.version, torch.cuda_build, torch.cuda_major, torch.hip_build) == (
        "2.5.1+cu124",
        "12.4",
        12,
        None,
    )
    assert torch.package_dir == str(site / "torch") and torch.lib_dir == str(site / "torch" / "lib")
    assert torch.bundled_libraries == ()  # Linux wheels take CUDA from the nvidia-* wheels
    assert (torch.cudnn_major, torch.cudnn_source) == (9, "nvidia-cudnn-cu12 9.1.0.70")
    assert len(torch.nvidia_requirements) == 3 and all(
        r.startswith("nvidia-") for r in torch.nvidia_requirements
    )
    assert {d.name for d in torch.nvidia_distributions} == {"nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu12"}

    [finding] = list(torch_cuda_major_differs(snapshot))
    assert (finding.id, finding.cause, finding.severity) == (
        "torch.cuda_major_differs",
        "torch_cuda_conflict",
        "warning",
    )
    assert "CUDA 12" in finding.title and "CUDA 13" in finding.title
    assert finding.remediation is not None
    python = str(venv_python(scenario("gpu_1_31_1")))
    assert finding.remediation.commands == (f'"{python}" -m pip install "onnxruntime-gpu==1.26.0"',)
    assert "preload_dlls" in finding.detail and "preload_dlls" in words_of(finding, "ko")["detail"]
    assert list(torch_cudnn_major_differs(snapshot)) == []  # both cuDNN 9


def test_windows_torch_bundling_cuda_11_and_cudnn_8(tmp_path: Path) -> None:
    site = tmp_path / "site"
    bundled = [
        "cudnn64_8.dll",
        "cudnn_ops_infer64_8.dll",
        "cublas64_11.dll",
        "cudart64_110.dll",
        "zlibwapi.dll",
        "torch_cuda.dll",
        "c10.dll",
    ]
    _torch(site, "1.13.1+cu117", "11.7", bundled, [])
    snapshot = _snapshot("gpu_1_23_2", site)
    torch = snapshot.torch
    assert torch is not None
    assert torch.bundled_libraries == tuple(sorted(set(bundled) - {"torch_cuda.dll", "c10.dll"}))
    assert (torch.cudnn_major, torch.cudnn_source) == (8, "torch/lib (cudnn64_8.dll)")
    [cuda] = list(torch_cuda_major_differs(snapshot))
    [cudnn] = list(torch_cudnn_major_differs(snapshot))
    assert "CUDA 11" in cuda.title and "CUDA 12" in cuda.title
    assert cuda.remediation is not None and "onnxruntime-gpu==1.18.1" in cuda.remediation.commands[0]
    assert (cudnn.id, cudnn.cause) == ("torch.cudnn_major_differs", "torch_cuda_conflict")
    assert "cuDNN 8" in cudnn.title and "cuDNN 9" in cudnn.title
    assert any(e.label == "bundled in torch/lib" and "cudnn64_8.dll" in e.value for e in cudnn.evidence)


def test_matching_or_cpu_torch_is_fine(tmp_path: Path) -> None:
    same = tmp_path / "same"
    _torch(same, "2.9.0+cu130", "13.0", [], [f"nvidia-cudnn-cu13==9.13.0.50{LINUX_MARKER}"])
    snapshot = _snapshot("gpu_1_31_1", same)
    assert snapshot.torch is not None and snapshot.torch.cuda_major == 13
    assert list(torch_cuda_major_differs(snapshot)) == [] == list(torch_cudnn_major_differs(snapshot))

    cpu = tmp_path / "cpu"
    _torch(cpu, "2.5.1+cpu", None, [], [])
    snapshot = _snapshot("gpu_1_31_1", cpu)
    assert (
        snapshot.torch is not None and snapshot.torch.cuda_build is None and snapshot.torch.cuda_major is None
    )
    assert list(torch_cuda_major_differs(snapshot)) == []


def test_no_torch_and_no_gpu_onnxruntime() -> None:
    python = collect_python_env(str(venv_python(scenario("cpu_1_23_2"))), dict(os.environ))
    assert collect_torch(python) is None
    snapshot = EnvironmentSnapshot(python=python, onnxruntime=collect_onnxruntime(python), torch=None)
    assert list(torch_cuda_major_differs(snapshot)) == []
