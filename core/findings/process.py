"""The findings of core/checks/process.py: the running server's process, maps and environment."""

from __future__ import annotations

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.findings.spec import FindingSpec
from fallback_doctor.core.model import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("process.not_found", Cause.COLLECTION_FAILED, Layer.PROBE, INFO),
    FindingSpec("process.read_denied", Cause.COLLECTION_FAILED, Layer.PROBE, INFO),
    FindingSpec("process.gpu_hidden", Cause.NO_GPU_VISIBLE, Layer.DEVICE, (ERROR, INFO)),
    FindingSpec("process.container_without_gpu", Cause.CONTAINER_NO_DEVICE, Layer.DEVICE, (ERROR, INFO)),
    FindingSpec("process.environment_differs", Cause.UNKNOWN, Layer.LOADER, INFO),
    FindingSpec("process.sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, WARNING),
    FindingSpec("process.shell_sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, INFO),
    FindingSpec("process.no_onnxruntime", Cause.UNKNOWN, Layer.PACKAGE, INFO),
    FindingSpec("process.cpu_only_build", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, (ERROR, INFO)),
    FindingSpec("process.cuda_provider_not_loaded", Cause.UNKNOWN, Layer.LOADER, (ERROR, INFO)),
    FindingSpec("process.no_gpu_memory", Cause.UNKNOWN, Layer.DEVICE, WARNING),
    FindingSpec("process.uses_gpu", Cause.UNKNOWN, Layer.DEVICE, INFO),
    FindingSpec("process.cuda_major_mapped", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, ERROR),
    FindingSpec("process.cudnn_major_mapped", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR),
    FindingSpec("process.libraries_replaced", Cause.UNKNOWN, Layer.LOADER, INFO),
    FindingSpec("process.mapped_libraries", Cause.UNKNOWN, Layer.LOADER, INFO),
    FindingSpec("process.gpu_not_asked", Cause.UNKNOWN, Layer.CONFIG, ERROR),
)
