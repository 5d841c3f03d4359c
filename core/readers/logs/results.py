"""What a log diagnosis returns: quoted lines, candidate causes, hidden signals, the log's facts.

Kept apart from the rules so that the collectors and the CLI can name the types without
loading the signature base.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fallback_doctor.core.language.evidence_text import log_line_evidence
from fallback_doctor.core.model.result import LAYER_ORDER, Evidence, Layer
from fallback_doctor.core.readers.logs.lines import LogLine
from fallback_doctor.core.readers.logs.separators import separator_key

MAX_EVIDENCE = 6
"""Quoted lines kept per candidate (the first ones seen)."""

NAMED = "named"
"""The text names the cause: one first cause, well ahead of the others."""
SEVERAL_OPEN = "several_open"
"""The text leaves several causes open: ranked, each with the check that separates them."""
NOT_SAID = "not_said"
"""The text shows a failure or a fallback but not its cause: no confident guess."""
NO_FAILURE = "no_failure"
"""The text shows no failure at all."""
OUTCOMES = (NAMED, SEVERAL_OPEN, NOT_SAID, NO_FAILURE)

NAMED_CONFIDENCE = 0.75
"""A first cause at or above this, ``NAMED_MARGIN`` ahead of the second, is named by the text.
Calibrated on the development set (scripts/measure_corpus.py): first causes of 0.7 were right
5 times in 8 (CUDA error 100 alone has several causes), those of 0.75 and more 66 in 69."""
NAMED_MARGIN = 0.2
OPEN_CONFIDENCE = 0.3
"""Under this, the first cause is no more than a guess: the text does not say."""
CONFIDENT = 0.5
"""A first cause at or above this is a confident answer (a wrong one is worse than none)."""

# ---------------------------------------------------------------------------------------------
# Result types


@dataclass(frozen=True)
class QuotedLine:
    """A log line quoted as evidence, with where it is and what role it plays."""

    source: str
    line: int | None
    text: str
    role: str = "cause"
    """cause, fallback, context, hidden or startup."""
    offset: int | None = None
    from_end: int | None = None

    @classmethod
    def of(cls, line: LogLine, role: str = "cause") -> QuotedLine:
        """Quote one log line."""
        return cls(line.source, line.line, line.text, role, line.offset, line.from_end)

    def where(self) -> str:
        """``file:line``, or the position from the end when the line number is not known."""
        return LogLine(self.source, self.text, self.line, self.offset, self.from_end).where()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: file, line, text, role (and the position from the end when needed)."""
        result: dict[str, Any] = {"file": self.source, "line": self.line, "text": self.text}
        result["role"] = self.role
        if self.line is None:
            result["lines_before_end"] = self.from_end
            result["offset"] = self.offset
        return result

    def to_evidence(self) -> Evidence:
        """The result model's Evidence for this quoted line."""
        return log_line_evidence(self.role, self.text, self.source, self.line)


@dataclass(frozen=True)
class CandidateCause:
    """One candidate cause: code, layer, confidence (0..1) and the lines that support it."""

    cause: str
    layer: str
    confidence: float
    evidence: tuple[QuotedLine, ...]
    signatures: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    """What the lines captured: library, family, needed_major, errno, ..."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {cause, layer, confidence, evidence, fields, told_apart_by}: the label key of
        the check that tells it from the others (core/readers/logs/separators.py; "" where none)."""
        return {
            "cause": self.cause,
            "layer": self.layer,
            "confidence": round(self.confidence, 3),
            "evidence": [quote.to_dict() for quote in self.evidence],
            "fields": dict(self.fields),
            "told_apart_by": separator_key(self.cause),
        }


@dataclass(frozen=True)
class HiddenSignal:
    """A reason the failure's own message is probably not in the log."""

    reason: str
    """log_severity, python_warnings, stderr_discarded or cause_not_logged."""
    says: str
    """The label key of what it means (resources/texts/<lang>/labels/)."""
    evidence: tuple[QuotedLine, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "reason": self.reason,
            "says": self.says,
            "evidence": [quote.to_dict() for quote in self.evidence],
        }


