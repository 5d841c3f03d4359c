"""Diagnose a log from its text alone: a ranked list of candidate causes with quoted evidence.

How a log is read into causes:

1. Every line is matched against the signature base (resources/signatures/*.json).
2. Facts about the machine are gathered from the whole window (majors named in paths and
   packages, a container, WSL, installed ONNX Runtime packages, the CUDA and cuDNN majors ONNX
   Runtime says its build requires). Causes come from the most recent start-up onwards (the
   whole window when that part shows none).
3. A line gives weights to causes. Missing libraries and Windows loader errors are decided by
   mechanism, not by case: the library's name gives its family (cuda, cudnn, tensorrt, driver,
   zlibwapi, msvc, ort) and its major; a missing CUDA or cuDNN library is both
   ``*_missing`` and ``*_major_mismatch``, ranked by context: another major seen in the log, or
   required by ONNX Runtime, or a soname pinned to a pre-11 minor, or a major older than the
   current one all favour the mismatch; otherwise the library is most likely just absent.
   Generic lines ("Failed to create CUDAExecutionProvider") count only when no line says more.
4. Per cause, one line gives its highest weight; lines add up as independent evidence
   (``1 - Π(1 - w)``). Candidates are sorted by confidence, then lowest layer first.
5. Nothing established: a single ``unknown`` candidate, with the fallback lines as evidence.

From a log alone some causes cannot be told apart; ``settle_with_machine`` takes the machine's
facts (installed CUDA and cuDNN majors, driver present) and re-ranks the candidates. The full
``diagnose`` is meant to call it; it is not wired here.

By hand: ``fallback-doctor explain-log app.log`` (this module), or read the log with
``grep -n -E 'Failed to load|LoadLibrary|CUDA failure|Require cuDNN' app.log``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from fallback_doctor.core.logs.excerpt import has_startup
from fallback_doctor.core.logs.facts import gather_facts
from fallback_doctor.core.logs.lines import LogLine, LogText, lines_from_strings, lines_from_text
from fallback_doctor.core.logs.mechanisms import contributions, family_candidates, loader_candidates
from fallback_doctor.core.logs.rank import Tally, post_rules, rank, settle_with_machine, tally_lines
from fallback_doctor.core.logs.reader import DEFAULT_BUDGET
from fallback_doctor.core.logs.results import (
    MAX_EVIDENCE,
    CandidateCause,
    HiddenSignal,
    LogDiagnosis,
    LogFacts,
    QuotedLine,
    sort_candidates,
)
from fallback_doctor.core.logs.rotation import chronological, read_log
from fallback_doctor.core.logs.signatures import Match, SignatureBase, load_signatures, match_lines
from fallback_doctor.core.model import Layer

__all__ = [
    "MAX_EVIDENCE",
    "CandidateCause",
    "HiddenSignal",
    "LogDiagnosis",
    "LogFacts",
    "QuotedLine",
    "contributions",
    "detect_hidden_signal",
    "explain_file",
    "explain_text",
    "explain_texts",
    "family_candidates",
    "loader_candidates",
    "settle_with_machine",
    "sort_candidates",
]


def _diagnose(lines: Sequence[LogLine], base: SignatureBase, scope_to_latest_start: bool) -> LogDiagnosis:
    matched = list(zip(lines, match_lines([line.text for line in lines], base), strict=True))
    facts, context_lines = gather_facts(matched)
    start: int | None = None
    if scope_to_latest_start:
        for index in range(len(matched) - 1, -1, -1):
            if any(match.signature.kind == "startup" for match in matched[index][1]):
                start = index
                break
    hidden = detect_hidden_signal(lines, matched=matched)

    def tally_from(first: int) -> tuple[dict[str, Tally], dict[str, Tally], list[str]]:
        return tally_lines(matched[first:], facts, base)

    scope = "whole text"
    startup_quote: QuotedLine | None = None
    specific, generic, missing = tally_from(start or 0)
    if start is not None:
        if specific or generic:
            scope = "latest start-up"
            startup_quote = QuotedLine.of(lines[start], "startup")
        else:
            specific, generic, missing = tally_from(0)
    tallies = specific or generic
    post_rules(tallies, facts, context_lines)
    facts = replace(facts, missing_libraries=tuple(dict.fromkeys(missing)))
    ranked = rank(tallies)
    if not ranked:
        ranked = [CandidateCause("unknown", str(Layer.UNKNOWN), 0.0, facts.fallback[:MAX_EVIDENCE])]
        hidden = detect_hidden_signal(lines, matched=matched, cause_found=False)
    else:
        top = ranked[0]
        context = [QuotedLine.of(line, "context") for line in context_lines.get("requirement", [])]
        if top.cause not in (
            "cuda_runtime_missing",
            "cuda_major_mismatch",
            "cudnn_missing",
            "cudnn_major_mismatch",
        ):
            context = []
        seen = {(e.source, e.line, e.offset) for e in top.evidence}
        extra = tuple(q for q in (*context[-1:], *facts.fallback) if (q.source, q.line, q.offset) not in seen)
        ranked[0] = CandidateCause(
            top.cause,
            top.layer,
            top.confidence,
            top.evidence + extra[: max(0, MAX_EVIDENCE - len(top.evidence))],
            top.signatures,
            top.fields,
        )
    return LogDiagnosis(
        causes=tuple(ranked),
        facts=facts,
        hidden=hidden,
        scope=scope,
        startup=startup_quote,
        lines_examined=len(lines),
    )


# ---------------------------------------------------------------------------------------------
# Public entry points


def _as_lines(lines: Sequence[LogLine] | Sequence[str] | str, source: str) -> list[LogLine]:
    if isinstance(lines, str):
        return lines_from_text(lines, source)
    items = list(lines)
    if all(isinstance(item, LogLine) for item in items):
        return [item for item in items if isinstance(item, LogLine)]
    return lines_from_strings([str(item) for item in items], source)


def explain_text(
    lines: Sequence[LogLine] | Sequence[str] | str,
    *,
    source: str = "<text>",
    scope_to_latest_start: bool = True,
) -> LogDiagnosis:
    """Diagnose log lines (``LogLine``s, strings, or one pasted text) from the text alone.

    Returns the ranked candidate causes (``unknown`` when nothing can be established), the
    facts the text states, and whether the signal was probably hidden. By hand:
    ``fallback-doctor explain-log FILE``.
    """
    return _diagnose(_as_lines(lines, source), load_signatures(), scope_to_latest_start)


def explain_texts(texts: Sequence[LogText]) -> LogDiagnosis:
    """Diagnose what ``read_log`` returned (a log and its rotations, newest first)."""
    return explain_text(list(chronological(list(texts))))


def explain_file(path: str | os.PathLike[str], budget: int = DEFAULT_BUDGET) -> LogDiagnosis:
    """Read a log's end (and rotations while no start-up is found) and diagnose it.

    Raises ``LogReadError`` when the file cannot be read. By hand: ``tail -c 8M FILE``.
    """
    return explain_texts(read_log(path, budget, stop_when=has_startup))


def detect_hidden_signal(
    lines: Sequence[LogLine] | Sequence[str] | str,
    *,
    matched: Sequence[tuple[LogLine, list[Match]]] | None = None,
    cause_found: bool | None = None,
) -> tuple[HiddenSignal, ...]:
    """Say when the failure's own message was probably kept out of the log, from the text.

    Shown by the text: ONNX Runtime's log severity raised above WARNING (``log_severity_level``
    3 or 4, ``set_default_logger_severity(3)``, ``ORT_LOG_LEVEL``), Python warnings filtered,
    standard error sent to /dev/null (or NUL, or ``StandardError=null``). Inferred: the log
    shows a fallback to the CPU but no line says why (``cause_not_logged``). By hand:
    ``grep -n -E 'log_severity_level|filterwarnings|/dev/null' app.log``.
    """
    log_lines = _as_lines(lines, "<text>")
    if matched is None:
        base = load_signatures()
        matched = list(zip(log_lines, match_lines([line.text for line in log_lines], base), strict=True))
    found: dict[str, tuple[dict[str, str], list[QuotedLine]]] = {}
    fallback: list[QuotedLine] = []
    any_cause = False
    for line, matches in matched:
        for match in matches:
            sig = match.signature
            if sig.kind == "hidden" and sig.fact:
                entry = found.setdefault(sig.fact, (sig.says, []))
                if len(entry[1]) < MAX_EVIDENCE:
                    entry[1].append(QuotedLine.of(line, "hidden"))
            elif sig.kind == "fallback":
                fallback.append(QuotedLine.of(line, "fallback"))
            elif sig.kind in (
                "direct",
                "lookup",
                "missing_library",
                "library_version",
                "win_loader",
                "requirement",
            ):
                any_cause = True
    if cause_found is not None:
        any_cause = cause_found
    signals = [HiddenSignal(reason, says, tuple(quotes)) for reason, (says, quotes) in found.items()]
    if fallback and not any_cause:
        signals.append(
            HiddenSignal(
                "cause_not_logged",
                {
                    "en": "The log shows a fallback to the CPU but no line says why: the "
                    "reason was probably logged at a level that is filtered, or on another "
                    "stream.",
                    "ko": "로그에 CPU로의 전환는 보이지만 그 이유를 말하는 줄이 없습니다. 이유가 "
                    "걸러지는 수준으로 기록되었거나 다른 출력 스트림에 기록되었을 가능성이 큽니다.",
                },
                tuple(fallback[:MAX_EVIDENCE]),
            )
        )
    return tuple(signals)
