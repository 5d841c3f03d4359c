"""Real ONNX Runtime C libraries for the C-API probe tests, fetched or unpacked once into a cache.

- ``npm_ort``: ``libonnxruntime.so.1`` of the npm package onnxruntime-node 1.23.2 (Linux x64),
  ``npm pack``-ed once into ``~/.cache/gpu-fallback-doctor/npm`` (a CPU library that lists the CUDA
  and TensorRT providers but ships neither provider library).
- ``gpu_wheel_ort``: ``libonnxruntime.so.1.31.1`` of the onnxruntime-gpu 1.31.1 wheel with its
  provider libraries, unpacked once from the wheel cache (no CUDA libraries beside it).
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor"))
NPM_VERSION = "1.23.2"
NPM_MEMBER = "package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
WHEELS = Path(os.environ.get("GFD_WHEELS", "/root/.cache/gfd-wheels"))
GPU_WHEEL = "onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl"
GPU_MEMBERS = (
    "onnxruntime/capi/libonnxruntime.so.1.31.1",
    "onnxruntime/capi/libonnxruntime_providers_shared.so",
    "onnxruntime/capi/libonnxruntime_providers_cuda.so",
    "onnxruntime/capi/libonnxruntime_providers_tensorrt.so",
)


@pytest.fixture(scope="session")
def npm_ort() -> Path:
    """The onnxruntime-node 1.23.2 C library (npm pack once, extract the one file)."""
    folder = CACHE / "npm"
    target = folder / f"onnxruntime-node-{NPM_VERSION}" / NPM_MEMBER
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"onnxruntime-node-{NPM_VERSION}.tgz"
    if not tarball.is_file():
        try:
            subprocess.run(
                ["npm", "pack", f"onnxruntime-node@{NPM_VERSION}"],
                cwd=folder,
                check=True,
                capture_output=True,
                timeout=300,
            )
        except (OSError, subprocess.SubprocessError) as error:
            pytest.skip(f"npm pack onnxruntime-node@{NPM_VERSION} failed: {error}")
    with tarfile.open(tarball) as archive:
        archive.extract(NPM_MEMBER, folder / f"onnxruntime-node-{NPM_VERSION}")
    return target


@pytest.fixture(scope="session")
def gpu_wheel_ort() -> Path:
    """The onnxruntime-gpu 1.31.1 C library with its provider libraries (unpacked once)."""
    folder = CACHE / "capi" / "onnxruntime_gpu-1.31.1"
    target = folder / GPU_MEMBERS[0]
    if all((folder / member).is_file() for member in GPU_MEMBERS):
        return target
    folders = (WHEELS, CACHE / "loader-wheels")
    wheel = next((f / GPU_WHEEL for f in folders if (f / GPU_WHEEL).is_file()), None)
    if wheel is None:
        pytest.skip(f"{GPU_WHEEL} is not in the wheel cache ({WHEELS}, {CACHE / 'loader-wheels'})")
    with zipfile.ZipFile(wheel) as archive:
        for member in GPU_MEMBERS:
            if not (folder / member).is_file():
                archive.extract(member, folder)
    return target
