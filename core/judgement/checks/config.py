"""Findings about the target's configuration and its own ONNX Runtime folder (Bareun's libPath).

Step 1 of the FAQ: is the GPU even asked for, and does libPath hold a GPU build? A configuration
that asks for the CPU is the first finding (verdict cpu_by_configuration); what cannot be read in
it is reported with the file, line and column.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.remedy import release_archive_steps, restart_step
from fallback_doctor.core.language.evidence_text import named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.target import ConfigIssue, ProviderSetting, TargetFacts
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import ConfigStep, Evidence, Finding, Layer, Severity, Step
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.targets.registry import remedy_terms

ISSUE = (Severity.ERROR, Severity.WARNING, Severity.INFO)
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
        (Severity.ERROR, Severity.WARNING, Severity.INFO),
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
        (Severity.ERROR, Severity.WARNING, Severity.INFO),
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
        "config.cpu_by_configuration",
        Cause.CPU_BY_CONFIGURATION,
        Layer.CONFIG,
        Severity.INFO,
        role=Role.DECIDES,
    ),
    FindingSpec(
        "target.libpath_cpu_only", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, Severity.ERROR, role=Role.DECIDES
    ),
    FindingSpec(
        "target.libpath_no_ort", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, Severity.ERROR, role=Role.DECIDES
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


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
needs its line here (and a FindingSpec in FINDINGS above)."""


def config_issue_finding(code: str) -> str | None:
    """The finding of a configuration issue's code: its own, else that of the code before its first
    dot ("path_missing.certFile" -> "config.path_missing"); None when neither is declared."""
    return ISSUE_FINDINGS.get(code) or ISSUE_FINDINGS.get(code.split(".", 1)[0])


_VERSION_FROM = {
    "": "evidence.lib_version",
    "C API": "evidence.lib_version_c_api",
    "file name": "evidence.lib_version_file_name",
    "ELF version definition": "evidence.lib_version_elf",
}
"""How the library's version was read (core/readers/targets/libpath.py), and the words that say it."""

_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}


def issue_evidence(target: TargetFacts, issue: ConfigIssue) -> tuple[Evidence, ...]:
    """The quoted line of the file, with the column in the value: what a person opens to fix it."""
    value_at = issue.value_column is not None and issue.value_column != issue.column
    quoted = issue.line_text.strip()
    where = "evidence.line_column" + ("_value" if value_at else "") + ("_text" if quoted else "")
    evidence = [
        said(
            "evidence.name" if issue.key else "evidence.configuration",
            where,
            source=target.config_path,
            line=issue.line,
            name=issue.key or "",
            at_line=issue.line,
            column=issue.column,
            value_column=issue.value_column or 0,
            text=quoted,
        )
    ]
    path = issue.params.get("path")
    if issue.code.startswith("path_missing") and issue.key and path:  # the reader's sentence, by id
        evidence.append(
            said("evidence.problem", "evidence.config.names_missing", key=issue.key, path=str(path))
        )
    # Any other issue: the reader's own sentence (issue.message, English) is not repeated; the
    # finding's text, chosen in the reader's language from the issue's code and parameters, says it.
    if issue.params.get("path"):
        evidence.append(said("evidence.expanded_path", value=issue.params["path"]))
    return tuple(evidence)


def _config_file(target: TargetFacts) -> str:
    """The configuration file the "verify" texts name (resources/texts/config.json)."""
    return target.config_path or "bareun.json"


