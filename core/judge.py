"""The one place that ranks findings and the one place that decides the verdict.

Pure and light to import: the diagnosis (core/diagnosis.py) and each step of the wizard's state
machine (core/steps.py) call :func:`settle_findings` and :func:`decide_verdict` and nothing else
orders findings or judges them. The order itself is :func:`fallback_doctor.core.model.rank_findings`
(configuration first, then errors before warnings before information, lowest layer first).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.model import Finding, Layer, Severity, rank_findings
from fallback_doctor.core.texts import LANGUAGES, render_text


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
    way to the libPath finding. When the configuration asks for the CPU, that finding comes
    first and every GPU-stack finding is kept, lowered to information, with a note saying why.
    Settling settled findings again changes nothing (each wizard step re-settles the document).
    """
    from fallback_doctor.core.checks.log import merge_log_findings

    listed = [_unique_evidence(f) for f in merge_log_findings(list(findings))]
    if context.ort_is_lib_path:
        listed = [f for f in listed if not f.id.startswith(_SUPERSEDED_BY_LIBPATH)]
    ranked = rank_findings(listed)
    if not any(f.cause == Cause.CPU_BY_CONFIGURATION for f in ranked):
        return ranked
    file = context.config_path or "?"
    lowered = [_as_information(f, file) if f.layer in GPU_STACK_LAYERS else f for f in ranked]
    first = [f for f in lowered if f.cause == Cause.CPU_BY_CONFIGURATION]
    rest = [f for f in lowered if f.cause != Cause.CPU_BY_CONFIGURATION]
    return (*first, *rank_findings(rest))


def _unique_evidence(finding: Finding) -> Finding:
    """The finding with each piece of evidence once (a check and the log merge may quote the same line)."""
    unique = tuple(dict.fromkeys(finding.evidence))
    return finding if len(unique) == len(finding.evidence) else dataclasses.replace(finding, evidence=unique)


def _as_information(finding: Finding, file: str) -> Finding:
    """The finding at information level, its detail ending with why (in every language)."""
    if finding.severity == Severity.INFO:
        return finding
    texts: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        note = render_text("target.information_only", lang, {"file": file})["detail"]
        own = dict(finding.texts.get(lang) or {"title": finding.title, "detail": finding.detail})
        own["detail"] = f"{own.get('detail', '')} {note}".strip()
        texts[lang] = own
    english = render_text("target.information_only", "en", {"file": file})["detail"]
    return dataclasses.replace(
        finding,
        severity=Severity.INFO,
        detail=f"{finding.detail} {english}".strip(),
        texts=texts,
    )
