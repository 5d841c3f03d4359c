"""The findings of core/flow/diagnosis.py itself: a check that crashed."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("check.crashed", Cause.COLLECTION_FAILED, Layer.PROBE, WARNING, role=Role.CONTEXT),
)
