"""Checks turn facts into findings; one module per layer, registered in an explicit list.

A check is a plain function ``(snapshot) -> Iterable[Finding]``. It reads facts only:
no I/O, no loading, so it is fast and cannot hang. Register it in ``CHECK_MODULES``'s
module by listing it in that module's ``CHECKS`` tuple.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from fallback_doctor.core.model.result import Finding
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

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
