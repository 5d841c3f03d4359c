"""The findings of core/judgement/checks/config.py: the configuration file and its libPath.

The configuration issues' severity comes from the issue (core/targets reads the file)."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
ISSUE = (ERROR, WARNING, INFO)
"""A configuration issue's finding takes the issue's own severity."""

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("config.malformed", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.malformed.backslash", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.not_utf8", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.bom", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.not_object", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.wrong_type.string", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.wrong_type.integer", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.wrong_type.bool", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.wrong_type.object", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.wrong_type.provider", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.bad_value.range", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.bad_value.minimum", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.bad_value.empty", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.bad_value.workspace", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.provider_unknown", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec(
        "config.provider_unknown.suggest",
        Cause.CONFIG_INVALID,
        Layer.CONFIG,
        (ERROR, WARNING, INFO),
        role=Role.DECIDES,
    ),
    FindingSpec("config.provider_case", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.provider_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.provider_not_set", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.path_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.path_missing.libPath", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec(
        "config.path_missing.licenseFile",
        Cause.CONFIG_INVALID,
        Layer.CONFIG,
        (ERROR, WARNING, INFO),
        role=Role.CONTEXT,
    ),
    FindingSpec(
        "config.path_missing.modelPath", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT
    ),
    FindingSpec("config.not_a_directory", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.not_a_file", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CONTEXT),
    FindingSpec("config.undefined_variable", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.duplicate_key", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.CAUSE),
    FindingSpec("config.config_missing", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec("config.unreadable", Cause.CONFIG_INVALID, Layer.CONFIG, ISSUE, role=Role.DECIDES),
    FindingSpec(
        "config.cpu_by_configuration", Cause.CPU_BY_CONFIGURATION, Layer.CONFIG, INFO, role=Role.DECIDES
    ),
    FindingSpec("target.libpath_cpu_only", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR, role=Role.DECIDES),
    FindingSpec("target.libpath_no_ort", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, ERROR, role=Role.DECIDES),
)

ISSUE_FINDINGS: dict[str, str] = {
    "malformed": "config.malformed",
    "malformed.backslash": "config.malformed.backslash",
    "not_utf8": "config.not_utf8",
    "bom": "config.bom",
    "not_object": "config.not_object",
    "wrong_type.string": "config.wrong_type.string",
    "wrong_type.integer": "config.wrong_type.integer",
    "wrong_type.bool": "config.wrong_type.bool",
    "wrong_type.object": "config.wrong_type.object",
    "wrong_type.provider": "config.wrong_type.provider",
    "bad_value.range": "config.bad_value.range",
    "bad_value.minimum": "config.bad_value.minimum",
    "bad_value.empty": "config.bad_value.empty",
    "bad_value.workspace": "config.bad_value.workspace",
    "provider_unknown": "config.provider_unknown",
    "provider_unknown.suggest": "config.provider_unknown.suggest",
    "provider_case": "config.provider_case",
    "provider_missing": "config.provider_missing",
    "provider_not_set": "config.provider_not_set",
    "path_missing": "config.path_missing",
    "path_missing.libPath": "config.path_missing.libPath",
    "path_missing.licenseFile": "config.path_missing.licenseFile",
    "path_missing.modelPath": "config.path_missing.modelPath",
    "not_a_directory": "config.not_a_directory",
    "not_a_file": "config.not_a_file",
    "undefined_variable": "config.undefined_variable",
    "duplicate_key": "config.duplicate_key",
    "config_missing": "config.config_missing",
    "unreadable": "config.unreadable",
}
"""A configuration issue's code (core/targets) -> its finding. A new issue code with its own texts
needs its line here (and a FindingSpec above)."""


def config_issue_finding(code: str) -> str | None:
    """The finding of a configuration issue's code: its own, else that of the code before its first
    dot ("path_missing.certFile" -> "config.path_missing"); None when neither is declared."""
    return ISSUE_FINDINGS.get(code) or ISSUE_FINDINGS.get(code.split(".", 1)[0])
