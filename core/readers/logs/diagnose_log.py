"""Diagnose a log from its text alone: a ranked list of candidate causes with quoted evidence.

How a log is read into causes:

1. Every line is matched against the signature base (resources/signatures/*.json), without
   the prefixes its writers put before it (time stamps, syslog, container runtimes) and
   whole. Before any pattern, the general reading (core/readers/logs/extract.py) takes from each line
   what a mechanism understands whatever the wording: a library file beside a failure phrase,
   an error name, a Windows error number or exit status, a provider list (and the providers
   it names as not available).
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
6. The outcome says what the text can tell (``outcome_of``): ``named`` (one first cause well
   ahead), ``several_open`` (the candidates are kept in order, the first under 0.5: the log
   alone does not decide; each has the check that separates it), ``not_said`` (a failure or a
   fallback without its cause: no guess) or ``no_failure``. A confident wrong first cause is
   worse than saying the log does not tell.

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

from fallback_doctor.core.model.result import Layer
from fallback_doctor.core.readers.logs.excerpt import has_startup
from fallback_doctor.core.readers.logs.extract import general_matches, trigger_lines
from fallback_doctor.core.readers.logs.facts import gather_facts
from fallback_doctor.core.readers.logs.lines import (
    LogLine,
    LogText,
    line_body,
    lines_from_strings,
    lines_from_text,
)
from fallback_doctor.core.readers.logs.mechanisms import contributions, family_candidates, loader_candidates
from fallback_doctor.core.readers.logs.rank import Tally, post_rules, rank, settle_with_machine, tally_lines
from fallback_doctor.core.readers.logs.reader import DEFAULT_BUDGET
from fallback_doctor.core.readers.logs.results import (
    MAX_EVIDENCE,
    SEVERAL_OPEN,
    CandidateCause,
    HiddenSignal,
    LogDiagnosis,
    LogFacts,
    QuotedLine,
    outcome_of,
    sort_candidates,
    undecided,
)
from fallback_doctor.core.readers.logs.rotation import chronological, read_log
from fallback_doctor.core.readers.logs.signatures import (
    Match,
    SignatureBase,
    load_signatures,
    match_lines,
    match_text,
)

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


_FAILURE_KINDS = frozenset(
    {"direct", "lookup", "missing_library", "library_version", "win_loader", "requirement", "fallback"}
)


def _matched(lines: Sequence[LogLine], base: SignatureBase) -> list[tuple[LogLine, list[Match]]]:
    """Every line with the catalogue's matches, and the general ones (core/readers/logs/extract.py)."""
    texts = [line_body(line.text) for line in lines]
    matches = match_lines(texts, base)
    # A prefix can be part of a message too ("systemd[1]: Starting ..."): the whole line is
    # matched as well, and what it adds is kept.
    prefixed = [index for index, line in enumerate(lines) if texts[index] != line.text]
    for index, whole in zip(prefixed, match_lines([lines[i].text for i in prefixed], base), strict=True):
        known = {match.signature.id for match in matches[index]}
        matches[index] = matches[index] + [match for match in whole if match.signature.id not in known]
    for index in trigger_lines(texts):
        matches[index] = matches[index] + general_matches(texts[index], matches[index], base)
    joined = _rejoin_wrapped(texts, [line.text for line in lines], matches, base)
    kept = [
        replace(line, text=joined[index]) if index in joined else line for index, line in enumerate(lines)
    ]
    return list(zip(kept, matches, strict=True))


WRAP_WIDTH = 60
"""The narrowest terminal width whose wrapping is undone."""
MAX_PIECES = 64
"""The most pieces one wrapped line is taken to have (lines of one width are not all one)."""


