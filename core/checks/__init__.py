"""Checks turn facts into findings; one module per layer, registered in an explicit list.

A check is a plain function ``(snapshot) -> Iterable[Finding]``. It reads facts only:
no I/O, no loading, so it is fast and cannot hang. Register it in ``CHECK_MODULES``'s
module by listing it in that module's ``CHECKS`` tuple.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from fallback_doctor.core.model import Finding
from fallback_doctor.core.snapshot import EnvironmentSnapshot

Check = Callable[[EnvironmentSnapshot], Iterable[Finding]]

CHECK_MODULES: tuple[str, ...] = (
    "fallback_doctor.core.checks.config",
    "fallback_doctor.core.checks.driver",
    "fallback_doctor.core.checks.device",
    "fallback_doctor.core.checks.cuda",
    "fallback_doctor.core.checks.cudnn",
    "fallback_doctor.core.checks.tensorrt",
    "fallback_doctor.core.checks.package",
    "fallback_doctor.core.checks.torch",
    "fallback_doctor.core.checks.collection",
    "fallback_doctor.core.checks.process",
    "fallback_doctor.core.checks.process_request",
    "fallback_doctor.core.checks.log",
    "fallback_doctor.core.checks.inference",
)


def load_checks() -> tuple[Check, ...]:
    """Every registered check, in module order."""
    found: list[Check] = []
    for module_name in CHECK_MODULES:
        module = importlib.import_module(module_name)
        found.extend(module.CHECKS)
    return tuple(found)
