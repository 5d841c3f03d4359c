"""The findings of core/checks/config.py: the configuration file and its libPath.

The configuration issues' severity comes from the issue (core/targets reads the file)."""

from __future__ import annotations

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.findings.spec import FindingSpec
from fallback_doctor.core.model import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
ISSUE = (ERROR, WARNING, INFO)
"""A configuration issue's finding takes the issue's own severity."""

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("config.malformed", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.malformed.backslash", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.not_utf8", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.bom", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.not_object", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.wrong_type.string", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.wrong_type.integer", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.wrong_type.bool", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.wrong_type.object", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.wrong_type.provider", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.bad_value.range", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.bad_value.minimum", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.bad_value.empty", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.bad_value.workspace", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.provider_unknown", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec(
        "config.provider_unknown.suggest", Cause.CONFIG_INVALID, Layer.CONFIG, (ERROR, WARNING, INFO)
    ),
    FindingSpec("config.provider_case", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.provider_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.provider_not_set", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.path_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.path_missing.libPath", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec(
        "config.path_missing.licenseFile", Cause.CONFIG_INVALID, Layer.CONFIG, (ERROR, WARNING, INFO)
    ),
    FindingSpec("config.path_missing.modelPath", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.not_a_directory", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.not_a_file", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.undefined_variable", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.duplicate_key", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.config_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.unreadable", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE),
    FindingSpec("config.cpu_by_configuration", Cause.CPU_BY_CONFIGURATION, Layer.CONFIG, INFO),
    FindingSpec("target.libpath_cpu_only", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR),
    FindingSpec("target.libpath_no_ort", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, ERROR),
)
