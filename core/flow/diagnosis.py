"""The diagnosis: collect, check, then the steps (core/flow/steps.py) rank and judge. The core's entry
point."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor import __version__
from fallback_doctor.core.document.basics import SCHEMA, SCHEMA_VERSION, checked, to_jsonable
from fallback_doctor.core.judgement.checks import Check, crashed_finding, load_checks
from fallback_doctor.core.judgement.judge import (
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    GPU_STACK_LAYERS,
    Verdict,
    decide_verdict,
    exit_code_for,
    settle_findings,
)
from fallback_doctor.core.model.result import Finding, finding_from_dict
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.run import CollectRequest, collect_snapshot
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import probe_of

__all__ = [
    "EXIT_OK",
    "EXIT_PROBLEM",
    "EXIT_USAGE",
    "GPU_STACK_LAYERS",
    "DiagnoseRequest",
    "Diagnosis",
    "Verdict",
    "decide_verdict",
    "diagnose",
    "exit_code_for",
    "inspect_target",
    "run_checks",
    "settle_findings",
]


@dataclass(frozen=True)
class DiagnoseRequest:
    """What to diagnose and how deeply."""

    collect: CollectRequest = field(default_factory=CollectRequest)
    quick: bool = False
    inference_runs: int = 20
    inference_steady: bool = True
    """The timed runs stop once the median is known within 2 % (``inference_runs`` the most)."""
    """Timed runs per session in the test inference."""
    inference_timeout_s: float | None = None
    """The bound of the whole test inference (None: 120 s, 900 s with TensorRT first)."""
    inference_model: str | None = None
    """The application's own .onnx model for the test inference (None: the bundled test encoder)."""
    inference_dims: dict[str, int] = field(default_factory=dict)
    """Values of the model's dynamic dimensions by name (``--dim batch=16``)."""
    target: dict[str, str] = field(default_factory=dict)
    """A description of the target for the report: kind, interpreter, paths."""


def run_checks(snapshot: EnvironmentSnapshot, checks: Iterable[Check] | None = None) -> list[Finding]:
    """Every check over the snapshot; a check that raises becomes a finding, the rest go on."""
    findings: list[Finding] = []
    for check in load_checks() if checks is None else checks:
        try:
            findings.extend(check(snapshot))
        except Exception as error:  # noqa: BLE001 - a broken check must not hide the others
            findings.append(crashed_finding(check, error))
    return findings


def describe_target(request: DiagnoseRequest, snapshot: EnvironmentSnapshot) -> dict[str, str]:
    """The report's description of the target: what was asked, completed with what was resolved."""
    described = dict(request.target)
    target = snapshot.target
    if target is None:
        return described
    described["kind"] = target.kind
    if probe_of(target.kind) != Probe.PYTHON and not target.python:
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
    if target.process is not None:
        from fallback_doctor.core.readers.targets.process import describe_process

        described.update({**describe_process(target.process), "python": target.python or ""})
        if not described["python"]:
            described.pop("python")
    return described


def inspect_target(
    request: DiagnoseRequest, progress: Callable[[str], None] | None = None
) -> tuple[dict[str, Any], EnvironmentSnapshot]:
    """The static inspection: collect, check, rank, judge; the document of ``diagnose --quick`` and its facts.

    Raises TargetNotFound (core/readers/targets/resolve.py) when a file named in the request is not there.
    """
    started = time.monotonic()
    snapshot = collect_snapshot(request.collect, progress)
    collected = time.monotonic()
    findings = run_checks(snapshot)
    checked = time.monotonic()
    return static_document(
        snapshot,
        findings,
        target=describe_target(request, snapshot),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        timings_ms={
            "collect": round((collected - started) * 1000, 1),
            "checks": round((checked - collected) * 1000, 1),
        },
        skipped=QUICK_SKIPPED if request.quick else None,
        skipped_words=QUICK_SKIPPED_WORDS if request.quick else None,
    ), snapshot


QUICK_SKIPPED = "--quick asks for the static inspection only"
QUICK_SKIPPED_WORDS: dict[str, Any] = {"id": "evidence.skip.quick", "params": {}}
"""QUICK_SKIPPED as catalogue words, shown in the reader's language."""


def diagnose(request: DiagnoseRequest, progress: Callable[[str], None] | None = None) -> Diagnosis:
    """The static inspection, then (unless --quick) the test inference applied as the GPU retry step.

    The same steps, applied the same way (core/flow/steps.py), as the wizard's.
    Raises TargetNotFound (core/readers/targets/resolve.py) when a file named in the request is not there.
    """
    document, snapshot = inspect_target(request, progress)
    if not request.quick:
        from fallback_doctor.core.flow.step_run import ProbeSettings, gpu_retry_for_snapshot
        from fallback_doctor.core.flow.steps import apply_probe_run

        started = time.monotonic()
        settings = ProbeSettings(
            runs=request.inference_runs,
            steady=request.inference_steady,
            timeout_s=request.inference_timeout_s,
            model=request.inference_model,
            dims=dict(request.inference_dims),
        )
        outcome = gpu_retry_for_snapshot(snapshot, request.collect, settings, progress)
        document = apply_probe_run(document, outcome)
        document["timings_ms"]["inference"] = round((time.monotonic() - started) * 1000, 1)
    return Diagnosis(document=checked(document), snapshot=snapshot)


@dataclass(frozen=True)
class Diagnosis:
    """The result of one diagnosis: the report document and the facts behind it."""

    document: dict[str, Any]
    snapshot: EnvironmentSnapshot

    @property
    def verdict(self) -> Verdict:
        """The document's verdict."""
        return Verdict(self.document["verdict"])

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The document's findings, ranked, as typed findings."""
        return tuple(finding_from_dict(f) for f in self.document["findings"])

    @property
    def target(self) -> dict[str, str]:
        """The report's description of the target."""
        return dict(self.document.get("target") or {})

    @property
    def created(self) -> str:
        """When the diagnosis was made (ISO 8601, UTC)."""
        return str(self.document.get("created") or "")

    @property
    def quick(self) -> bool:
        """Whether only the static inspection ran."""
        return bool(self.document.get("quick"))


TOOL_VERSION = __version__


def static_document(
    snapshot: EnvironmentSnapshot,
    findings: Iterable[Finding],
    *,
    target: Mapping[str, str],
    created: str,
    timings_ms: Mapping[str, float],
    skipped: str | None = None,
    skipped_words: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The document of the static inspection (configuration, log, stack), ranked and judged.

    The test inference is added by the steps (core/flow/steps.py ``apply_step``), never here.
    """
    from fallback_doctor.core.flow.steps import STATIC_STEPS, empty_inference, judge

    environment = to_jsonable(snapshot)
    environment.pop("inference", None)  # one place for the test inference: the document's own
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool_version": TOOL_VERSION,
        "created": created,
        "target": dict(target),
        "quick": True,
        "steps": list(STATIC_STEPS),
        "verdict": "no_problem_found",
        "verdict_text": {},
        "findings": [],
        "environment": environment,
        "inference": empty_inference(skipped, skipped_words),
        "timings_ms": dict(timings_ms),
    }
    return judge(document, list(findings))


def diagnosis_document(diagnosis: Any) -> dict[str, Any]:
    """The versioned report document of a diagnosis (what ``diagnose --json`` prints)."""
    return checked(dict(diagnosis.document))
