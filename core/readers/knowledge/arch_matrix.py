"""Compute capability -> does the CUDA major, and the ONNX Runtime build, have kernels for it.

Data: resources/compat/arch.json (compat-reference §4). The rules:
- SASS sm_XY runs on CC X.Z with Z >= Y (same major); sm_XYa only on exactly X.Y;
- PTX compute_XY is JIT-compiled for any CC >= X.Y, if the driver supports the CUDA
  version that emitted it (else error 222);
- nothing usable: cudaErrorNoKernelImageForDevice (209) at the first Run().
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.result import Words
from fallback_doctor.core.platform.resource_files import RESOURCES

_KERNEL = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")


@dataclass(frozen=True)
class ArchVerdict:
    """Whether a GPU of one compute capability can run the CUDA provider of one build."""

    supported: bool | None
    """True: an image exists (and the driver can JIT it, where that matters); False: error
    209 or 222 will come; None: not known (no data for this build or platform)."""
    cuda_major_ok: bool | None
    """Whether the CUDA major can target this GPU at all (CUDA 13 dropped CC < 7.5)."""
    image: str
    """"sass", "ptx_jit", "none" or "unknown"."""
    kernel: str | None
    """The image that serves it: "sm_86", "compute_90"."""
    ptx_needs_cuda: str | None
    """For a PTX-only match: the CUDA version the driver must support ("12.8")."""
    build: str | None
    """The build row used: "1.23-1.23 linux_x64"."""
    reason: str
    """One English sentence for the evidence (``words`` in English)."""
    source: tuple[str, ...]
    words: Words | None = None
    """The same sentence as the evidence catalogue's words (resources/texts/evidence/device.json)."""


