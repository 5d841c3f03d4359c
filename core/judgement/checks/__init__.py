"""Checks turn facts into findings; one module per layer, registered in an explicit list.

A check is a plain function ``(snapshot) -> Iterable[Finding]``. It reads facts only:
no I/O, no loading, so it is fast and cannot hang. Register it in ``CHECK_MODULES``'s
module by listing it in that module's ``CHECKS`` tuple.

Each module that makes findings declares them at its top, beside the code that makes them:
``FINDINGS: tuple[FindingSpec, ...]`` (id, cause, layer, severity, role), as pylint and ruff declare
their messages. A new finding of an existing check is its declaration and its code in that module,
and its texts (resources/texts/<lang>/findings/<layer>.json); a new module that declares is listed in
core/judgement/registry.py. tests/test_finding_ids.py holds every id to that: declared in the very
module that writes it out, made with its declared cause, layer and severity, with its texts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("check.crashed", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


Check = Callable[[EnvironmentSnapshot], Iterable[Finding]]

CHECK_MODULES: tuple[str, ...] = (
    "fallback_doctor.core.judgement.checks.config",
    "fallback_doctor.core.judgement.checks.driver",
    "fallback_doctor.core.judgement.checks.device",
    "fallback_doctor.core.judgement.checks.cuda",
    "fallback_doctor.core.judgement.checks.cudnn",
    "fallback_doctor.core.judgement.checks.tensorrt",
    "fallback_doctor.core.judgement.checks.package",
    "fallback_doctor.core.judgement.checks.torch",
    "fallback_doctor.core.judgement.checks.collection",
    "fallback_doctor.core.judgement.checks.process",
    "fallback_doctor.core.judgement.checks.process_request",
    "fallback_doctor.core.judgement.checks.log",
    "fallback_doctor.core.judgement.checks.inference",
)


def load_checks() -> tuple[Check, ...]:
    """Every registered check, in module order."""
    found: list[Check] = []
    for module_name in CHECK_MODULES:
        module = importlib.import_module(module_name)
        found.extend(module.CHECKS)
    return tuple(found)


def crashed_finding(check: Check, error: Exception) -> Finding:
    """The finding of a check that raised: which check, and what it raised (the diagnosis goes on
    with the other checks, core/flow/diagnosis.py ``run_checks``)."""
    name = f"{check.__module__.rsplit('.', 1)[-1]}.{check.__name__}"
    return make_finding(
        "check.crashed",
        Cause.COLLECTION_FAILED,
        Layer.PROBE,
        Severity.WARNING,
        params={"check": name, "error": f"{type(error).__name__}: {error}"},
        evidence=(said("evidence.check", value=name),),
    )