@dataclass(frozen=True)
class LogFacts:
    """What the text says about the machine and the build, beside the causes."""

    required_cuda_major: int | None = None
    required_cudnn_major: int | None = None
    cuda_majors_seen: frozenset[int] = frozenset()
    container: bool = False
    wsl: bool = False
    ort_packages: tuple[str, ...] = ()
    providers: tuple[str, ...] | None = None
    fallback: tuple[QuotedLine, ...] = ()
    missing_libraries: tuple[str, ...] = ()
    gpu_provider_listed: bool = False
    """Some provider list in the log names a GPU provider (the build has one)."""
    gpu_active: bool = False
    """ONNX Runtime placed nodes on a GPU provider (the provider loaded and runs)."""
    ort_versions: tuple[str, ...] = ()
    cudnn_majors_seen: frozenset[int] = frozenset()
    driver_versions: tuple[str, ...] = ()
    gpu_names: tuple[str, ...] = ()
    cuda_versions: tuple[tuple[int, int], ...] = ()
    """CUDA versions the program was built with or ships (torch +cu121, a toolkit folder)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "required_cuda_major": self.required_cuda_major,
            "required_cudnn_major": self.required_cudnn_major,
            "cuda_majors_seen": sorted(self.cuda_majors_seen),
            "container": self.container,
            "wsl": self.wsl,
            "ort_packages": list(self.ort_packages),
            "providers": None if self.providers is None else list(self.providers),
            "fallback_seen": bool(self.fallback),
            "missing_libraries": list(self.missing_libraries),
            "gpu_provider_listed": self.gpu_provider_listed,
            "gpu_active": self.gpu_active,
            "ort_versions": list(self.ort_versions),
            "cudnn_majors_seen": sorted(self.cudnn_majors_seen),
            "driver_versions": list(self.driver_versions),
            "gpu_names": list(self.gpu_names),
            "cuda_versions": [f"{major}.{minor}" for major, minor in self.cuda_versions],
        }


@dataclass(frozen=True)
class LogDiagnosis:
    """The ranked candidate causes of one log, the facts, and whether the signal was hidden."""

    causes: tuple[CandidateCause, ...]
    facts: LogFacts
    hidden: tuple[HiddenSignal, ...]
    scope: str
    """``latest start-up`` or ``whole text``."""
    startup: QuotedLine | None
    lines_examined: int
    outcome: str = NOT_SAID
    """named, several_open, not_said or no_failure (``outcome_of``)."""

    @property
    def top(self) -> CandidateCause:
        """The most likely cause (``unknown`` when nothing could be established)."""
        return self.causes[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON form: causes (most likely first), hidden signals, facts, scope."""
        return {
            "outcome": self.outcome,
            "causes": [cause.to_dict() for cause in self.causes],
            "hidden_signal": [signal.to_dict() for signal in self.hidden],
            "facts": self.facts.to_dict(),
            "scope": self.scope,
            "startup": None if self.startup is None else self.startup.to_dict(),
            "lines_examined": self.lines_examined,
        }


def sort_candidates(candidates: Iterable[CandidateCause]) -> list[CandidateCause]:
    """Most confident first; equal confidence: the lowest layer first."""

    def key(candidate: CandidateCause) -> tuple[float, int]:
        try:
            layer_index = LAYER_ORDER.index(Layer(candidate.layer))
        except ValueError:
            layer_index = len(LAYER_ORDER)
        return (-round(candidate.confidence, 3), layer_index)

    return sorted(candidates, key=key)


def outcome_of(causes: Sequence[CandidateCause], facts: LogFacts, failure_seen: bool) -> str:
    """Which of the three answers the text gives (or that it shows no failure at all).

    ``named``: the first cause reaches ``NAMED_CONFIDENCE`` and leads the second by
    ``NAMED_MARGIN``. ``several_open``: a first cause of at least ``OPEN_CONFIDENCE`` that
    does not lead so. ``not_said``: nothing that strong while the text shows a failure, a
    fallback, or a failure line no mechanism explains. ``no_failure``: none of those, or the
    GPU provider is running and what the text shows is too weak to have stopped it.
    """
    top = causes[0]
    confidence = 0.0 if top.cause == "unknown" else top.confidence
    if facts.gpu_active and not facts.fallback and confidence < CONFIDENT:
        return NO_FAILURE
    if confidence < OPEN_CONFIDENCE:
        return NOT_SAID if (failure_seen or facts.fallback or top.cause != "unknown") else NO_FAILURE
    second = causes[1].confidence if len(causes) > 1 else 0.0
    if confidence >= NAMED_CONFIDENCE and confidence - second >= NAMED_MARGIN:
        return NAMED
    return SEVERAL_OPEN


def undecided(causes: Sequence[CandidateCause]) -> list[CandidateCause]:
    """The candidates of a text that leaves several causes open, none of them confident.

    The order stays; the confidences are scaled so that the first stays under ``CONFIDENT``:
    the log alone does not decide between them (the checks that separate them, or the full
    ``diagnose`` on that machine, do).
    """
    top = causes[0].confidence if causes else 0.0
    if top < CONFIDENT:
        return list(causes)
    factor = (CONFIDENT - 0.01) / top
    return [replace(cause, confidence=cause.confidence * factor) for cause in causes]
