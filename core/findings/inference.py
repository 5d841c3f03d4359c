"""The findings of the test inference (core/inference/findings.py; declared here).

inference.fell_back and inference.failed carry the cause the probe found, at run time."""

from __future__ import annotations

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.findings.spec import FindingSpec
from fallback_doctor.core.model import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("inference.fell_back", None, None, ERROR),
    FindingSpec("inference.fell_back_native", None, None, ERROR),
    FindingSpec("inference.failed", None, None, ERROR),
    FindingSpec("inference.gpu_verified", Cause.UNKNOWN, Layer.PROBE, INFO),
    FindingSpec("inference.partial_placement", Cause.UNKNOWN, Layer.PROBE, WARNING),
    FindingSpec("inference.outputs_differ", Cause.UNKNOWN, Layer.PROBE, WARNING),
    FindingSpec("inference.probe_failed", Cause.PROBE_FAILED, Layer.PROBE, ERROR),
    FindingSpec("inference.unusable_model", Cause.CONFIG_INVALID, Layer.PROBE, WARNING),
    FindingSpec("inference.strategy_further", Cause.UNKNOWN, Layer.LOADER, INFO),
    FindingSpec("inference.gpu_memory_others", Cause.UNKNOWN, Layer.RESOURCES, INFO),
    FindingSpec("inference.gpu_busy_before", Cause.UNKNOWN, Layer.RESOURCES, INFO),
    FindingSpec("inference.auto_select_silent", Cause.UNKNOWN, Layer.PROBE, WARNING),
    FindingSpec("inference.auto_select_needs_registration", Cause.UNKNOWN, Layer.PROBE, INFO),
    FindingSpec("inference.get_device_misleading", Cause.UNKNOWN, Layer.PACKAGE, INFO),
    FindingSpec("inference.plugin_ep_failed", Cause.UNKNOWN, Layer.PACKAGE, WARNING),
)
