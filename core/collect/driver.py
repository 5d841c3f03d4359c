"""The NVIDIA driver through NVML (nvidia-ml-py), in our own process, plus /proc/driver/nvidia.

NVML creates no CUDA context, so it may run here (nvitop does the same). Every NVML error
is mapped to what it means for a technician; "not available" is a value, not an exception.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fallback_doctor.core.facts.driver import DriverFacts, GpuInfo


@dataclass(frozen=True)
class NvmlErrorMeaning:
    """What one nvmlReturn_t means: our status word and a sentence for people."""

    status: str
    meaning: str


# nvmlReturn_t values (nvml.h; the same numbers as pynvml's NVML_ERROR_* constants, whose
# exception classes are NVMLError_<CamelCase name>: NVMLError_LibraryNotFound = 12,
# NVMLError_DriverNotLoaded = 9, NVMLError_LibRmVersionMismatch = 18, …).
NVML_ERRORS: dict[int, NvmlErrorMeaning] = {
    1: NvmlErrorMeaning("uninitialized", "NVML was used before it was initialised"),
    3: NvmlErrorMeaning("not_supported", "this query is not supported on this GPU or driver"),
    4: NvmlErrorMeaning(
        "no_permission",
        "this user may not talk to the NVIDIA driver (permissions of /dev/nvidiactl and /dev/nvidia*)",
    ),
    9: NvmlErrorMeaning(
        "driver_not_loaded",
        "the NVIDIA driver is installed but its kernel module is not loaded",
    ),
    12: NvmlErrorMeaning(
        "library_not_found",
        "the NVIDIA driver's library (libnvidia-ml.so.1 / nvml.dll) is not installed: no NVIDIA driver",
    ),
    13: NvmlErrorMeaning(
        "function_not_found",
        "the installed NVIDIA driver is older than this NVML call (function not found)",
    ),
    15: NvmlErrorMeaning("gpu_lost", "a GPU has fallen off the bus or is otherwise inaccessible"),
    16: NvmlErrorMeaning("reset_required", "a GPU needs a reset before it can be used again"),
    17: NvmlErrorMeaning(
        "blocked_by_os",
        "the operating system or cgroups block access to the GPU control device",
    ),
    18: NvmlErrorMeaning(
        "lib_rm_version_mismatch",
        "the driver's user-space libraries and its kernel module are of different versions "
        "(Driver/library version mismatch)",
    ),
    28: NvmlErrorMeaning("gpu_not_found", "no GPU was found"),
    999: NvmlErrorMeaning("error", "NVML failed with an unknown error"),
}

NVML_NAMES: dict[int, str] = {
    1: "NVML_ERROR_UNINITIALIZED",
    3: "NVML_ERROR_NOT_SUPPORTED",
    4: "NVML_ERROR_NO_PERMISSION",
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND",
    15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED",
    17: "NVML_ERROR_OPERATING_SYSTEM",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    28: "NVML_ERROR_GPU_NOT_FOUND",
    999: "NVML_ERROR_UNKNOWN",
}

_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")
_LIB_VERSION = re.compile(r"libnvidia-ml\.so\.(\d+(?:\.\d+)+)$")


def describe_nvml_error(code: int | None, text: str | None = None) -> NvmlErrorMeaning:
    """The meaning of an nvmlReturn_t; codes we do not know read "error" with NVML's text."""
    if code is not None and code in NVML_ERRORS:
        return NVML_ERRORS[code]
    return NvmlErrorMeaning("error", text or f"NVML failed with code {code}")


def collect_driver(env: Mapping[str, str], *, root: str = "/") -> DriverFacts:
    """Ask NVML for the driver version, the CUDA version it supports and the GPUs.

    Runs in our process (NVML creates no CUDA context). NVML ignores CUDA_VISIBLE_DEVICES,
    so ``env`` is not needed for the query itself; it is accepted for symmetry with the
    other collectors. ``root`` lets tests point /proc at a fake tree.

    By hand: `nvidia-smi` (header: driver version and "CUDA Version"),
    `nvidia-smi --query-gpu=name,compute_cap,memory.total,uuid --format=csv`, and
    `cat /proc/driver/nvidia/version`.
    """
    del env  # NVML sees every GPU whatever *_VISIBLE_DEVICES say.
    proc_line = read_proc_driver_version(root)
    kernel_module = parse_proc_driver_version(proc_line) if proc_line else None
    try:
        import pynvml
    except ImportError as error:
        return DriverFacts(
            nvml_status="pynvml_missing",
            nvml_error=f"nvidia-ml-py is not installed in the tool's environment ({error})",
            driver_version=None,
            cuda_driver_version=None,
            gpus=(),
            proc_driver_version=proc_line,
            kernel_module_version=kernel_module,
        )
    return _query_nvml(pynvml, proc_line, kernel_module)


