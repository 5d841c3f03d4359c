"""The declared finding ids of every producer, and the check that a finding is one of them.

Each module that makes findings declares them at its top (``FINDINGS``, beside the code that writes
the ids out); this registry lists those modules, so it sits in judgement, the lowest row that may
import them all (core/readers/ makes the test inference's findings and an interrupted probe's).
The judge (core/judgement/judge.py ``settle_findings``), the one place every finding passes before
a document, refuses a finding that is not declared or that differs from its declaration.
"""

from __future__ import annotations

from functools import cache

import fallback_doctor.core.judgement.checks
import fallback_doctor.core.judgement.checks.collection
import fallback_doctor.core.judgement.checks.config
import fallback_doctor.core.judgement.checks.cuda
import fallback_doctor.core.judgement.checks.cudnn
import fallback_doctor.core.judgement.checks.device
import fallback_doctor.core.judgement.checks.driver
import fallback_doctor.core.judgement.checks.driver_missing
import fallback_doctor.core.judgement.checks.log
import fallback_doctor.core.judgement.checks.package
import fallback_doctor.core.judgement.checks.package_binaries
import fallback_doctor.core.judgement.checks.process
import fallback_doctor.core.judgement.checks.process_request
import fallback_doctor.core.judgement.checks.tensorrt
import fallback_doctor.core.judgement.checks.torch
import fallback_doctor.core.readers.inference.findings
import fallback_doctor.core.readers.inference.findings_now
import fallback_doctor.core.readers.probes.outside
from fallback_doctor.core.model.finding_spec import FindingSpec
from fallback_doctor.core.model.result import Layer, Severity

# One module per producer; a new producer adds its module here.
DECLARATIONS = (
    fallback_doctor.core.judgement.checks,
    fallback_doctor.core.judgement.checks.collection,
    fallback_doctor.core.judgement.checks.config,
    fallback_doctor.core.judgement.checks.cuda,
    fallback_doctor.core.judgement.checks.cudnn,
    fallback_doctor.core.judgement.checks.device,
    fallback_doctor.core.judgement.checks.driver,
    fallback_doctor.core.judgement.checks.driver_missing,
    fallback_doctor.core.judgement.checks.log,
    fallback_doctor.core.judgement.checks.package,
    fallback_doctor.core.judgement.checks.package_binaries,
    fallback_doctor.core.judgement.checks.process,
    fallback_doctor.core.judgement.checks.process_request,
    fallback_doctor.core.judgement.checks.tensorrt,
    fallback_doctor.core.judgement.checks.torch,
    fallback_doctor.core.readers.inference.findings,
    fallback_doctor.core.readers.inference.findings_now,
    fallback_doctor.core.readers.probes.outside,
)


class UndeclaredFindingError(ValueError):
    """A finding was made with an id that no module declares (``FINDINGS``), or differently."""


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


def check_declared(finding_id: str, cause: str, layer: Layer, severity: Severity | None) -> FindingSpec:
    """The declaration of ``finding_id``; raises when there is none or the finding differs from it.

    ``severity`` None: any declared severity (a finding the judge lowered to information)."""
    spec = declared().get(finding_id)
    if spec is None:
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is not declared: add a FindingSpec to FINDINGS at the top of "
            "the module that makes it (see core/judgement/checks/__init__.py)"
        )
    if spec.cause is not None and (cause != spec.cause or layer != spec.layer):
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is declared as {spec.cause}/{spec.layer}, made as {cause}/{layer}"
        )
    if severity is not None and severity not in spec.severities:
        raise UndeclaredFindingError(
            f"finding {finding_id!r} is declared {'/'.join(spec.severities)}, made as {severity}"
        )
    return spec
