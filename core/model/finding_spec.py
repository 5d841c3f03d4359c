"""What a finding id is declared with: its cause, the layer a technician fixes, its severity."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.result import Layer, Severity


class Role(StrEnum):
    """What a finding can be in the answer: whether it can make ONNX Runtime run on the CPU.

    Ranking (core/judgement/judge.py) puts DECIDES first, then CAUSE, then CONTEXT; only DECIDES and CAUSE
    can be the first cause the surfaces show."""

    DECIDES = "decides"
    """The configuration that decides CPU or GPU (executionProvider, libPath, a file that cannot
    be read): configuration first."""
    CAUSE = "cause"
    """Can cause the fallback (a layer of the GPU stack, the loader, a process that hides the GPU)."""
    CONTEXT = "context"
    """Cannot cause it (a licence file, a log that says nothing, a collection that failed): shown
    below the causes, never as the answer."""


@dataclass(frozen=True)
class FindingSpec:
    """One finding id and what every finding of that id carries.

    ``role``: whether the finding can cause the fallback (:class:`Role`).
    ``cause`` None: the cause is found at run time (the log's top cause, the probe's verdict),
    and ``layer`` is then None too (it follows the cause). ``severity`` is a tuple where the
    severity depends on the facts (an error when the GPU was asked for, a note otherwise).
    """

    id: str
    cause: Cause | None
    layer: Layer | None
    severity: Severity | tuple[Severity, ...]
    role: Role | None = None
    """Whether it can cause the fallback; every declaration says so (tests/test_finding_ids.py)."""

    @property
    def severities(self) -> tuple[Severity, ...]:
        """Every severity a finding of this id may have."""
        return self.severity if isinstance(self.severity, tuple) else (self.severity,)

    @property
    def notes_only(self) -> bool:
        """Whether every finding of this id is a note (INFO): nothing to fix, nothing to verify."""
        return self.severities == (Severity.INFO,)
