"""Real wheels for the loader and library-check tests: found in a local cache or downloaded once.

Wheels come from ``GFD_WHEELS`` or ``/root/.cache/gfd-wheels`` when present, else ``pip download``
into ``~/.cache/gpu-fallback-doctor/loader-wheels``; each is unpacked once into
``~/.cache/gpu-fallback-doctor/unpacked/<wheel>``. Never inside the clone.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor"))
DOWNLOADS = CACHE / "loader-wheels"
UNPACKED = CACHE / "unpacked"

# requirement, platform tag for pip, glob of the wheel file name
WHEELS: dict[str, tuple[str, str, str]] = {
    "ort131": (
        "onnxruntime-gpu==1.31.1",
        "manylinux_2_28_x86_64",
        "onnxruntime_gpu-1.31.1-cp311-*manylinux*x86_64.whl",
    ),
    "ort123": (
        "onnxruntime-gpu==1.23.2",
        "manylinux_2_28_x86_64",
        "onnxruntime_gpu-1.23.2-cp311-*manylinux*x86_64.whl",
    ),
    "cudart13": (
        "nvidia-cuda-runtime==13.5.37",
        "manylinux_2_17_x86_64",
        "nvidia_cuda_runtime-13.5.37-*manylinux*x86_64.whl",
    ),
    "cublas13": (
        "nvidia-cublas==13.10.0.20",
        "manylinux_2_17_x86_64",
        "nvidia_cublas-13.10.0.20-*manylinux*x86_64.whl",
    ),
    "curand10": (
        "nvidia-curand==10.4.5.25",
        "manylinux_2_27_x86_64",
        "nvidia_curand-10.4.5.25-*manylinux*x86_64.whl",
    ),
    "cudnn9": (
        "nvidia-cudnn-cu13==9.28.1.4",
        "manylinux_2_27_x86_64",
        "nvidia_cudnn_cu13-9.28.1.4-*manylinux*x86_64.whl",
    ),
    "win_ort131": ("onnxruntime-gpu==1.31.1", "win_amd64", "onnxruntime_gpu-1.31.1-cp311-*win_amd64.whl"),
    "win_cudart13": (
        "nvidia-cuda-runtime==13.5.37",
        "win_amd64",
        "nvidia_cuda_runtime-13.5.37-*win_amd64.whl",
    ),
}


def _sources() -> list[Path]:
    found = [Path(item) for item in os.environ.get("GFD_WHEELS", "").split(os.pathsep) if item]
    found += [Path("/root/.cache/gfd-wheels"), CACHE / "win", DOWNLOADS]
    return [item for item in found if item.is_dir()]


def _find(pattern: str) -> Path | None:
    for directory in _sources():
        for entry in sorted(directory.iterdir()):
            if fnmatch.fnmatch(entry.name, pattern):
                return entry
    return None


def wheel_dir(key: str) -> Path:
    """The unpacked tree of a pinned wheel; the test is skipped when it cannot be had."""
    requirement, platform, pattern = WHEELS[key]
    wheel = _find(pattern)
    if wheel is None:
        DOWNLOADS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.11",
                "--platform",
                platform,
                requirement,
                "-d",
                str(DOWNLOADS),
            ],
            capture_output=True,
            timeout=900,
            check=False,
        )
        wheel = _find(pattern)
    if wheel is None:
        pytest.skip(f"wheel {requirement} ({platform}) not available")
    target = UNPACKED / wheel.name[:-4]
    if not (target / ".complete").exists():
        partial = target.with_name(target.name + f".partial{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(partial)
        (partial / ".complete").write_text("ok")
        if target.exists():
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.rename(target)
    return target


def provider(key: str = "ort131", name: str = "libonnxruntime_providers_cuda.so") -> Path:
    """A provider library of an unpacked onnxruntime-gpu wheel."""
    return wheel_dir(key) / "onnxruntime" / "capi" / name


def cu13_lib(key: str) -> Path:
    """The lib directory of an unpacked NVIDIA CUDA 13 wheel (nvidia/cu13/lib)."""
    return wheel_dir(key) / "nvidia" / "cu13" / "lib"


def cudnn_lib() -> Path:
    """nvidia/cudnn/lib of the unpacked cuDNN wheel."""
    return wheel_dir("cudnn9") / "nvidia" / "cudnn" / "lib"


def link_tree(source: Path, target: Path) -> None:
    """Recreate ``source``'s files under ``target`` as hard links (symlinks where links fail)."""
    for root, _dirs, files in os.walk(source):
        relative = Path(root).relative_to(source)
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            src = Path(root) / name
            dst = target / relative / name
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)


def place(files: dict[str, Path], directory: Path) -> Path:
    """Put real library files under the given names into ``directory`` (hard links or copies)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        destination = directory / name
        try:
            os.link(source, destination)
        except OSError:
            shutil.copy2(source, destination)
    return directory
