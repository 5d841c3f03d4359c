"""What a finding id is declared with: its cause, the layer a technician fixes, its severity."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.model import Layer, Severity


@dataclass(frozen=True)
class FindingSpec:
    """One finding id and what every finding of that id carries.

    ``cause`` None: the cause is found at run time (the log's top cause, the probe's verdict),
    and ``layer`` is then None too (it follows the cause). ``severity`` is a tuple where the
    severity depends on the facts (an error when the GPU was asked for, a note otherwise).
    """

    id: str
    cause: Cause | None
    layer: Layer | None
    severity: Severity | tuple[Severity, ...]

    @property
    def severities(self) -> tuple[Severity, ...]:
        """Every severity a finding of this id may have."""
        return self.severity if isinstance(self.severity, tuple) else (self.severity,)

    @property
    def notes_only(self) -> bool:
        """Whether every finding of this id is a note (INFO): nothing to fix, nothing to verify."""
        return self.severities == (Severity.INFO,)
