"""The findings of the test inference (core/readers/inference/findings.py; declared here).

inference.fell_back and inference.failed carry the cause the probe found, at run time."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("inference.fell_back", None, None, ERROR, role=Role.CAUSE),
    FindingSpec("inference.fell_back_native", None, None, ERROR, role=Role.CAUSE),
    FindingSpec("inference.failed", None, None, ERROR, role=Role.CAUSE),
    FindingSpec("inference.gpu_verified", Cause.UNKNOWN, Layer.PROBE, INFO, role=Role.CONTEXT),
    FindingSpec("inference.partial_placement", Cause.UNKNOWN, Layer.PROBE, WARNING, role=Role.CAUSE),
    FindingSpec("inference.outputs_differ", Cause.UNKNOWN, Layer.PROBE, WARNING, role=Role.CONTEXT),
    FindingSpec("inference.probe_failed", Cause.PROBE_FAILED, Layer.PROBE, ERROR, role=Role.CONTEXT),
    FindingSpec("inference.unusable_model", Cause.CONFIG_INVALID, Layer.PROBE, WARNING, role=Role.CONTEXT),
    FindingSpec("inference.strategy_further", Cause.UNKNOWN, Layer.LOADER, INFO, role=Role.CONTEXT),
    FindingSpec("inference.gpu_memory_others", Cause.UNKNOWN, Layer.RESOURCES, INFO, role=Role.CAUSE),
    FindingSpec("inference.gpu_busy_before", Cause.UNKNOWN, Layer.RESOURCES, INFO, role=Role.CONTEXT),
    FindingSpec("inference.auto_select_silent", Cause.UNKNOWN, Layer.PROBE, WARNING, role=Role.CAUSE),
    FindingSpec(
        "inference.auto_select_needs_registration", Cause.UNKNOWN, Layer.PROBE, INFO, role=Role.CAUSE
    ),
    FindingSpec("inference.get_device_misleading", Cause.UNKNOWN, Layer.PACKAGE, INFO, role=Role.CONTEXT),
    FindingSpec("inference.plugin_ep_failed", Cause.UNKNOWN, Layer.PACKAGE, WARNING, role=Role.CAUSE),
)
