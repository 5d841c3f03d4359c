"""The one place that ranks findings and the one place that decides the verdict.

Pure and light to import: the diagnosis (core/flow/diagnosis.py) and each step of the wizard's state
machine (core/flow/steps.py) call :func:`settle_findings` and :func:`decide_verdict` and nothing else
orders findings or judges them. The order itself is :func:`fallback_doctor.core.model.result.rank_findings`
with each finding's declared role as its first key (core/model/finding_spec.py ``Role``): the
configuration that decides CPU or GPU, then the other causes, then the context (a licence file, a
log that says nothing); within each, errors before warnings before information, lowest layer first.
:func:`first_cause` is the one answer every surface shows first (text, JSON, bundle, report.html,
the wizard's pages, the fleet summary, ``check``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from fallback_doctor.core.language.texts import LANGUAGES, render_text, text_ref, words_of
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import Role
from fallback_doctor.core.model.result import Finding, Layer, Severity, rank_findings


class Verdict(StrEnum):
    """The one-word answer, a fixed and documented set (README, "Verdicts")."""

    GPU_VERIFIED = "gpu_verified"
    """A test inference really ran on the GPU."""
    NO_PROBLEM_FOUND = "no_problem_found"
    """The static checks are clean; the GPU was not exercised (e.g. --quick)."""
    GPU_AT_RISK = "gpu_at_risk"
    """No error, but warnings that can stop or slow the GPU path."""
    GPU_UNUSABLE = "gpu_unusable"
    """A problem stops the GPU path: ONNX Runtime will run on the CPU."""
    CPU_BY_CONFIGURATION = "cpu_by_configuration"
    """The application is configured for the CPU: it does what it was asked."""


EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2

_EXIT_BY_VERDICT = {
    Verdict.GPU_VERIFIED: EXIT_OK,
    Verdict.NO_PROBLEM_FOUND: EXIT_OK,
    Verdict.CPU_BY_CONFIGURATION: EXIT_OK,
    Verdict.GPU_AT_RISK: EXIT_PROBLEM,
    Verdict.GPU_UNUSABLE: EXIT_PROBLEM,
}


def exit_code_for(verdict: Verdict | str) -> int:
    """0 no problem (or CPU on purpose), 1 a problem was found."""
    return _EXIT_BY_VERDICT[Verdict(verdict)]


def decide_verdict(findings: Iterable[Finding], *, gpu_ran: bool = False) -> Verdict:
    """The verdict from the ranked findings (and whether a test inference ran on the GPU)."""
    listed = list(findings)
    if any(f.cause == Cause.CPU_BY_CONFIGURATION for f in listed):
        return Verdict.CPU_BY_CONFIGURATION
    if any(f.severity == Severity.ERROR for f in listed):
        return Verdict.GPU_UNUSABLE
    if any(f.severity == Severity.WARNING for f in listed):
        return Verdict.GPU_AT_RISK
    return Verdict.GPU_VERIFIED if gpu_ran else Verdict.NO_PROBLEM_FOUND


GPU_STACK_LAYERS = frozenset(
    {
        Layer.DRIVER,
        Layer.DEVICE,
        Layer.CUDA,
        Layer.CUDNN,
        Layer.TENSORRT,
        Layer.PACKAGE,
        Layer.LOADER,
        Layer.RESOURCES,
        Layer.UNKNOWN,
    }
)
"""Layers whose findings become information when the configuration asked for the CPU."""

_SUPERSEDED_BY_LIBPATH = ("package.ep_not_in_build",)
"""Findings about a pip package that the libPath finding replaces for a native target: the
libPath's ONNX Runtime is not installed with pip (target.libpath_cpu_only says what to do)."""


@dataclass(frozen=True)
class SettleContext:
    """The two facts ranking needs besides the findings (read from a snapshot or from a document)."""

    ort_is_lib_path: bool = False
    """The ONNX Runtime inspected is the one in the configuration's libPath (a native target)."""
    config_path: str | None = None
    """The configuration file, named in the note of a finding lowered to information."""


