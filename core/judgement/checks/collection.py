"""Findings about the inspection itself: a layer whose facts could not be collected."""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.language.evidence_text import named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.probes.outside import interrupted_finding

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("collect.failed", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT),
    FindingSpec(
        "collect.python.failed", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT
    ),
    FindingSpec("probe.native_failed", Cause.PROBE_FAILED, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_COLLECTOR_FAILED = {"python": "collect.python.failed"}
"""Collectors whose failure has its own words; every other one reads "collect.failed"."""


def collectors_failed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """One finding per collector that could not collect its facts, with the reason.

    The rest of the diagnosis still stands, but that layer is unknown. By hand:
    `fallback-doctor diagnose --json` and read `environment.collectors`.
    """
    for outcome in snapshot.collectors:
        if outcome.ok:
            continue
        reason = outcome.error or "unknown reason"
        if outcome.outside is not None:
            yield interrupted_finding(reason, "")
            continue
        yield make_finding(
            _COLLECTOR_FAILED.get(outcome.name, "collect.failed"),
            Cause.COLLECTION_FAILED,
            Layer.PROBE,
            Severity.WARNING,
            params={"collector": outcome.name, "reason": outcome.error or Words("evidence.unknown_reason")},
            evidence=(
                said("evidence.collector", value=outcome.name),
                said("evidence.reason", value=outcome.error or "", otherwise="evidence.unknown_reason"),
            ),
        )


_DRIVER_STEPS = ("libcuda", "nvcuda", "cuInit", "cuDevice", "cuDriver")


def native_probe_failed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The native child crashed or hung outside the driver (e.g. while loading cuDNN).

    A crash there is a fact about the library it was loading: a missing cuDNN
    sub-library aborts the process that calls into cuDNN. (Crashes inside the driver
    are the driver checks' business.) By hand: `python3 -c "import ctypes;
    ctypes.CDLL('libcudnn.so.9')"` with the application's LD_LIBRARY_PATH.
    """
    native = snapshot.native
    if native is None or native.ok:
        return
    if native.outside is not None:
        yield interrupted_finding(native.outcome, native.stderr)
        return
    step = native.crashed_step or ""
    if any(marker in step for marker in _DRIVER_STEPS):
        return
    yield make_finding(
        "probe.native_failed",
        Cause.PROBE_FAILED,
        Layer.PROBE,
        Severity.WARNING,
        params={"outcome": native.outcome, "step": step or Words("evidence.unknown_step")},
        evidence=(
            said("evidence.native_probe", value=native.outcome),
            said("evidence.step", value=step, otherwise="evidence.unknown_step"),
            named("stderr", native.stderr[-800:], otherwise="evidence.empty"),
        ),
    )


CHECKS = (collectors_failed, native_probe_failed)
