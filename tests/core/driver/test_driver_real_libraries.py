"""The native probe against real NVIDIA libraries from the PyPI wheels (no GPU needed).

Only the small files are unpacked, once, into ~/.cache/gpu-fallback-doctor/driver-tests:
the cuDNN 9 shim (libcudnn.so.9, 137 kB) and the CUDA 13 runtime (libcudart.so.13). The
wheels come from the local wheel cache, or pip downloads the small runtime wheel.
"""

from __future__ import annotations

import ctypes
import glob
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fallback_doctor.core.readers.collect.native import collect_native

CACHE = Path.home() / ".cache" / "gpu-fallback-doctor" / "driver-tests"
WHEEL_DIRS = [Path("/root/.cache/gfd-wheels"), CACHE / "wheels"]


def _wheel(pattern: str, requirement: str | None) -> Path | None:
    for directory in WHEEL_DIRS:
        found = sorted(glob.glob(str(directory / pattern)))
        if found:
            return Path(found[-1])
    if requirement is None:
        return None
    (CACHE / "wheels").mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "--platform",
            "manylinux2014_x86_64",
            "-d",
            str(CACHE / "wheels"),
            requirement,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if completed.returncode != 0:
        return None
    found = sorted(glob.glob(str(CACHE / "wheels" / pattern)))
    return Path(found[-1]) if found else None


def _member(pattern: str, requirement: str | None, member: str, target: str) -> Path:
    destination = CACHE / target / os.path.basename(member)
    if destination.exists():
        return destination
    wheel = _wheel(pattern, requirement)
    if wheel is None:
        pytest.skip(f"no wheel matching {pattern} is available")
    destination.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(member)
    partial = destination.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(destination)
    return destination


def _no_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return True
    return False


@pytest.fixture(scope="module")
def cudnn_shim() -> Path:
    """The real libcudnn.so.9 shim, alone in its directory (no libcudnn_graph.so.9 beside it)."""
    return _member("nvidia_cudnn_cu13-9.*.whl", None, "nvidia/cudnn/lib/libcudnn.so.9", "cudnn-shim-only")


def test_real_cudnn_shim_aborts_when_called_without_graph(cudnn_shim: Path) -> None:
    """The pitfall itself (compat-reference 3.2): this is why the probe checks first."""
    code = (
        "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
        "lib.cudnnGetVersion.restype = ctypes.c_size_t; print(lib.cudnnGetVersion())"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, str(cudnn_shim)], capture_output=True, text=True, check=False, timeout=60
    )
    assert completed.returncode == -6, (completed.returncode, completed.stdout, completed.stderr)


def test_probe_does_not_call_the_real_shim_without_graph(cudnn_shim: Path) -> None:
    facts = collect_native([str(cudnn_shim)], {"PATH": os.environ.get("PATH", "")})
    assert facts.ok, facts.outcome + facts.stderr
    (attempt,) = facts.attempts
    assert attempt.loaded and attempt.path == str(cudnn_shim)
    assert attempt.version is None
    assert "libcudnn_graph.so.9" in attempt.missing_companions
    assert attempt.skipped is not None and "libcudnn_graph.so.9" in attempt.skipped


@pytest.mark.skipif(not _no_driver(), reason="this machine has an NVIDIA driver")
def test_real_cudart_13_without_a_driver() -> None:
    cudart = _member(
        "nvidia_cuda_runtime-13.*.whl",
        "nvidia-cuda-runtime==13.5.37",
        "nvidia/cu13/lib/libcudart.so.13",
        "cudart13",
    )
    facts = collect_native([str(cudart)], {"PATH": os.environ.get("PATH", "")})
    assert facts.ok, facts.outcome
    (attempt,) = facts.attempts
    assert attempt.kind == "cudart" and attempt.path == str(cudart)
    assert attempt.version == 13050 and attempt.version_rc == 0
    assert attempt.driver_version == 0  # "0 when no driver is installed" (CUDA runtime API docs)
