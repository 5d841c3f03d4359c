"""The findings of core/judgement/checks/collection.py: a layer whose facts could not be collected."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("collect.failed", Cause.COLLECTION_FAILED, Layer.PROBE, WARNING, role=Role.CONTEXT),
    FindingSpec("collect.python.failed", Cause.COLLECTION_FAILED, Layer.PROBE, WARNING, role=Role.CONTEXT),
    FindingSpec("probe.native_failed", Cause.PROBE_FAILED, Layer.PROBE, WARNING, role=Role.CONTEXT),
    FindingSpec("probe.interrupted", Cause.PROBE_FAILED, Layer.PROBE, INFO, role=Role.CONTEXT),
)