def config_invalid(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """What is wrong in the configuration file: malformed JSON, wrong types, unknown providers, paths.

    Each finding quotes the line and names its column. By hand:
    ``python3 -m json.tool $BAREUN_ROOT/config/bareun.json`` and ``ls -ld`` on each path.
    """
    target = snapshot.target
    if target is None:
        return
    for issue in target.config_issues:
        finding_id = config_issue_finding(issue.code)
        if finding_id is None:
            continue
        params: dict[str, object] = {"file": target.config_path or "?", **issue.params}
        params.setdefault("value", issue.value or "")
        params.setdefault("key", issue.key or "")
        params.setdefault("config_file", _config_file(target))
        yield make_finding(
            finding_id,
            Cause.CONFIG_INVALID,
            Layer.CONFIG,
            _SEVERITY.get(issue.severity, Severity.WARNING),
            params=params,
            evidence=issue_evidence(target, issue),
        )


def cpu_by_configuration(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The configuration asks for the CPU: the CPU is what was asked for, not a failure.

    By hand: ``grep -n -A2 executionProvider $BAREUN_ROOT/config/bareun.json``.
    """
    target = snapshot.target
    if target is None or not target.wants_cpu:
        return
    setting = target.provider_setting
    line = setting.line if setting and setting.line else 1
    evidence = [
        said(
            "evidence.name",
            "evidence.line_column_text" if setting and setting.column else None,
            value="cpu",
            source=target.config_path,
            line=line,
            name="executionProvider",
            at_line=line,
            column=setting.column if setting else 0,
            text=setting.line_text.strip() if setting else "",
        )
    ]
    if setting is not None and setting.form == "object" and setting.raw:
        evidence.append(said("evidence.provider_as_written", value=setting.raw))
    yield make_finding(
        "config.cpu_by_configuration",
        Cause.CPU_BY_CONFIGURATION,
        Layer.CONFIG,
        Severity.INFO,
        params={
            "file": target.config_path or "?",
            "line": line,
            "value": (setting.raw if setting else None) or '"cpu"',
            "config_file": _config_file(target),
        },
        evidence=tuple(evidence),
        steps=_gpu_setting_steps(snapshot, target.config_path, setting),
    )


def _gpu_setting_steps(
    snapshot: EnvironmentSnapshot, config_path: str | None, setting: ProviderSetting | None
) -> tuple[Step, ...]:
    """For a technician who wants the GPU: the value that asks for it, in the form the file uses
    ({"provider": "cuda"} in the object form, "gpu" in the string form), then the restart."""
    if not config_path or setting is None:
        return ()
    if setting.form == "object":
        change = ConfigStep(config_path, "/executionProvider/provider", "cuda")
    else:
        change = ConfigStep(config_path, "/executionProvider", "gpu")
    return (change, restart_step(snapshot))


def _lib_path_evidence(target: TargetFacts, directory: str) -> Evidence:
    """libPath as the configuration file says it, with its line there (the page marks that line)."""
    line = target.config_key_lines.get("libPath")
    return named("libPath", directory, source=target.config_path, line=line)


def lib_path_cpu_only(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """libPath holds a CPU-only ONNX Runtime (no GPU provider library), or no ONNX Runtime at all.

    A CPU-only package in libPath can never use the GPU, whatever the configuration says.
    By hand: ``ls -l $BAREUN_ROOT/lib | grep onnxruntime`` (a GPU build has
    ``libonnxruntime_providers_cuda.so`` and ``libonnxruntime_providers_shared.so``).
    """
    target = snapshot.target
    if target is None or target.lib_ort is None or remedy_terms(target) == "application":
        return  # an application's own folder: checks/package.py native_library, in its own terms
    lib = target.lib_ort
    if lib.core_library is None:
        yield make_finding(
            "target.libpath_no_ort",
            Cause.ORT_NOT_INSTALLED,
            Layer.PACKAGE,
            Severity.ERROR,
            params={"lib_path": lib.directory, "file": target.config_path or "?"},
            evidence=(_lib_path_evidence(target, lib.directory),),
        )
        return
    gpu = [name for name in lib.gpu_providers if name not in ("AzureExecutionProvider",)]
    if gpu:
        return
    version = lib.version or "?"
    evidence = [
        _lib_path_evidence(target, lib.directory),
        said(
            "evidence.ort_library",
            _VERSION_FROM.get(lib.version_source or "", "evidence.lib_version_from"),
            source=lib.core_library,
            lib=os.path.basename(lib.core_library),
            version=version,
            where=lib.version_source or "",
        ),
        said(
            "evidence.provider_libraries_in_libpath",
            value=", ".join(os.path.basename(path) for path in lib.provider_libraries),
            otherwise="evidence.none",
        ),
    ]
    if lib.load_error:
        evidence.append(said("evidence.library_not_loaded_here", value=lib.load_error))
    evidence.extend(log_confirmation(snapshot, Cause.EP_NOT_IN_BUILD))
    yield make_finding(
        "target.libpath_cpu_only",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        Severity.ERROR,
        params={
            "lib_path": lib.directory,
            "library": os.path.basename(lib.core_library),
            "version": version,
        },
        evidence=tuple(evidence),
        steps=tuple(
            release_archive_steps(
                lib.directory, lib.version, lib.core_library.lower().endswith(".dll"), snapshot
            )
        ),
    )


def log_confirmation(snapshot: EnvironmentSnapshot, cause: str) -> list[Evidence]:
    """The log's lines behind a candidate of this cause (whatever its rank), quoted with file and line."""
    log = snapshot.log
    if log is None:
        return []
    from fallback_doctor.core.judgement.checks.log import quote_evidence

    quoted: list[Evidence] = []
    for candidate in log.causes:
        if candidate.cause == cause:
            quoted.extend(quote_evidence(quote, "confirms") for quote in candidate.evidence)
    return quoted


CHECKS = (cpu_by_configuration, config_invalid, lib_path_cpu_only)
