"""The findings of the driver checks (core/judgement/checks/driver.py and driver_missing.py)."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("driver.missing", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.missing.windows", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.missing.wsl", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.missing.container", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.stub_library", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.not_loaded", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.libcuda_missing", Cause.DRIVER_MISSING, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.too_old", Cause.DRIVER_TOO_OLD, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec(
        "driver.forward_compat_unsupported", Cause.DRIVER_TOO_OLD, Layer.DRIVER, ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "driver.library_mismatch", Cause.NVML_DRIVER_LIBRARY_MISMATCH, Layer.DRIVER, ERROR, role=Role.CAUSE
    ),
    FindingSpec("driver.nvml_no_permission", Cause.NVML_NO_PERMISSION, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.nvml_failed", Cause.UNKNOWN, Layer.DRIVER, WARNING, role=Role.CAUSE),
    FindingSpec("driver.cuinit_failed", Cause.UNKNOWN, Layer.DRIVER, ERROR, role=Role.CAUSE),
    FindingSpec("driver.probe_hung", Cause.UNKNOWN, Layer.DRIVER, ERROR, role=Role.CAUSE),
)