def _query_nvml(pynvml: Any, proc_line: str | None, kernel_module: str | None) -> DriverFacts:
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        code = _code(error)
        meaning = describe_nvml_error(code, str(error))
        library_path = nvml_library_path()
        return DriverFacts(
            nvml_status=meaning.status,
            nvml_error=_error_text(meaning, code),
            driver_version=None,
            cuda_driver_version=None,
            gpus=(),
            proc_driver_version=proc_line,
            nvml_error_code=code,
            kernel_module_version=kernel_module,
            nvml_library_path=library_path,
            nvml_library_version=library_version(library_path),
        )
    try:
        driver_version = _optional(pynvml, pynvml.nvmlSystemGetDriverVersion)
        cuda_version, cuda_source, libcuda_error = _cuda_driver_version(pynvml)
        gpus = _gpus(pynvml)
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass
    library_path = nvml_library_path()
    return DriverFacts(
        nvml_status="ok",
        nvml_error=None,
        driver_version=str(driver_version) if driver_version is not None else None,
        cuda_driver_version=cuda_version,
        gpus=gpus,
        proc_driver_version=proc_line,
        cuda_driver_version_source=cuda_source,
        libcuda_error=libcuda_error,
        kernel_module_version=kernel_module,
        nvml_library_path=library_path,
        nvml_library_version=library_version(library_path),
    )


def _cuda_driver_version(pynvml: Any) -> tuple[int | None, str | None, str | None]:
    """The _v2 call asks libcuda itself; if libcuda is missing, that is worth knowing."""
    libcuda_error = None
    try:
        return int(pynvml.nvmlSystemGetCudaDriverVersion_v2()), "nvmlSystemGetCudaDriverVersion_v2", None
    except pynvml.NVMLError as error:
        code = _code(error)
        if code == 12:
            libcuda_error = (
                "NVML works but libcuda.so.1 / nvcuda.dll could not be loaded "
                "(nvmlSystemGetCudaDriverVersion_v2: NVML_ERROR_LIBRARY_NOT_FOUND)"
            )
    except AttributeError:
        pass
    try:
        return int(pynvml.nvmlSystemGetCudaDriverVersion()), "nvmlSystemGetCudaDriverVersion", libcuda_error
    except pynvml.NVMLError:
        return None, None, libcuda_error


def _gpus(pynvml: Any) -> tuple[GpuInfo, ...]:
    try:
        count = int(pynvml.nvmlDeviceGetCount())
    except pynvml.NVMLError:
        return ()
    gpus: list[GpuInfo] = []
    for index in range(count):
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        except pynvml.NVMLError as error:
            gpus.append(
                GpuInfo(
                    index,
                    "?",
                    None,
                    None,
                    None,
                    error=_error_text(describe_nvml_error(_code(error), str(error)), _code(error)),
                )
            )
            continue
        name = _optional(pynvml, pynvml.nvmlDeviceGetName, handle)
        cc = _optional(pynvml, pynvml.nvmlDeviceGetCudaComputeCapability, handle)
        memory = _optional(pynvml, pynvml.nvmlDeviceGetMemoryInfo, handle)
        uuid = _optional(pynvml, pynvml.nvmlDeviceGetUUID, handle)
        gpus.append(
            GpuInfo(
                index=index,
                name=str(name) if name is not None else "?",
                compute_capability=(int(cc[0]), int(cc[1])) if cc is not None else None,
                memory_total_mib=int(memory.total) // (1024 * 1024) if memory is not None else None,
                uuid=str(uuid) if uuid is not None else None,
            )
        )
    return tuple(gpus)


def _optional(pynvml: Any, function: Any, *args: Any) -> Any:
    """One NVML accessor; any NVML error (not supported, GPU lost …) reads as "not available"."""
    try:
        return function(*args)
    except pynvml.NVMLError:
        return None


def _code(error: BaseException) -> int | None:
    value = getattr(error, "value", None)
    return value if isinstance(value, int) else None


def _error_text(meaning: NvmlErrorMeaning, code: int | None) -> str:
    name = NVML_NAMES.get(code, f"nvmlReturn_t {code}") if code is not None else "NVML error"
    return f"{meaning.meaning} ({name})"


def read_proc_driver_version(root: str = "/") -> str | None:
    """First line of /proc/driver/nvidia/version (`cat /proc/driver/nvidia/version`)."""
    path = os.path.join(root, "proc", "driver", "nvidia", "version")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            line = handle.readline().strip()
    except OSError:
        return None
    return line or None


def parse_proc_driver_version(line: str) -> str | None:
    """The kernel module's version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06 …"."""
    match = _PROC_VERSION.search(line)
    return match.group(1) if match else None


def nvml_library_path() -> str | None:
    """The file libnvidia-ml.so.1 resolved to in this process (`grep nvidia-ml /proc/self/maps`)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and "libnvidia-ml.so" in parts[5]:
                    return parts[5].strip()
    except OSError:
        return None
    return None


def library_version(path: str | None) -> str | None:
    """The driver version in the library's file name: libnvidia-ml.so.580.65.06 -> 580.65.06."""
    if not path:
        return None
    match = _LIB_VERSION.search(os.path.basename(path))
    return match.group(1) if match else None