def settle_findings(findings: Iterable[Finding], context: SettleContext) -> tuple[Finding, ...]:
    """Merge, drop what is superseded, rank; with a CPU configuration, make GPU findings information.

    The log's own finding is folded into a static finding of the same cause (its lines become
    evidence there). For a Bareun target the pip-package finding about a CPU-only build gives
    way to the libPath finding. The two log findings that say "a fallback, not why" are one.
    Ranked by declared role (the deciding configuration, the causes, the context), then severity,
    then layer. When the configuration asks for the CPU, that finding comes first and every
    GPU-stack finding is kept, lowered to information, with a note saying why; a libPath without
    a GPU build follows it, and the CPU setting's fix says that it must be fixed too. Settling
    settled findings again changes nothing (each wizard step re-settles the document). Every
    finding passes here before a document, so here each is checked against its declaration
    (UndeclaredFindingError: an id no module declares, another cause, layer or severity).
    """
    from fallback_doctor.core.judgement.checks.log import merge_log_findings

    listed = [_unique_evidence(f) for f in merge_log_findings(_as_declared(list(findings)))]
    listed = _one_fell_back(listed)
    if context.ort_is_lib_path:
        listed = [f for f in listed if not f.id.startswith(_SUPERSEDED_BY_LIBPATH)]
    ranked = rank_findings(listed, _tier)
    if not any(f.cause == Cause.CPU_BY_CONFIGURATION for f in ranked):
        return ranked
    file = context.config_path or "?"
    lowered = [_as_information(f, file) if f.layer in GPU_STACK_LAYERS else f for f in ranked]
    needed = [f for f in lowered if f.id in _NEEDED_WITH_CPU_CONFIGURATION]
    first = [_then_also(f, needed) for f in lowered if f.cause == Cause.CPU_BY_CONFIGURATION]
    rest = [f for f in lowered if f.cause != Cause.CPU_BY_CONFIGURATION and f not in needed]
    return (*first, *needed, *rank_findings(rest, _tier))


def _as_declared(findings: list[Finding]) -> list[Finding]:
    """``findings``, each checked against its declaration (core/judgement/registry.py): an id no
    module declares, or a finding made with another cause, layer or severity, raises
    UndeclaredFindingError. A finding that settling lowered to information under a CPU configuration
    (settled again by each wizard step, kept by a check again after the configuration changed) may
    hold any of its declared severities."""
    from fallback_doctor.core.judgement.registry import check_declared

    cpu = any(f.cause == Cause.CPU_BY_CONFIGURATION for f in findings)
    for finding in findings:
        severity = None if _lowered(finding, cpu) else finding.severity
        check_declared(finding.id, finding.cause, finding.layer, severity)
    return findings


def _lowered(finding: Finding, cpu: bool) -> bool:
    """Whether settling lowered ``finding`` to information (:func:`_as_information`): its note says
    so; for a finding with its words per language (no text key), while a CPU configuration is there."""
    if finding.severity != Severity.INFO or finding.layer not in GPU_STACK_LAYERS:
        return False
    if not finding.text:
        return cpu
    notes = (finding.text.get("append") or {}).get("detail") or ()
    return any(isinstance(note, dict) and note.get("key") == "target.information_only" for note in notes)


def role_of(finding_id: str) -> Role:
    """The declared role of a finding id (core/judgement/registry.py); an id no declaration knows (a bundle of
    another version) is taken as a cause, so it is never hidden below the context."""
    from fallback_doctor.core.judgement.registry import declared

    spec = declared().get(finding_id)
    return spec.role if spec is not None and spec.role is not None else Role.CAUSE


def can_be_first(finding_id: str, cause: str, severity: str, role: object = None) -> bool:
    """Whether a finding can be the answer shown first: a cause (not context) that is a problem,
    or the configuration's own CPU setting (information, but the reason the server is on the CPU)."""
    if cause == Cause.CPU_BY_CONFIGURATION:
        return True
    declared_role = Role(str(role)) if isinstance(role, str) and role in tuple(Role) else role_of(finding_id)
    return declared_role is not Role.CONTEXT and severity != Severity.INFO


def _tier(finding: Finding) -> int:
    """The first key of the ranking: 0 the configuration that decides CPU or GPU, 1 the other
    causes (and a deciding finding that is only a note), 2 the context."""
    role = role_of(finding.id)
    if finding.cause == Cause.CPU_BY_CONFIGURATION:
        return 0
    if role is Role.DECIDES and finding.severity != Severity.INFO:
        return 0
    return 2 if role is Role.CONTEXT else 1


def first_cause(findings: Sequence[Finding]) -> Finding | None:
    """The one answer shown first: the first ranked finding that can be it (None: nothing to fix)."""
    return next((f for f in findings if can_be_first(f.id, f.cause, f.severity)), None)


def document_first_cause(document: Mapping[str, object]) -> dict[str, object] | None:
    """The first cause of a report document: its first finding that can be the answer, by the role
    it carries (by its declared role in a document of an older version). For a document core made,
    the one its ``first_cause`` names; read from the findings so that a bundle edited by hand shows
    what it holds."""
    findings = document.get("findings")
    listed = [f for f in findings if isinstance(f, dict)] if isinstance(findings, list) else []
    return next(
        (
            f
            for f in listed
            if can_be_first(str(f.get("id")), str(f.get("cause")), str(f.get("severity")), f.get("role"))
        ),
        None,
    )