@cache
def _data() -> dict[str, Any]:
    path = RESOURCES.joinpath("compat", "arch.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _minor_version(version: str) -> tuple[int, int] | None:
    match = re.match(r"^\s*(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _split_kernel(kernel: str) -> tuple[str, int, int, str] | None:
    """ "sm_90a" -> ("sm", 9, 0, "a"); "compute_120" -> ("compute", 12, 0, "")."""
    match = _KERNEL.match(kernel.split()[0])
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)


def build_row(ort_version: str, platform: str) -> dict[str, Any] | None:
    """The kernel-image row for this ONNX Runtime version and platform, if there is one."""
    wanted = _minor_version(ort_version)
    if wanted is None:
        return None
    for row in _data()["ort_builds"]:
        low = _minor_version(row["ort_min"])
        high = _minor_version(row["ort_max"])
        if row["platform"] == platform and low is not None and high is not None and low <= wanted <= high:
            return dict(row)
    return None


def cuda_major_supports(cc: tuple[int, int], cuda_major: int) -> bool | None:
    """Whether CUDA ``cuda_major`` can target CC ``cc`` at all; None for an unknown major."""
    for row in _data()["cuda_majors"]:
        if int(row["cuda_major"]) == cuda_major:
            minimum = (int(row["min_cc"][0]), int(row["min_cc"][1]))
            return cc >= minimum
    return None


def match_image(
    cc: tuple[int, int], sass: list[str], ptx: list[str], *, ptx_partial: bool = False
) -> tuple[str, str | None]:
    """Apply the kernel-image rules: ("sass", "sm_86"), ("ptx_jit", "compute_90") or ("none", None)."""
    for kernel in sass:
        parts = _split_kernel(kernel)
        if parts is None:
            continue
        _, major, minor, suffix = parts
        if suffix == "a" and (major, minor) == cc:
            return "sass", kernel
        if suffix != "a" and major == cc[0] and minor <= cc[1]:
            return "sass", kernel
    if ptx_partial:
        return "none", None
    for kernel in ptx:
        parts = _split_kernel(kernel)
        if parts is not None and (parts[1], parts[2]) <= cc:
            return "ptx_jit", kernel.split()[0]
    return "none", None


def arch_support(
    cc: tuple[int, int],
    ort_version: str | None,
    cuda_major: int,
    *,
    platform: str = "linux_x64",
    driver_cuda_version: int | None = None,
) -> ArchVerdict:
    """Can a GPU of compute capability ``cc`` run ONNX Runtime ``ort_version``'s CUDA kernels?

    ``platform`` is "linux_x64", "linux_aarch64" or "windows_x64"; ``driver_cuda_version``
    (1000*major + 10*minor, from NVML or cuDriverGetVersion) decides whether a PTX-only
    image can be JIT-compiled. By hand: `nvidia-smi --query-gpu=name,compute_cap --format=csv`
    and `cuobjdump --list-elf --list-ptx libonnxruntime_providers_cuda.so`.
    """
    cc_text = f"{cc[0]}.{cc[1]}"
    major_ok = cuda_major_supports(cc, cuda_major)
    if major_ok is False:
        return ArchVerdict(
            supported=False,
            cuda_major_ok=False,
            image="none",
            kernel=None,
            ptx_needs_cuda=None,
            build=None,
            **_reason(Words("evidence.arch.major_cannot", {"major": cuda_major, "cc": cc_text})),
            source=_major_source(cuda_major),
        )
    row = build_row(ort_version, platform) if ort_version else None
    if row is None:
        return ArchVerdict(
            supported=major_ok if ort_version is None else None,
            cuda_major_ok=major_ok,
            image="unknown",
            kernel=None,
            ptx_needs_cuda=None,
            build=None,
            **_reason(
                Words("evidence.arch.no_list", {"version": ort_version, "platform": platform})
                if ort_version
                else Words("evidence.arch.major_can", {"major": cuda_major, "cc": cc_text})
            ),
            source=_major_source(cuda_major),
        )
    build = f"{row['ort_min']}-{row['ort_max']} {row['platform']}"
    image, kernel = match_image(cc, row["sass"], row["ptx"], ptx_partial=bool(row.get("ptx_partial")))
    source = tuple(row["source"]) if isinstance(row["source"], list) else (str(row["source"]),)
    if image == "sass":
        words = Words("evidence.arch.sass", {"version": ort_version, "kernel": kernel, "cc": cc_text})
        return ArchVerdict(True, major_ok, image, kernel, None, build, **_reason(words), source=source)
    if image == "ptx_jit":
        needs = row.get("ptx_cuda")
        needed = _encode(needs) if needs else None
        too_old = driver_cuda_version is not None and needed is not None and driver_cuda_version < needed
        words = Words(
            "evidence.arch.ptx", {"version": ort_version, "kernel": kernel, "cc": cc_text, "needs": needs}
        )
        return ArchVerdict(
            not too_old, major_ok, image, kernel, needs, build, **_reason(words), source=source
        )
    images = ", ".join(row["sass"] + [p.split()[0] for p in row["ptx"]])
    words = Words(
        "evidence.arch.none",
        {"version": ort_version, "platform": row["platform"], "cc": cc_text, "images": images},
    )
    return ArchVerdict(False, major_ok, "none", None, None, build, **_reason(words), source=source)


def _reason(words: Words) -> dict[str, Any]:
    """The verdict's sentence: the catalogue's words and their English."""
    return {"reason": words_text(words, "en"), "words": words}


def _encode(cuda_version: str) -> int:
    major, _, minor = cuda_version.partition(".")
    return int(major) * 1000 + int(minor or 0) * 10


def _major_source(cuda_major: int) -> tuple[str, ...]:
    for row in _data()["cuda_majors"]:
        if int(row["cuda_major"]) == cuda_major:
            return tuple(row["source"])
    return ()


def platform_key(system: str | None, machine: str | None) -> str:
    """("Linux", "x86_64") -> "linux_x64"; ("Windows", "AMD64") -> "windows_x64"; aarch64 too."""
    os_part = "windows" if (system or "").lower().startswith("win") else "linux"
    arch = (machine or "").lower()
    arch_part = "aarch64" if arch in ("aarch64", "arm64") else "x64"
    return f"{os_part}_{arch_part}"


def gpu_family(cc: tuple[int, int]) -> str | None:
    """The architecture family of a compute capability ("Ampere (RTX 30, A10/A40)" for 8.6)."""
    text = f"{cc[0]}.{cc[1]}"
    for row in _data()["families"]:
        if text in [part.strip() for part in str(row["cc"]).split("/")]:
            return str(row["family"])
    return None


@dataclass(frozen=True)
class BuildSuggestion:
    """An ONNX Runtime release range whose CUDA kernels include machine code for a GPU."""

    ort_min: str
    ort_max: str
    cuda_major: int
    kernel: str


def builds_with_sass(cc: tuple[int, int], platform: str = "linux_x64") -> tuple[BuildSuggestion, ...]:
    """The release ranges (newest first) that ship SASS for ``cc`` on ``platform``."""
    found: list[BuildSuggestion] = []
    for row in _data()["ort_builds"]:
        if row["platform"] != platform:
            continue
        if cuda_major_supports(cc, int(row["cuda_major"])) is False:
            continue
        image, kernel = match_image(cc, row["sass"], [])
        if image == "sass" and kernel is not None:
            found.append(BuildSuggestion(row["ort_min"], row["ort_max"], int(row["cuda_major"]), kernel))
    found.sort(key=lambda item: _minor_version(item.ort_max) or (0, 0), reverse=True)
    return tuple(found)
