"""The diagnosis: collect, check, rank, and reach a verdict. The one entry point of the core."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from fallback_doctor import __version__
from fallback_doctor.core.causes import Cause
from fallback_doctor.core.checks import Check, load_checks
from fallback_doctor.core.collect.run import CollectRequest, collect_snapshot, service_environment
from fallback_doctor.core.facts.inference import InferenceFacts
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity, rank_findings
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import LANGUAGES, make_finding, render_text


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
    inference_runs: int = 20
    """Timed runs per session in the test inference."""
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


def settle_findings(snapshot: EnvironmentSnapshot, findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Merge, drop what is superseded, rank; with a CPU configuration, make GPU findings information.

    The log's own finding is folded into a static finding of the same cause (its lines become
    evidence there). For a Bareun target the pip-package finding about a CPU-only build gives
    way to the libPath finding. When the configuration asks for the CPU, that finding comes
    first and every GPU-stack finding is kept, lowered to information, with a note saying why.
    """
    listed = list(findings)
    try:
        from fallback_doctor.core.checks.log import merge_log_findings
    except ImportError:  # pragma: no cover - the log checks are part of the package
        pass
    else:
        listed = [_unique_evidence(f) for f in merge_log_findings(listed)]
    target = snapshot.target
    ort = snapshot.onnxruntime
    if target is not None and target.lib_path and ort is not None and ort.package_dir == target.lib_path:
        listed = [f for f in listed if not f.id.startswith(_SUPERSEDED_BY_LIBPATH)]
    ranked = rank_findings(listed)
    if not any(f.cause == Cause.CPU_BY_CONFIGURATION for f in ranked):
        return ranked
    file = (target.config_path if target else None) or "?"
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


def describe_target(request: DiagnoseRequest, snapshot: EnvironmentSnapshot) -> dict[str, str]:
    """The report's description of the target: what was asked, completed with what was resolved."""
    described = dict(request.target)
    target = snapshot.target
    if target is None:
        return described
    described["kind"] = target.kind
    if target.kind != "python" and not target.python:
        described.pop("python", None)
    for key, value in (
        ("root", target.root),
        ("root_found_by", target.root_source),
        ("config", target.config_path),
        ("lib_path", target.lib_path),
        ("requested_provider", target.requested_provider),
        ("python", target.python),
        ("pid", str(snapshot.process.pid) if snapshot.process else None),
    ):
        if value:
            described[key] = value
    if target.log_paths:
        described["logs"] = ", ".join(target.log_paths)
    return described


def diagnose(request: DiagnoseRequest, progress: Callable[[str], None] | None = None) -> Diagnosis:
    """Collect the facts of the target, check them, rank the findings, decide the verdict.

    Raises TargetNotFound (core/targets/resolve.py) when a file named in the request is not there.
    """
    started = time.monotonic()
    snapshot = collect_snapshot(request.collect, progress)
    collected = time.monotonic()
    snapshot = dataclasses.replace(snapshot, inference=_test_inference(request, snapshot, progress))
    inferred = time.monotonic()
    findings = settle_findings(snapshot, run_checks(snapshot))
    checked = time.monotonic()
    return Diagnosis(
        verdict=decide_verdict(
            findings, gpu_ran=snapshot.inference is not None and snapshot.inference.gpu_verified
        ),
        findings=findings,
        snapshot=snapshot,
        target=describe_target(request, snapshot),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        timings_ms={
            "collect": round((collected - started) * 1000, 1),
            "inference": round((inferred - collected) * 1000, 1),
            "checks": round((checked - inferred) * 1000, 1),
        },
        quick=request.quick,
    )


def _test_inference(
    request: DiagnoseRequest, snapshot: EnvironmentSnapshot, progress: Callable[[str], None] | None
) -> InferenceFacts:
    """The CPU baseline and the GPU retry on the target's own ONNX Runtime, unless --quick.

    Only work launched on the GPU proves the GPU works: an import or a device list does not.
    """
    if request.quick:
        return InferenceFacts(skipped="--quick: the static inspection only; no test inference was run")
    # Imported here: the probe, the model reader and the sampler are not needed with --quick.
    from fallback_doctor.core.inference.findings import gpu_verified
    from fallback_doctor.core.inference.run import (
        PROVIDERS,
        InferenceSetupError,
        plan_inference,
        provider_key,
    )
    from fallback_doctor.core.inference.sampled import run_sampled_inference

    target = snapshot.target
    if target is None:
        return InferenceFacts(skipped="the target could not be resolved")
    if target.kind == "log":
        return InferenceFacts(skipped="a log-only target has no ONNX Runtime to run")
    if target.kind == "bareun" and not target.lib_path:
        return InferenceFacts(skipped="the configuration names no libPath, so there is no library to run")
    if target.kind != "bareun" and (snapshot.onnxruntime is None or snapshot.onnxruntime.package_dir is None):
        return InferenceFacts(skipped="ONNX Runtime is not installed in the target environment")
    service = snapshot.process.effective_environment() if snapshot.process is not None else None
    env = service_environment(request.collect.env, service)
    python = snapshot.python.executable if snapshot.python else request.collect.python
    try:
        plan = plan_inference(
            None, providers=PROVIDERS[provider_key(target.requested_provider)], runs=request.inference_runs
        )
    except InferenceSetupError as error:
        return InferenceFacts(skipped=str(error))
    if progress is not None:
        progress("inference")
    try:
        # Sampled: NVML for the GPU, psutil for the probe's CPU at 10 Hz, the phases marked live;
        # the series (or, without NVML, why there are no GPU readings) goes into the result.
        result = run_sampled_inference(target, plan, python=python, env=env)
    except InferenceSetupError as error:
        return InferenceFacts(skipped=str(error))
    flops = plan.info.matmul_flops(plan.request.dims)
    work = f", {flops / 1e9:.2f} GFLOPs per batch" if flops else ""
    return InferenceFacts(
        result=result,
        verdict=result.verdict.value,
        gpu_verified=gpu_verified(result),
        model_description=(
            f"{plan.model.name}: {len(plan.info.inputs)} inputs, {len(plan.info.nodes)} nodes{work}"
        ),
    )


TOOL_VERSION = __version__
