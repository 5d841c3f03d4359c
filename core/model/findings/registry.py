"""The declared finding ids of every producer, and the check that a finding is one of them."""

from __future__ import annotations

from functools import cache

from fallback_doctor.core.model.findings import (
    collection,
    config,
    cuda,
    cudnn,
    device,
    diagnosis,
    driver,
    inference,
    log,
    package,
    process,
    tensorrt,
    torch,
)
from fallback_doctor.core.model.findings.spec import FindingSpec
from fallback_doctor.core.model.result import Layer, Severity

# One module per producer; a new producer adds its module here.
DECLARATIONS = (
    collection,
    config,
    driver,
    device,
    cuda,
    cudnn,
    tensorrt,
    package,
    torch,
    process,
    log,
    inference,
    diagnosis,
)


class UndeclaredFindingError(ValueError):
    """A finding was made with an id that no module of core/findings declares, or differently."""


@cache
def declared() -> dict[str, FindingSpec]:
    """Every declared finding id -> its declaration (an id declared twice is an error)."""
    found: dict[str, FindingSpec] = {}
    for module in DECLARATIONS:
        for spec in module.FINDINGS:
            if spec.id in found:
                raise UndeclaredFindingError(f"finding {spec.id!r} is declared twice ({module.__name__})")
            found[spec.id] = spec
    return found


def check_declared(finding_id: str, cause: str, layer: Layer, severity: Severity) -> FindingSpec:
    """The declaration of ``finding_id``; raises when there is none or the finding differs from it."""
    spec = declared().get(finding_id)
    if spec is None:
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is not declared: add a FindingSpec to its producer's module "
            "in core/model/findings/ (see core/model/findings/__init__.py)"
        )
    if spec.cause is not None and (cause != spec.cause or layer != spec.layer):
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is declared as {spec.cause}/{spec.layer}, made as {cause}/{layer}"
        )
    if severity not in spec.severities:
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is declared {'/'.join(spec.severities)}, made as {severity}"
        )
    return spec
