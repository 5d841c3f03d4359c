"""The findings of core/judgement/checks/tensorrt.py."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    # A warning when the application asks for TensorRT, a note otherwise (checks/tensorrt.py).
    FindingSpec("tensorrt.missing", Cause.TENSORRT_MISSING, Layer.TENSORRT, (WARNING, INFO), role=Role.CAUSE),
    FindingSpec(
        "tensorrt.other_major", Cause.TENSORRT_MISSING, Layer.TENSORRT, (WARNING, INFO), role=Role.CAUSE
    ),
    FindingSpec(
        "tensorrt.shadowed_by_other_major", Cause.TENSORRT_MISSING, Layer.TENSORRT, ERROR, role=Role.CAUSE
    ),
)
