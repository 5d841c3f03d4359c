"""The diagnosis: collect, check, rank, and reach a verdict. The one entry point of the core."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from fallback_doctor import __version__
from fallback_doctor.core.causes import Cause
from fallback_doctor.core.checks import Check, load_checks
from fallback_doctor.core.collect.run import CollectRequest, collect_snapshot
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity, rank_findings
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import make_finding


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


@dataclass(frozen=True)
class DiagnoseRequest:
    """What to diagnose and how deeply."""

    collect: CollectRequest = field(default_factory=CollectRequest)
    quick: bool = False
    target: dict[str, str] = field(default_factory=dict)
    """A description of the target for the report: kind, interpreter, paths."""


@dataclass(frozen=True)
class Diagnosis:
    """The result of one diagnosis: the verdict, the ranked findings, and the facts behind them."""

    verdict: Verdict
    findings: tuple[Finding, ...]
    snapshot: EnvironmentSnapshot
    target: Mapping[str, str]
    created: str
    timings_ms: Mapping[str, float]
    quick: bool


def run_checks(snapshot: EnvironmentSnapshot, checks: Iterable[Check] | None = None) -> list[Finding]:
    """Every check over the snapshot; a check that raises becomes a finding, the rest go on."""
    findings: list[Finding] = []
    for check in load_checks() if checks is None else checks:
        try:
            findings.extend(check(snapshot))
        except Exception as error:  # noqa: BLE001 - a broken check must not hide the others
            name = f"{check.__module__.rsplit('.', 1)[-1]}.{check.__name__}"
            findings.append(
                make_finding(
                    "check.crashed",
                    Cause.COLLECTION_FAILED,
                    Layer.PROBE,
                    Severity.WARNING,
                    params={"check": name, "error": f"{type(error).__name__}: {error}"},
                    evidence=(Evidence(label="check", value=name),),
                )
            )
    return findings


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


def diagnose(request: DiagnoseRequest, progress: Callable[[str], None] | None = None) -> Diagnosis:
    """Collect the facts of the target, check them, rank the findings, decide the verdict."""
    started = time.monotonic()
    snapshot = collect_snapshot(request.collect, progress)
    collected = time.monotonic()
    findings = rank_findings(run_checks(snapshot))
    checked = time.monotonic()
    return Diagnosis(
        verdict=decide_verdict(findings),
        findings=findings,
        snapshot=snapshot,
        target=dict(request.target),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        timings_ms={
            "collect": round((collected - started) * 1000, 1),
            "checks": round((checked - collected) * 1000, 1),
        },
        quick=request.quick,
    )


TOOL_VERSION = __version__
