"""The one door from the command line (cli/) into core, as core/facade.py is the wizard's.

The CLI imports this module only (an import-linter contract in pyproject.toml says so). Each name
is imported from its module when a command first asks for it, so ``fallback-doctor check`` loads
only what the check needs; mypy reads the real imports below. A name a command newly needs is one
line in ``_WHERE`` and one under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fallback_doctor.core.bundle.export import extras_from_document, prepare_bundle
    from fallback_doctor.core.bundle.members import bundle_members
    from fallback_doctor.core.bundle.preview import BundleOptions, ExtraMember
    from fallback_doctor.core.bundle.preview_text import render_preview
    from fallback_doctor.core.bundle.protected import OutputIsTargetFileError
    from fallback_doctor.core.bundle.safe_open import BundleRefusedError, open_bundle, verify_bundle
    from fallback_doctor.core.bundle.write import BundleExistsError, write_bundle
    from fallback_doctor.core.document.basics import to_jsonable
    from fallback_doctor.core.document.remedy import remedy_terminal
    from fallback_doctor.core.fleet.hosts import read_fleet
    from fallback_doctor.core.fleet.render import render_html
    from fallback_doctor.core.fleet.render import render_text as render_fleet_text
    from fallback_doctor.core.fleet.summary import exit_code, summary_document
    from fallback_doctor.core.flow.diagnosis import (
        EXIT_USAGE,
        DiagnoseRequest,
        diagnose,
        diagnosis_document,
        exit_code_for,
    )
    from fallback_doctor.core.flow.step_child import start_environment
    from fallback_doctor.core.language.evidence_text import record_words, said_text
    from fallback_doctor.core.language.texts import LANGUAGES, has_label, label, system_language, words_of
    from fallback_doctor.core.model.result import Finding
    from fallback_doctor.core.platform.files import read_regular_text
    from fallback_doctor.core.platform.frozen import default_python
    from fallback_doctor.core.readers.collect.run import CollectRequest
    from fallback_doctor.core.readers.inference.findings import gpu_verified, inference_findings, stage_words
    from fallback_doctor.core.readers.inference.model_info import ModelInfo
    from fallback_doctor.core.readers.inference.model_inputs import dim_names, unknown_dim_names
    from fallback_doctor.core.readers.inference.model_words import dims_words, placement_words
    from fallback_doctor.core.readers.inference.result import ProbeResult, SessionRun
    from fallback_doctor.core.readers.inference.run import (
        PROVIDERS,
        InferencePlan,
        InferenceSetupError,
        plan_inference,
        provider_key,
    )
    from fallback_doctor.core.readers.inference.sampled import run_sampled_inference
    from fallback_doctor.core.readers.logs.diagnose_log import LogDiagnosis, explain_texts
    from fallback_doctor.core.readers.logs.excerpt import has_startup
    from fallback_doctor.core.readers.logs.reader import DEFAULT_BUDGET, LogReadError, LogText
    from fallback_doctor.core.readers.logs.results import NAMED, NO_FAILURE, NOT_SAID, SEVERAL_OPEN
    from fallback_doctor.core.readers.logs.rotation import read_log
    from fallback_doctor.core.readers.logs.separators import cause_words, separator
    from fallback_doctor.core.readers.targets.interpreter import NotAnInterpreterError, interpreter_of
    from fallback_doctor.core.readers.targets.profile import TargetNotFound
    from fallback_doctor.core.readers.targets.registry import AUTO, kinds_help, target_kinds
    from fallback_doctor.core.readers.targets.resolve import resolve_target
    from fallback_doctor.core.readers.targets.spec import TargetSpec
    from fallback_doctor.core.views.escape import visible, visible_line
    from fallback_doctor.core.views.text_report import render_text
    from fallback_doctor.core.watch.check import State, WatchResult, run_check, status_line
    from fallback_doctor.core.watch.textfile import render_textfile, write_textfile

_WHERE: dict[str, str] = {
    "AUTO": "fallback_doctor.core.readers.targets.registry",
    "BundleExistsError": "fallback_doctor.core.bundle.write",
    "BundleOptions": "fallback_doctor.core.bundle.preview",
    "BundleRefusedError": "fallback_doctor.core.bundle.safe_open",
    "CollectRequest": "fallback_doctor.core.readers.collect.run",
    "DEFAULT_BUDGET": "fallback_doctor.core.readers.logs.reader",
    "DiagnoseRequest": "fallback_doctor.core.flow.diagnosis",
    "EXIT_USAGE": "fallback_doctor.core.flow.diagnosis",
    "ExtraMember": "fallback_doctor.core.bundle.preview",
    "Finding": "fallback_doctor.core.model.result",
    "InferencePlan": "fallback_doctor.core.readers.inference.run",
    "InferenceSetupError": "fallback_doctor.core.readers.inference.run",
    "LANGUAGES": "fallback_doctor.core.language.texts",
    "LogDiagnosis": "fallback_doctor.core.readers.logs.diagnose_log",
    "LogReadError": "fallback_doctor.core.readers.logs.reader",
    "LogText": "fallback_doctor.core.readers.logs.reader",
    "ModelInfo": "fallback_doctor.core.readers.inference.model_info",
    "NAMED": "fallback_doctor.core.readers.logs.results",
    "NOT_SAID": "fallback_doctor.core.readers.logs.results",
    "NO_FAILURE": "fallback_doctor.core.readers.logs.results",
    "NotAnInterpreterError": "fallback_doctor.core.readers.targets.interpreter",
    "OutputIsTargetFileError": "fallback_doctor.core.bundle.protected",
    "PROVIDERS": "fallback_doctor.core.readers.inference.run",
    "ProbeResult": "fallback_doctor.core.readers.inference.result",
    "SEVERAL_OPEN": "fallback_doctor.core.readers.logs.results",
    "SessionRun": "fallback_doctor.core.readers.inference.result",
    "State": "fallback_doctor.core.watch.check",
    "TargetNotFound": "fallback_doctor.core.readers.targets.profile",
    "TargetSpec": "fallback_doctor.core.readers.targets.spec",
    "WatchResult": "fallback_doctor.core.watch.check",
    "bundle_members": "fallback_doctor.core.bundle.members",
    "cause_words": "fallback_doctor.core.readers.logs.separators",
    "default_python": "fallback_doctor.core.platform.frozen",
    "diagnose": "fallback_doctor.core.flow.diagnosis",
    "diagnosis_document": "fallback_doctor.core.flow.diagnosis",
    "dim_names": "fallback_doctor.core.readers.inference.model_inputs",
    "dims_words": "fallback_doctor.core.readers.inference.model_words",
    "exit_code": "fallback_doctor.core.fleet.summary",
    "exit_code_for": "fallback_doctor.core.flow.diagnosis",
    "explain_texts": "fallback_doctor.core.readers.logs.diagnose_log",
    "extras_from_document": "fallback_doctor.core.bundle.export",
    "gpu_verified": "fallback_doctor.core.readers.inference.findings",
    "has_label": "fallback_doctor.core.language.texts",
    "has_startup": "fallback_doctor.core.readers.logs.excerpt",
    "inference_findings": "fallback_doctor.core.readers.inference.findings",
    "interpreter_of": "fallback_doctor.core.readers.targets.interpreter",
    "kinds_help": "fallback_doctor.core.readers.targets.registry",
    "label": "fallback_doctor.core.language.texts",
    "open_bundle": "fallback_doctor.core.bundle.safe_open",
    "placement_words": "fallback_doctor.core.readers.inference.model_words",
    "plan_inference": "fallback_doctor.core.readers.inference.run",
    "prepare_bundle": "fallback_doctor.core.bundle.export",
    "provider_key": "fallback_doctor.core.readers.inference.run",
    "read_fleet": "fallback_doctor.core.fleet.hosts",
    "read_log": "fallback_doctor.core.readers.logs.rotation",
    "read_regular_text": "fallback_doctor.core.platform.files",
    "record_words": "fallback_doctor.core.language.evidence_text",
    "remedy_terminal": "fallback_doctor.core.document.remedy",
    "render_fleet_text": "fallback_doctor.core.fleet.render",
    "render_html": "fallback_doctor.core.fleet.render",
    "render_preview": "fallback_doctor.core.bundle.preview_text",
    "render_text": "fallback_doctor.core.views.text_report",
    "render_textfile": "fallback_doctor.core.watch.textfile",
    "resolve_target": "fallback_doctor.core.readers.targets.resolve",
    "run_check": "fallback_doctor.core.watch.check",
    "run_sampled_inference": "fallback_doctor.core.readers.inference.sampled",
    "said_text": "fallback_doctor.core.language.evidence_text",
    "separator": "fallback_doctor.core.readers.logs.separators",
    "stage_words": "fallback_doctor.core.readers.inference.findings",
    "start_environment": "fallback_doctor.core.flow.step_child",
    "status_line": "fallback_doctor.core.watch.check",
    "summary_document": "fallback_doctor.core.fleet.summary",
    "system_language": "fallback_doctor.core.language.texts",
    "target_kinds": "fallback_doctor.core.readers.targets.registry",
    "to_jsonable": "fallback_doctor.core.document.basics",
    "unknown_dim_names": "fallback_doctor.core.readers.inference.model_inputs",
    "verify_bundle": "fallback_doctor.core.bundle.safe_open",
    "visible": "fallback_doctor.core.views.escape",
    "visible_line": "fallback_doctor.core.views.escape",
    "words_of": "fallback_doctor.core.language.texts",
    "write_bundle": "fallback_doctor.core.bundle.write",
    "write_textfile": "fallback_doctor.core.watch.textfile",
}
"""Each name the CLI uses and the module of core that defines it."""

_REAL: dict[str, str] = {"render_fleet_text": "render_text"}
"""A door name that is not the name in its module (two modules define that name)."""


def __getattr__(name: str) -> object:
    """``name`` from its module, imported on first use and kept."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    owner = importlib.import_module(module)
    real = _REAL.get(name, name)
    value = getattr(owner, real) if hasattr(owner, real) else importlib.import_module(f"{module}.{real}")
    globals()[name] = value
    return value


