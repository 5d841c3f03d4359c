"""Findings about the inspection itself: a layer whose facts could not be collected."""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import load_texts, make_finding


def collectors_failed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """One finding per collector that could not collect its facts, with the reason.

    The rest of the diagnosis still stands, but that layer is unknown. By hand:
    `fallback-doctor diagnose --json` and read `environment.collectors`.
    """
    for outcome in snapshot.collectors:
        if outcome.ok:
            continue
        specific = f"collect.{outcome.name}.failed"
        reason = outcome.error or "unknown reason"
        yield make_finding(
            specific if specific in load_texts() else "collect.failed",
            Cause.COLLECTION_FAILED,
            Layer.PROBE,
            Severity.WARNING,
            params={"collector": outcome.name, "reason": reason},
            evidence=(
                Evidence(label="collector", value=outcome.name),
                Evidence(label="reason", value=reason),
            ),
        )


CHECKS = (collectors_failed,)
