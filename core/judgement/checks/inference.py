"""Findings from the test inference, when one was run (the logic is in core/readers/inference/findings.py).

This module stays light to import: a diagnosis with --quick runs no probe, so the probe's
result types and their findings are loaded only when there is a result to read.
"""

from __future__ import annotations

from collections.abc import Iterable

from fallback_doctor.core.model.result import Finding
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot


def check_inference(snapshot: EnvironmentSnapshot) -> Iterable[Finding]:
    """Findings from the snapshot's test inference. By hand: ``fallback-doctor test-inference``."""
    facts = snapshot.inference
    if facts is None or facts.result is None:
        return []
    from fallback_doctor.core.readers.inference.findings import inference_findings

    return inference_findings(facts.result)


CHECKS = (check_inference,)
