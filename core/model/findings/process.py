"""The findings of core/judgement/checks/process.py: the running server's process, maps and environment."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("process.not_found", Cause.COLLECTION_FAILED, Layer.PROBE, INFO, role=Role.CONTEXT),
    FindingSpec("process.read_denied", Cause.COLLECTION_FAILED, Layer.PROBE, INFO, role=Role.CONTEXT),
    FindingSpec("process.gpu_hidden", Cause.NO_GPU_VISIBLE, Layer.DEVICE, (ERROR, INFO), role=Role.CAUSE),
    FindingSpec(
        "process.container_without_gpu",
        Cause.CONTAINER_NO_DEVICE,
        Layer.DEVICE,
        (ERROR, INFO),
        role=Role.CAUSE,
    ),
    FindingSpec("process.environment_differs", Cause.UNKNOWN, Layer.LOADER, INFO, role=Role.CAUSE),
    FindingSpec("process.sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, WARNING, role=Role.CAUSE),
    FindingSpec("process.shell_sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, INFO, role=Role.CAUSE),
    FindingSpec("process.no_onnxruntime", Cause.UNKNOWN, Layer.PACKAGE, INFO, role=Role.CONTEXT),
    FindingSpec(
        "process.cpu_only_build", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, (ERROR, INFO), role=Role.CAUSE
    ),
    FindingSpec(
        "process.cuda_provider_not_loaded", Cause.UNKNOWN, Layer.LOADER, (ERROR, INFO), role=Role.CONTEXT
    ),
    FindingSpec("process.no_gpu_memory", Cause.UNKNOWN, Layer.DEVICE, WARNING, role=Role.CONTEXT),
    FindingSpec("process.uses_gpu", Cause.UNKNOWN, Layer.DEVICE, INFO, role=Role.CONTEXT),
    FindingSpec("process.cuda_major_mapped", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, ERROR, role=Role.CAUSE),
    FindingSpec(
        "process.cudnn_major_mapped", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR, role=Role.CAUSE
    ),
    FindingSpec("process.libraries_replaced", Cause.UNKNOWN, Layer.LOADER, INFO, role=Role.CONTEXT),
    FindingSpec("process.mapped_libraries", Cause.UNKNOWN, Layer.LOADER, INFO, role=Role.CONTEXT),
    FindingSpec("process.gpu_not_asked", Cause.UNKNOWN, Layer.CONFIG, ERROR, role=Role.DECIDES),
)
