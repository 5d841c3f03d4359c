"""ONNX Runtime release -> the CUDA, cuDNN and TensorRT majors its PyPI GPU wheel needs.

Data, not code: resources/compat/ort_releases.json, every row with its sources and status
(compiled from the compatibility reference, section 1.1). Verdicts use majors: a build for
CUDA 12 loads libcudart.so.12 / cudart64_12.dll, whatever minor it was compiled with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_RESOURCE = "compat/ort_releases.json"


@dataclass(frozen=True)
class PypiVersion:
    """One concrete onnxruntime-gpu version known to be on PyPI."""

    version: str
    requires_python: str | None


@dataclass(frozen=True)
class OrtRequirement:
    """What one ONNX Runtime release's PyPI onnxruntime-gpu wheel was built with and needs."""

    release: str
    """The matrix row: a release line ("1.23") or one exact release ("1.18.1")."""
    cuda_build: str
    cuda_major: int
    cudnn_major: int
    tensorrt_major: int | None
    tensorrt: str | None
    """The TensorRT row as written (may say UNVERIFIED)."""
    cudnn_loaded_lazily: bool
    cuda_extras: bool | None
    """Whether `onnxruntime-gpu[cuda,cudnn]==V` installs the NVIDIA wheels (None: no extras)."""
    pypi_versions: tuple[PypiVersion, ...]
    status: str
    sources: tuple[str, ...]
    notes: str | None = None
    pypi_releases: tuple[str, ...] = ()
    """Every release of this line PyPI serves (``pip index versions onnxruntime-gpu``)."""


@cache
def _rows() -> tuple[OrtRequirement, ...]:
    text = RESOURCES.joinpath(_RESOURCE).read_text(encoding="utf-8")
    data = json.loads(text)
    return tuple(_row(item) for item in data["releases"])


def _row(item: dict[str, Any]) -> OrtRequirement:
    return OrtRequirement(
        release=str(item["release"]),
        cuda_build=str(item["cuda_build"]),
        cuda_major=int(item["cuda_major"]),
        cudnn_major=int(item["cudnn_major"]),
        tensorrt_major=None if item.get("tensorrt_major") is None else int(item["tensorrt_major"]),
        tensorrt=item.get("tensorrt"),
        cudnn_loaded_lazily=bool(item.get("cudnn_loaded_lazily")),
        cuda_extras=item.get("cuda_extras"),
        pypi_versions=tuple(
            PypiVersion(str(entry["version"]), entry.get("requires_python"))
            for entry in item.get("pypi_versions", [])
        ),
        status=str(item["status"]),
        sources=tuple(str(source) for source in item["source"]),
        notes=item.get("notes"),
        pypi_releases=tuple(str(entry["version"]) for entry in item.get("pypi_releases", [])),
    )


def all_requirements() -> tuple[OrtRequirement, ...]:
    """Every row of the matrix, oldest release first."""
    return _rows()


def newest_gpu_release() -> str:
    """The newest onnxruntime-gpu release on PyPI when the table was last checked."""
    text = RESOURCES.joinpath(_RESOURCE).read_text(encoding="utf-8")
    return str(json.loads(text)["newest_gpu_release"])


def release_tuple(version: str) -> tuple[int, ...] | None:
    """(1, 23, 2) for "1.23.2", "1.23.2.dev20250101" or "1.23.2+cu122"; None when unparsable."""
    try:
        return Version(version.strip()).release
    except InvalidVersion:
        return None


def ort_requirements(version: str) -> OrtRequirement | None:
    """The matrix row for an ONNX Runtime version ("1.23.2" -> the 1.23 row), None if unknown.

    The most specific row wins (1.18.1 has its own row, 1.18.0 too). Versions newer than
    the matrix are unknown rather than guessed. By hand: the tables on
    onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements.
    """
    wanted = release_tuple(version)
    if not wanted:
        return None
    best: OrtRequirement | None = None
    best_len = 0
    for row in _rows():
        key = tuple(int(part) for part in row.release.split("."))
        padded = wanted + (0,) * max(0, len(key) - len(wanted))
        if padded[: len(key)] == key and len(key) > best_len:
            best, best_len = row, len(key)
    return best


def ort_versions_for_cuda_major(major: int, *, python_version: str | None = None) -> tuple[str, ...]:
    """Concrete onnxruntime-gpu versions on PyPI built for this CUDA major, newest first.

    With ``python_version`` ("3.10.12"), versions whose Requires-Python excludes it are
    left out. Used in fixes: "install onnxruntime-gpu==1.26.0 to match your CUDA 12".
    By hand: ``pip index versions onnxruntime-gpu`` and the CUDA EP requirements table.
    """
    python = _version_or_none(python_version) if python_version else None
    found: list[tuple[Version, str]] = []
    for row in _rows():
        if row.cuda_major != major:
            continue
        for entry in row.pypi_versions:
            if python is not None and entry.requires_python and not _allows(entry.requires_python, python):
                continue
            found.append((Version(entry.version), entry.version))
    found.sort(reverse=True)
    return tuple(text for _, text in found)


def _version_or_none(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _allows(spec: str, python: Version) -> bool:
    try:
        return SpecifierSet(spec).contains(python, prereleases=True)
    except InvalidSpecifier:
        return True
