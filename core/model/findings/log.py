"""The findings of core/judgement/checks/log.py: what the application's log says.

log.cause carries the log's top cause, found at run time."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("log.unreadable", Cause.COLLECTION_FAILED, Layer.PROBE, INFO, role=Role.CONTEXT),
    FindingSpec("log.clean", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.fell_back", Cause.UNKNOWN, Layer.UNKNOWN, WARNING, role=Role.CONTEXT),
    FindingSpec("log.cause", None, None, (ERROR, WARNING), role=Role.CAUSE),
    FindingSpec("log.outdated", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.log_severity", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.python_warnings", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.stderr_discarded", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.cause_not_logged", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.other", Cause.UNKNOWN, Layer.UNKNOWN, INFO, role=Role.CONTEXT),
)
