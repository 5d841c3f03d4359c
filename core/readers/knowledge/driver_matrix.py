"""CUDA major -> minimum NVIDIA driver (resources/compat/cuda_driver.json), and version compares.

Driver versions compare as integer tuples, padded to three parts: 527.41 is (527, 41, 0),
580.65.06 is (580, 65, 6). Never as floats or strings ("527.41" < "527.5" as strings).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES

_VERSION = re.compile(r"^\s*(\d+)((?:\.\d+)*)\s*$")


@dataclass(frozen=True)
class DriverRequirement:
    """The oldest driver that runs code built with one CUDA major on one OS."""

    cuda_major: int
    os: str
    """"linux" or "windows"."""
    minimum: str
    """The version as NVIDIA writes it: "525.60.13", "527.41"."""
    branch: str
    """The driver branch: "525", "580"."""
    status: str
    """How the row is known: VERIFIED-DOC, SECONDARY …"""
    note: str
    source: tuple[str, ...]


def parse_driver_version(text: str | None) -> tuple[int, int, int] | None:
    """ "580.65.06" -> (580, 65, 6); "576.57" -> (576, 57, 0); None for anything else."""
    if not text:
        return None
    match = _VERSION.match(text)
    if match is None:
        return None
    parts = [int(match.group(1))] + [int(part) for part in match.group(2).split(".") if part]
    if len(parts) > 3:
        return None
    parts += [0] * (3 - len(parts))
    return (parts[0], parts[1], parts[2])


def driver_at_least(version: str | None, minimum: str) -> bool | None:
    """Whether ``version`` >= ``minimum``, compared as integer tuples; None if unparsable."""
    have = parse_driver_version(version)
    need = parse_driver_version(minimum)
    if have is None or need is None:
        return None
    return have >= need


def normalize_os(name: str) -> str:
    """ "Linux", "linux2", "win32", "Windows", "nt" -> "linux" / "windows"."""
    lowered = name.lower()
    if lowered.startswith(("win", "nt", "cygwin", "msys")):
        return "windows"
    return "linux"


def cuda_version_text(encoded: int | None) -> str | None:
    """1000*major + 10*minor -> "major.minor": 12020 -> "12.2", 13000 -> "13.0"."""
    if encoded is None or encoded <= 0:
        return None
    return f"{encoded // 1000}.{(encoded % 1000) // 10}"


@cache
def _data() -> dict[str, Any]:
    path = RESOURCES.joinpath("compat", "cuda_driver.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def min_driver_for_cuda(major: int, os: str) -> DriverRequirement | None:
    """The minimum driver for any application built with CUDA ``major`` (minor-version
    compatibility floor), on ``os``; None for a major the table does not know.

    By hand: the "Driver Version" in `nvidia-smi`'s header against NVIDIA's CUDA release
    notes, Table 2 ("CUDA Toolkit and Minimum Required Driver Version").
    """
    system = normalize_os(os)
    for row in _data()["minimum_driver"]:
        if int(row["cuda_major"]) == major and row.get(system):
            return DriverRequirement(
                cuda_major=major,
                os=system,
                minimum=str(row[system]),
                branch=str(row["branch"]),
                status=str(row["status"][system]),
                note=str(row.get("note", "")),
                source=tuple(row["source"]),
            )
    return None


def toolkit_driver(cuda_version: str, os: str) -> DriverRequirement | None:
    """The driver bundled with a CUDA toolkit release ("12.8" -> its GA row, 570.26 on Linux).

    Stricter than the floor: needed only for PTX JIT or new features. None when unknown.
    """
    system = normalize_os(os)
    rows = [row for row in _data()["toolkit_driver"] if row["cuda_version"] == cuda_version]
    candidates = [row for row in rows if row.get(system)]
    if not candidates:
        return None
    row = min(candidates, key=lambda item: parse_driver_version(item[system]) or (0, 0, 0))
    return DriverRequirement(
        cuda_major=int(cuda_version.split(".")[0]),
        os=system,
        minimum=str(row[system]),
        branch=str(row[system]).split(".")[0],
        status="VERIFIED-DOC",
        note=f"driver bundled with CUDA {row['cuda']}",
        source=(str(row["source"]),),
    )