__all__ = [
    "AUTO",
    "DEFAULT_BUDGET",
    "EXIT_USAGE",
    "LANGUAGES",
    "NAMED",
    "NOT_SAID",
    "NO_FAILURE",
    "PROVIDERS",
    "SEVERAL_OPEN",
    "BundleExistsError",
    "BundleOptions",
    "BundleRefusedError",
    "CollectRequest",
    "DiagnoseRequest",
    "ExtraMember",
    "Finding",
    "InferencePlan",
    "InferenceSetupError",
    "LogDiagnosis",
    "LogReadError",
    "LogText",
    "ModelInfo",
    "NotAnInterpreterError",
    "OutputIsTargetFileError",
    "ProbeResult",
    "SessionRun",
    "State",
    "TargetNotFound",
    "TargetSpec",
    "WatchResult",
    "bundle_members",
    "cause_words",
    "default_python",
    "diagnose",
    "diagnosis_document",
    "dim_names",
    "dims_words",
    "exit_code",
    "exit_code_for",
    "explain_texts",
    "extras_from_document",
    "gpu_verified",
    "has_label",
    "has_startup",
    "inference_findings",
    "interpreter_of",
    "kinds_help",
    "label",
    "open_bundle",
    "placement_words",
    "plan_inference",
    "prepare_bundle",
    "provider_key",
    "read_fleet",
    "read_log",
    "read_regular_text",
    "record_words",
    "remedy_terminal",
    "render_fleet_text",
    "render_html",
    "render_preview",
    "render_text",
    "render_textfile",
    "resolve_target",
    "run_check",
    "run_sampled_inference",
    "said_text",
    "separator",
    "stage_words",
    "start_environment",
    "status_line",
    "summary_document",
    "system_language",
    "target_kinds",
    "to_jsonable",
    "unknown_dim_names",
    "verify_bundle",
    "visible",
    "visible_line",
    "words_of",
    "write_bundle",
    "write_textfile",
]
