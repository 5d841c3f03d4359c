"""The NVIDIA driver through NVML (nvidia-ml-py), in our own process, plus /proc/driver/nvidia.

NVML creates no CUDA context, so it may run here (nvitop does the same). Every NVML error
is mapped to what it means for a technician; "not available" is a value, not an exception.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.model.facts.driver import DriverFacts, GpuInfo

# The meanings of NVML's error codes are knowledge (resources/compat/nvml_errors.json).
from fallback_doctor.core.readers.knowledge.nvml_errors import (
    NVML_NAMES,
    NvmlErrorMeaning,
    describe_nvml_error,
)

_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")
_LIB_VERSION = re.compile(r"libnvidia-ml\.so\.(\d+(?:\.\d+)+)$")


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
    if _nvml_cannot_load():
        # What pynvml's nvmlInit would say (its first step is the same dlopen), without its
        # import (about 30 ms of the quick diagnosis on every machine without a driver).
        meaning = describe_nvml_error(12)
        return DriverFacts(
            nvml_status=meaning.status,
            nvml_error=_error_text(meaning, 12),
            driver_version=None,
            cuda_driver_version=None,
            gpus=(),
            proc_driver_version=proc_line,
            nvml_error_code=12,
            kernel_module_version=kernel_module,
            nvml_library_path=None,
            nvml_library_version=None,
        )
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


def _nvml_cannot_load() -> bool:
    """True when pynvml is installed but its library cannot be loaded (Linux: libnvidia-ml.so.1).

    pynvml loads it with ``CDLL("libnvidia-ml.so.1")`` on its first nvmlInit; the same call
    here decides without importing pynvml. Windows keeps pynvml's own search (two paths).
    """
    if sys.platform.startswith("win"):
        return False
    from importlib.util import find_spec

    if find_spec("pynvml") is None:
        return False  # the import below reports "pynvml_missing", as before
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return True
    return False


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
