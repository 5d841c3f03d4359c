"""The findings of core/checks/tensorrt.py."""

from __future__ import annotations

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.findings.spec import FindingSpec
from fallback_doctor.core.model import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("tensorrt.missing", Cause.TENSORRT_MISSING, Layer.TENSORRT, WARNING),
    FindingSpec("tensorrt.other_major", Cause.TENSORRT_MISSING, Layer.TENSORRT, WARNING),
    FindingSpec("tensorrt.shadowed_by_other_major", Cause.TENSORRT_MISSING, Layer.TENSORRT, ERROR),
)