def _rejoin_wrapped(
    texts: list[str], written: list[str], matches: list[list[Match]], base: SignatureBase
) -> dict[int, str]:
    """Read a line that a terminal wrapped at its width as the one line it was.

    Source: a terminal's automatic wrap (DECAWM, on by default; xterm's ctlseqs, "Wraparound
    Mode") goes on at the next row when a line reaches the last column, wherever that falls in
    a word; a screen copied as text has one line per row, so a piece ends mid-word, inside
    quotes or brackets, or on a space that its writer did not end the line with.

    The pieces are a run of two or more lines of one width (``WRAP_WIDTH`` or more, as
    written: a prefix is part of what was wrapped; none after the first starting a record of
    its own with a time stamp or another prefix) and a shorter rest, ``MAX_PIECES`` at most.
    One line and a shorter one after it (which may carry the very prefix of the first line:
    journald, syslog and a container runtime tag each line of one write alike) are joined
    only where the cut shows (``_cut_between``): that is what any two lines of a log
    look like, another process's included. Joined, the message's matches go to its first line
    (quoted as the whole message) and the pieces after it are dropped; only when the joined
    message matches something. Returns the joined messages by the index of their first line.
    """
    messages: dict[int, str] = {}
    widths = [len(text) for text in written]
    index = 0
    while index < len(texts) - 1:
        width, last = widths[index], index + 1
        prefix = written[index][: len(written[index]) - len(texts[index])]
        while (
            width >= WRAP_WIDTH
            and last < min(len(texts) - 1, index + MAX_PIECES)
            and widths[last] == width
            and texts[last] == written[last]  # a piece starts no record of its own (no time stamp)
        ):
            last += 1
        once = last == index + 1
        """Wrapped once: the rest is shorter, and may repeat the first line's tag."""
        if (
            width >= WRAP_WIDTH
            and 0 < widths[last] < width + (not once)
            and _piece(texts[last], written[last], prefix if once else "")
        ):
            message = texts[index] + "".join(texts[index + 1 : last + 1])
            found = match_text(message, base)
            found = found + general_matches(message, found, base)
            if found and (
                not once or _cut_between(texts[index], texts[last], found, matches[index : last + 1])
            ):
                matches[index], messages[index] = found, written[index] + "".join(texts[index + 1 : last + 1])
                for dropped in range(index + 1, last + 1):
                    matches[dropped] = []
                index = last + 1
                continue
        index += 1
    return messages


def _piece(text: str, written: str, prefix: str) -> bool:
    """A piece starts no record of its own (no time stamp), or repeats the first line's tag."""
    return text == written or (bool(prefix) and written == prefix + text)


_PAIRED = (("(", ")"), ("[", "]"), ("{", "}"), ("\u2018", "\u2019"), ("\u201c", "\u201d"))
"""Brackets and typographic quotes: one opened in a piece and closed in the next spans the cut."""


def _cut_between(first: str, second: str, found: list[Match], pieces: list[list[Match]]) -> bool:
    """Whether a line and the shorter one after it are one line wrapped once (any two lines of
    a log look like a wide line and a shorter one; these say it was cut): a bracket or quote
    opened in the first closes in the second, or the joined message says more than the pieces
    (a signature neither matched, or a field a piece captured up to the cut that goes on
    across it)."""
    if first[-1:].isspace():
        return True  # a line its writer ended is stripped; a terminal cuts where the width ends
    for opening, closing in _PAIRED:
        if first.count(opening) > first.count(closing) and second.count(closing) > second.count(opening):
            return True
    if any(first.count(quote) % 2 == 1 and second.count(quote) % 2 == 1 for quote in "'\""):
        return True
    had = {match.signature.id: match.fields for piece in pieces for match in piece}
    for match in found:
        before = had.get(match.signature.id)
        if before is None:
            return True
        for name, value in before.items():
            grown = match.fields.get(name, "")
            # (an empty field at the cut was cut too)
            if len(grown) > len(value) and (
                (first.endswith(value) and grown.startswith(value))
                or (second.startswith(value) and grown.endswith(value))
            ):
                return True
    return False


def _diagnose(lines: Sequence[LogLine], base: SignatureBase, scope_to_latest_start: bool) -> LogDiagnosis:
    matched = _matched(lines, base)
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
    failure_seen = any(match.signature.kind in _FAILURE_KINDS for _, found in matched for match in found)
    outcome = outcome_of(ranked, facts, failure_seen)
    return LogDiagnosis(
        causes=tuple(undecided(ranked) if outcome == SEVERAL_OPEN else ranked),
        facts=facts,
        hidden=hidden,
        scope=scope,
        startup=startup_quote,
        lines_examined=len(lines),
        outcome=outcome,
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
        matched = _matched(log_lines, load_signatures())
    found: dict[str, tuple[str, list[QuotedLine]]] = {}
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
                "log.hidden_signal.cause_not_logged",
                tuple(fallback[:MAX_EVIDENCE]),
            )
        )
    return tuple(signals)
