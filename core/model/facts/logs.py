"""Facts read from the application's log: the ranked candidate causes and the quoted lines."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LogQuote:
    """A quoted log line: file, line number (None when only the position from the end is known)."""

    file: str
    line: int | None
    text: str
    role: str = "cause"
    """cause, fallback, context, hidden or startup."""


@dataclass(frozen=True)
class LogCandidate:
    """One candidate cause from the log, with its confidence (0..1) and the lines behind it."""

    cause: str
    layer: str
    confidence: float
    evidence: tuple[LogQuote, ...]
    fields: dict[str, str] = field(default_factory=dict)
    """What the lines captured: library, family, needed_major, errno …"""
    signatures: tuple[str, ...] = ()


@dataclass(frozen=True)
class LogHiddenSignal:
    """A reason the failure's own message is probably not in the log (severity raised, stderr lost)."""

    reason: str
    """log_severity, python_warnings, stderr_discarded or cause_not_logged."""
    says: str
    """The label key of the note (its words in each language's catalogue)."""
    evidence: tuple[LogQuote, ...] = ()


@dataclass(frozen=True)
class LogNamed:
    """What the log's text names about the machine it came from (core/logs reads it): the stack
    page of a log target shows these, since that machine's layers cannot be inspected here."""

    ort_versions: tuple[str, ...] = ()
    driver_versions: tuple[str, ...] = ()
    cuda_versions: tuple[str, ...] = ()
    """CUDA versions the program was built with or ships ("12.1")."""
    cuda_majors: tuple[int, ...] = ()
    """CUDA majors of the libraries the log names (libcublasLt.so.11: 11)."""
    cudnn_majors: tuple[int, ...] = ()
    missing_libraries: tuple[str, ...] = ()
    """Libraries the log says could not be loaded."""
    gpu_names: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    """The providers a provider list in the log names."""


@dataclass(frozen=True)
class LogFacts:
    """The log diagnosis as data (see core/readers/logs/diagnose_log.py for how it is made)."""

    sources: tuple[str, ...]
    causes: tuple[LogCandidate, ...]
    """Ranked candidates from the text alone, most likely first (``unknown`` when none)."""
    hidden_signal: tuple[LogHiddenSignal, ...]
    unreadable: tuple[tuple[str, str], ...] = ()
    """(file, why) for each log that could not be read."""
    scope: str = "whole text"
    """``latest start-up`` or ``whole text``."""
    startup: LogQuote | None = None
    required_cuda_major: int | None = None
    """The CUDA major ONNX Runtime said its build requires ("Require cuDNN 9.* and CUDA 12.*")."""
    required_cudnn_major: int | None = None
    fallback: tuple[LogQuote, ...] = ()
    """Lines that say the application fell back to the CPU."""
    lines_examined: int = 0
    named: LogNamed | None = None
    """The versions and libraries the log itself names (its own facts, not this machine's)."""
    outcome: str = ""
    """What the text says (core/readers/logs/results.py): ``named`` (one cause), ``several_open``,
    ``not_said`` (a failure without its cause) or ``no_failure``; "" when no log was read."""
