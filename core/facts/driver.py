"""Facts about the NVIDIA driver: NVML, libcuda, /proc/driver/nvidia/version."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as NVML reports it."""

    index: int
    name: str
    compute_capability: tuple[int, int] | None
    memory_total_mib: int | None
    uuid: str | None


@dataclass(frozen=True)
class DriverFacts:
    """The driver as NVML, the loader and the kernel module report it."""

    nvml_status: str
    """"ok", or what the NVML error means: "library_not_found" (no driver),
    "driver_not_loaded", "lib_rm_version_mismatch", "no_permission", "error"."""
    nvml_error: str | None
    driver_version: str | None
    cuda_driver_version: int | None
    """The newest CUDA the driver supports, 1000*major + 10*minor (NVML)."""
    gpus: tuple[GpuInfo, ...]
    proc_driver_version: str | None
    """First line of /proc/driver/nvidia/version, where present."""
