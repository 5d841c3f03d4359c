"""Which pip package installs a CUDA library, and which CUDA libraries an ORT build needs.

Data, not code: resources/compat/pip_packages.json and resources/compat/ort_cuda_libraries.json,
each with its sources (compat-reference §5.2 and §1.2).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES


def _read(name: str) -> dict[str, Any]:
    text = RESOURCES.joinpath(f"compat/{name}").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def cuda_packages() -> dict[int, dict[str, str]]:
    """CUDA major -> library family (cudart, cublasLt, ...) -> the pip package that installs it."""
    table = _read("pip_packages.json")["cuda_runtime"]
    return {int(major): dict(families) for major, families in table.items()}


@cache
def cudnn_packages() -> dict[int, str]:
    """CUDA major -> the cuDNN pip package built for it (nvidia-cudnn-cu13)."""
    return {int(major): str(name) for major, name in _read("pip_packages.json")["cudnn"].items()}


@cache
def tensorrt_packages() -> dict[int, str]:
    """CUDA major -> the TensorRT pip package built for it (tensorrt-cu12)."""
    return {int(major): str(name) for major, name in _read("pip_packages.json")["tensorrt"].items()}


@cache
def wheel_stems() -> dict[str, str]:
    """Library family, lower case -> the pip package name without its -cuNN suffix."""
    return {str(family): str(stem) for family, stem in _read("pip_packages.json")["wheel_stems"].items()}


@cache
def wheel_lib_dirs() -> dict[str, str]:
    """pip package -> the folder (relative to site-packages or a ``pip --target`` folder) that
    holds its Linux libraries: nvidia/cublas/lib (CUDA 12), nvidia/cu13/lib (CUDA 13)."""
    return {
        str(package): str(folder) for package, folder in _read("pip_packages.json")["wheel_lib_dirs"].items()
    }


OrtCudaRange = tuple[tuple[int, int], tuple[int, int], tuple[str, ...], tuple[str, ...]]


@cache
def ort_cuda_ranges() -> tuple[OrtCudaRange, ...]:
    """[from, to) ORT release -> the CUDA families its CUDA provider needs at load time, Linux, Windows."""
    rows = _read("ort_cuda_libraries.json")["ranges"]
    return tuple(
        (
            (int(row["from"][0]), int(row["from"][1])),
            (int(row["to"][0]), int(row["to"][1])),
            tuple(row["linux"]),
            tuple(row["windows"]),
        )
        for row in rows
    )
