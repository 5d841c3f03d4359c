"""Read the application's logs (or pasted text) into LogFacts: ranked causes with quoted lines.

Reading and ranking are core/logs' (bounded memory from the end, rotations, encodings,
``docker logs`` and ``journalctl`` forms); this module picks the logs of the target and turns
the result into facts. The machine's facts settle between candidates later, in
core/judgement/checks/log.py.

By hand: ``fallback-doctor explain-log FILE`` or
``grep -n -E 'Failed to load|LoadLibrary|CUDA failure|Require cuDNN' FILE``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.language.evidence_text import PASTED_NAME
from fallback_doctor.core.model.facts.logs import LogCandidate, LogFacts, LogHiddenSignal, LogNamed, LogQuote
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.targets.spec import TargetSpec

if TYPE_CHECKING:
    from fallback_doctor.core.readers.logs.diagnose_log import (
        CandidateCause,
        HiddenSignal,
        LogDiagnosis,
        QuotedLine,
    )

# The log reader and its signature base are imported where a log is really read: most
# diagnoses have no log, and importing them costs tens of milliseconds at every start.

PASTED_SOURCE = PASTED_NAME


def quote_of(quoted: QuotedLine) -> LogQuote:
    """The facts' form of a quoted line."""
    return LogQuote(quoted.source, quoted.line, quoted.text, quoted.role)


def candidate_of(candidate: CandidateCause) -> LogCandidate:
    """The facts' form of a candidate cause."""
    return LogCandidate(
        candidate.cause,
        candidate.layer,
        candidate.confidence,
        tuple(quote_of(q) for q in candidate.evidence),
        dict(candidate.fields),
        candidate.signatures,
    )


def as_candidate_cause(candidate: LogCandidate) -> CandidateCause:
    """Back to core/logs' form (for ``settle_with_machine``)."""
    from fallback_doctor.core.readers.logs.diagnose_log import CandidateCause, QuotedLine

    return CandidateCause(
        candidate.cause,
        candidate.layer,
        candidate.confidence,
        tuple(QuotedLine(q.file, q.line, q.text, q.role) for q in candidate.evidence),
        candidate.signatures,
        dict(candidate.fields),
    )


def _hidden_of(signal: HiddenSignal) -> LogHiddenSignal:
    return LogHiddenSignal(signal.reason, signal.says, tuple(quote_of(q) for q in signal.evidence))


def merge_diagnoses(sources: Iterable[str], diagnoses: list[LogDiagnosis]) -> LogFacts:
    """One LogFacts from the diagnoses of several logs of the same target.

    A cause named by several logs keeps its highest confidence and the quoted lines of each
    (up to the evidence limit); ``unknown`` only stays when no log established anything.
    """
    from fallback_doctor.core.readers.logs.diagnose_log import MAX_EVIDENCE

    best: dict[str, LogCandidate] = {}
    for diagnosis in diagnoses:
        for candidate in diagnosis.causes:
            item = candidate_of(candidate)
            known = best.get(item.cause)
            if known is None:
                best[item.cause] = item
                continue
            winner, other = (item, known) if item.confidence > known.confidence else (known, item)
            merged = winner.evidence + tuple(q for q in other.evidence if q not in winner.evidence)
            best[item.cause] = LogCandidate(
                winner.cause,
                winner.layer,
                winner.confidence,
                merged[:MAX_EVIDENCE],
                {**other.fields, **winner.fields},
                tuple(dict.fromkeys(winner.signatures + other.signatures)),
            )
    if len(best) > 1:
        best.pop("unknown", None)
    from fallback_doctor.core.readers.logs.diagnose_log import sort_candidates

    ranked = sort_candidates(as_candidate_cause(c) for c in best.values())
    hidden: dict[str, LogHiddenSignal] = {}
    for diagnosis in diagnoses:
        for signal in diagnosis.hidden:
            if signal.reason == "cause_not_logged" and "unknown" not in best:
                continue
            hidden.setdefault(signal.reason, _hidden_of(signal))
    newest = diagnoses[-1] if diagnoses else None
    return LogFacts(
        sources=tuple(sources),
        causes=tuple(candidate_of(c) for c in ranked),
        hidden_signal=tuple(hidden.values()),
        scope=newest.scope if newest else "whole text",
        startup=quote_of(newest.startup) if newest and newest.startup else None,
        required_cuda_major=next(
            (d.facts.required_cuda_major for d in diagnoses if d.facts.required_cuda_major), None
        ),
        required_cudnn_major=next(
            (d.facts.required_cudnn_major for d in diagnoses if d.facts.required_cudnn_major), None
        ),
        fallback=tuple(quote_of(q) for d in diagnoses for q in d.facts.fallback)[:MAX_EVIDENCE],
        lines_examined=sum(d.lines_examined for d in diagnoses),
        named=named_in(diagnoses),
        outcome=_outcome(diagnoses, ranked[0].cause if ranked else "unknown"),
    )


