"""The cause codes of the GPU stack (shared/corpus/README.md) and the layer each belongs to."""

from __future__ import annotations

from enum import StrEnum

from fallback_doctor.core.model.result import Layer


class Cause(StrEnum):
    """Why the GPU path failed. GPU-stack codes are the corpus's; the rest are ours."""

    CUDA_RUNTIME_MISSING = "cuda_runtime_missing"
    CUDA_MAJOR_MISMATCH = "cuda_major_mismatch"
    CUDNN_MISSING = "cudnn_missing"
    CUDNN_MAJOR_MISMATCH = "cudnn_major_mismatch"
    ZLIBWAPI_MISSING = "zlibwapi_missing"
    TENSORRT_MISSING = "tensorrt_missing"
    DRIVER_MISSING = "driver_missing"
    DRIVER_TOO_OLD = "driver_too_old"
    NVML_DRIVER_LIBRARY_MISMATCH = "nvml_driver_library_mismatch"
    NO_GPU_VISIBLE = "no_gpu_visible"
    CONTAINER_NO_DEVICE = "container_no_device"
    UNSUPPORTED_ARCH = "unsupported_arch"
    PACKAGE_CONFLICT = "package_conflict"
    EP_NOT_IN_BUILD = "ep_not_in_build"
    WINDOWS_DLL_LOAD_ERROR = "windows_dll_load_error"
    OUT_OF_MEMORY = "out_of_memory"
    UNKNOWN = "unknown"
    # Our own codes, for findings that are not about the GPU stack itself.
    CPU_BY_CONFIGURATION = "cpu_by_configuration"
    CONFIG_INVALID = "config_invalid"
    ORT_NOT_INSTALLED = "ort_not_installed"
    COLLECTION_FAILED = "collection_failed"
    PROBE_FAILED = "probe_failed"
    TORCH_CUDA_CONFLICT = "torch_cuda_conflict"
    NVML_NO_PERMISSION = "nvml_no_permission"


CAUSE_LAYER: dict[Cause, Layer] = {
    Cause.CUDA_RUNTIME_MISSING: Layer.CUDA,
    Cause.CUDA_MAJOR_MISMATCH: Layer.CUDA,
    Cause.CUDNN_MISSING: Layer.CUDNN,
    Cause.CUDNN_MAJOR_MISMATCH: Layer.CUDNN,
    Cause.ZLIBWAPI_MISSING: Layer.CUDNN,
    Cause.TENSORRT_MISSING: Layer.TENSORRT,
    Cause.DRIVER_MISSING: Layer.DRIVER,
    Cause.DRIVER_TOO_OLD: Layer.DRIVER,
    Cause.NVML_DRIVER_LIBRARY_MISMATCH: Layer.DRIVER,
    Cause.NVML_NO_PERMISSION: Layer.DRIVER,
    Cause.NO_GPU_VISIBLE: Layer.DEVICE,
    Cause.CONTAINER_NO_DEVICE: Layer.DEVICE,
    Cause.UNSUPPORTED_ARCH: Layer.DEVICE,
    Cause.PACKAGE_CONFLICT: Layer.PACKAGE,
    Cause.EP_NOT_IN_BUILD: Layer.PACKAGE,
    Cause.WINDOWS_DLL_LOAD_ERROR: Layer.LOADER,
    Cause.OUT_OF_MEMORY: Layer.RESOURCES,
    Cause.UNKNOWN: Layer.UNKNOWN,
    Cause.CPU_BY_CONFIGURATION: Layer.CONFIG,
    Cause.CONFIG_INVALID: Layer.CONFIG,
    Cause.ORT_NOT_INSTALLED: Layer.PACKAGE,
    Cause.COLLECTION_FAILED: Layer.PROBE,
    Cause.PROBE_FAILED: Layer.PROBE,
    Cause.TORCH_CUDA_CONFLICT: Layer.CUDA,
}


def layer_of(cause: Cause | str) -> Layer:
    """The layer a technician fixes for this cause code."""
    return CAUSE_LAYER.get(Cause(cause), Layer.UNKNOWN)