_NEEDED_WITH_CPU_CONFIGURATION = ("target.libpath_cpu_only", "target.libpath_no_ort")
"""Findings that keep the server on the CPU even once the configuration asks for the GPU: the CPU
setting's fix says that they must follow."""


def _then_also(finding: Finding, needed: Sequence[Finding]) -> Finding:
    """The CPU setting's finding whose fix says that each of ``needed`` must be fixed too (once:
    settling again adds nothing)."""
    if not needed or finding.remediation is None:
        return finding

    def with_notes(fix: str, lang: str) -> str:
        notes = [
            render_text("target.then_also", lang, {"title": _title(other, lang)})["detail"]
            for other in needed
        ]
        return " ".join([fix, *(note for note in notes if note not in fix)]).strip()

    remediation = dataclasses.replace(
        finding.remediation, summary=with_notes(finding.remediation.summary, "en")
    )
    if finding.text:  # words by key: the notes by key too, put in a language where shown
        notes = [text_ref("target.then_also", {"title": _title_ref(other)}) for other in needed]
        return dataclasses.replace(finding, remediation=remediation, text=_appended(finding, "fix", notes))
    texts: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        own = dict(finding.texts.get(lang) or {"title": finding.title, "detail": finding.detail})
        own["fix"] = with_notes(own.get("fix") or finding.remediation.summary, lang)
        texts[lang] = own
    return dataclasses.replace(finding, texts=texts, remediation=remediation)


def _title_ref(finding: Finding) -> dict[str, Any] | str:
    """Another finding's title, by key where it has one (put in the reader's language when shown)."""
    if not finding.text:
        return finding.title
    return text_ref(str(finding.text["key"]), finding.text.get("params"), "title")


def _appended(finding: Finding, part: str, notes: list[dict[str, Any]]) -> dict[str, Any]:
    """The finding's ``text`` with ``notes`` (text references) appended to ``part`` (once each)."""
    if not finding.text:
        return finding.text
    append = {key: list(value) for key, value in (finding.text.get("append") or {}).items()}
    append[part] = [*append.get(part, []), *(note for note in notes if note not in append.get(part, []))]
    return {**finding.text, "append": append}


def _title(finding: Finding, lang: str) -> str:
    return words_of(finding, lang)["title"]


_FELL_BACK_TWICE = ("log.fell_back", "log.hidden.cause_not_logged")
"""Two findings that say one thing (the log shows a fallback, not its reason): the first is kept."""


def _one_fell_back(findings: list[Finding]) -> list[Finding]:
    """``log.hidden.cause_not_logged`` folded into ``log.fell_back`` (its quoted lines kept there)."""
    kept = next((f for f in findings if f.id == _FELL_BACK_TWICE[0]), None)
    twice = [f for f in findings if f.id == _FELL_BACK_TWICE[1]]
    if kept is None or not twice:
        return findings
    evidence = tuple(dict.fromkeys((*kept.evidence, *(e for f in twice for e in f.evidence))))
    merged = dataclasses.replace(kept, evidence=evidence)
    return [merged if f is kept else f for f in findings if f.id != _FELL_BACK_TWICE[1]]


def _unique_evidence(finding: Finding) -> Finding:
    """The finding with each piece of evidence once (a check and the log merge may quote the same line)."""
    unique = tuple(dict.fromkeys(finding.evidence))
    return finding if len(unique) == len(finding.evidence) else dataclasses.replace(finding, evidence=unique)


def _as_information(finding: Finding, file: str) -> Finding:
    """The finding at information level, its detail ending with why (in every language)."""
    if finding.severity == Severity.INFO:
        return finding
    english = render_text("target.information_only", "en", {"file": file})["detail"]
    detail = f"{finding.detail} {english}".strip()
    if finding.text:  # words by key: the note by key too
        text = _appended(finding, "detail", [text_ref("target.information_only", {"file": file})])
        return dataclasses.replace(finding, severity=Severity.INFO, detail=detail, text=text)
    texts: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        note = render_text("target.information_only", lang, {"file": file})["detail"]
        own = dict(finding.texts.get(lang) or {"title": finding.title, "detail": finding.detail})
        own["detail"] = f"{own.get('detail', '')} {note}".strip()
        texts[lang] = own
    return dataclasses.replace(finding, severity=Severity.INFO, detail=detail, texts=texts)