def named_in(diagnoses: Iterable[LogDiagnosis]) -> LogNamed:
    """The versions and libraries the logs name, each once, in the order first named."""

    def each(values: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(values))

    facts = [d.facts for d in diagnoses]
    return LogNamed(
        ort_versions=each(v for f in facts for v in f.ort_versions),
        driver_versions=each(v for f in facts for v in f.driver_versions),
        cuda_versions=each(f"{major}.{minor}" for f in facts for major, minor in f.cuda_versions),
        cuda_majors=each(sorted(m for f in facts for m in f.cuda_majors_seen)),
        cudnn_majors=each(sorted(m for f in facts for m in f.cudnn_majors_seen)),
        missing_libraries=each(v for f in facts for v in f.missing_libraries),
        gpu_names=each(v for f in facts for v in f.gpu_names),
        providers=each(v for f in facts for v in f.providers or ()),
    )


def _outcome(diagnoses: list[LogDiagnosis], top: str) -> str:
    """The outcome of the log whose first cause leads the merged ranking (the newest otherwise)."""
    for diagnosis in reversed(diagnoses):
        if diagnosis.top.cause == top:
            return diagnosis.outcome
    return diagnoses[-1].outcome if diagnoses else ""


def collect_log(target: TargetFacts, spec: TargetSpec) -> LogFacts | None:
    """The target's logs (``--log`` files, else the profile's log paths) or pasted text, diagnosed.

    Each file is read from its end in bounded memory (with its rotations while no start-up
    is found) and ranked by core/logs; a file that cannot be read is recorded in
    ``unreadable`` with why, and the others go on. None when there is no log to read.
    By hand: ``fallback-doctor explain-log FILE``.
    """
    paths = tuple(spec.logs) or tuple(target.log_paths)
    if not paths and not (spec.log_text and spec.log_text.strip()):
        return None
    from fallback_doctor.core.readers.logs.diagnose_log import explain_file, explain_text

    diagnoses: list[LogDiagnosis] = []
    sources: list[str] = []
    unreadable: list[tuple[str, str]] = []
    for path in paths:
        try:
            diagnoses.append(explain_file(path))
            sources.append(path)
        except OSError as error:
            why = str(error) or type(error).__name__
            if isinstance(error, PermissionError) or isinstance(error.__cause__, PermissionError):
                why += " (run with sudo, or as the service's user, to read it)"
            unreadable.append((path, why))
    if spec.log_text is not None and spec.log_text.strip():
        diagnoses.append(explain_text(spec.log_text, source=PASTED_SOURCE))
        sources.append(PASTED_SOURCE)
    if not diagnoses and not unreadable:
        return None
    if not diagnoses:
        return LogFacts(sources=(), causes=(), hidden_signal=(), unreadable=tuple(unreadable))
    return dataclasses.replace(merge_diagnoses(sources, diagnoses), unreadable=tuple(unreadable))
