"""Facts about the NVIDIA driver: NVML, libcuda, /proc/driver/nvidia/version."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as NVML reports it (`nvidia-smi --query-gpu=name,compute_cap,memory.total,uuid`)."""

    index: int
    name: str
    compute_capability: tuple[int, int] | None
    memory_total_mib: int | None
    uuid: str | None
    error: str | None = None
    """What NVML said when this GPU could not be queried completely (e.g. "GPU is lost")."""


@dataclass(frozen=True)
class DriverFacts:
    """The driver as NVML, the loader and the kernel module report it."""

    nvml_status: str
    """"ok", or what the NVML error means: "library_not_found" (no driver),
    "driver_not_loaded", "lib_rm_version_mismatch", "no_permission", "uninitialized",
    "function_not_found", "gpu_lost", "blocked_by_os", "pynvml_missing", "error"."""
    nvml_error: str | None
    """The meaning of the NVML error in words, followed by NVML's own name for it."""
    driver_version: str | None
    """nvmlSystemGetDriverVersion: "580.65.06" (Linux), "576.57" (Windows)."""
    cuda_driver_version: int | None
    """The newest CUDA the driver supports, 1000*major + 10*minor (NVML)."""
    gpus: tuple[GpuInfo, ...]
    proc_driver_version: str | None
    """First line of /proc/driver/nvidia/version, where present."""
    nvml_error_code: int | None = None
    """The nvmlReturn_t of the failing call (12 library not found, 18 RM version mismatch …)."""
    cuda_driver_version_source: str | None = None
    """"nvmlSystemGetCudaDriverVersion_v2" (asks libcuda itself) or the v1 call (a guess
    NVML makes when libcuda is missing)."""
    libcuda_error: str | None = None
    """Set when NVML works but could not reach libcuda (NVML_ERROR_LIBRARY_NOT_FOUND from
    the _v2 call): the management library is there, the compute library is not."""
    kernel_module_version: str | None = None
    """The kernel module's version, parsed from /proc/driver/nvidia/version ("580.65.06")."""
    nvml_library_path: str | None = None
    """The file libnvidia-ml.so.1 resolved to in this process (Linux, from /proc/self/maps)."""
    nvml_library_version: str | None = None
    """The user-space driver version in that file's name (libnvidia-ml.so.580.65.06)."""
