"""The findings of core/judgement/checks/device.py: GPUs hidden, absent, or of an unsupported architecture."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "device.cuda_visible_devices_hides_all", Cause.NO_GPU_VISIBLE, Layer.DEVICE, ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "device.nvidia_visible_devices_none", Cause.NO_GPU_VISIBLE, Layer.DEVICE, ERROR, role=Role.CAUSE
    ),
    FindingSpec("device.no_gpu", Cause.NO_GPU_VISIBLE, Layer.DEVICE, ERROR, role=Role.CAUSE),
    FindingSpec(
        "device.container_without_gpu", Cause.CONTAINER_NO_DEVICE, Layer.DEVICE, ERROR, role=Role.CAUSE
    ),
    FindingSpec("device.unsupported_arch", Cause.UNSUPPORTED_ARCH, Layer.DEVICE, ERROR, role=Role.CAUSE),
    FindingSpec("device.arch_ptx_only", Cause.UNSUPPORTED_ARCH, Layer.DEVICE, INFO, role=Role.CONTEXT),
)
