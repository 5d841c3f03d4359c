"""Facts read from the application's log: the ranked candidate causes and the quoted lines."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogFacts:
    """The log diagnosis as data (see core/logs/diagnose_log.py for how it is made)."""

    sources: tuple[str, ...]
    causes: tuple[dict[str, object], ...]
    """Ranked candidates: {cause, layer, confidence, evidence: [{text, source, line}]}."""
    hidden_signal: tuple[str, ...]
