"""The FAQ's steps as a state machine over the report document (pure: no I/O, no probe).

A document starts with the static inspection (the configuration, the log and the stack, read in
one collection: :func:`fallback_doctor.core.views.text_report.static_document`). Each later step adds its
result to the document with :func:`apply_step`, which re-ranks the findings and re-decides the
verdict (core/judgement/judge.py, the only places that do). `diagnose` applies the GPU retry the same way
after its test inference, so after the wizard's last step its document is the one `diagnose`
prints. What each step adds, and where it goes in the document (docs/report-schema.md):

- ``cpu_baseline``: ``inference.cpu_baseline`` (the one CPU figure of the document);
- ``gpu_retry``: ``inference.gpu_retry`` (the probe's result: strategies, failure, phases),
  ``inference.verdict`` and ``inference.gpu_verified``, its findings in ``findings``, the sampled
  series in ``inference.series``; the retry's own CPU session fills ``cpu_baseline`` when no
  baseline was measured before;
- both: the end of each probe child's output in ``inference.probe_outputs``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.document.basics import checked, to_jsonable
from fallback_doctor.core.document.view import as_dict, as_list
from fallback_doctor.core.judgement.judge import (
    SettleContext,
    Verdict,
    decide_verdict,
    first_cause,
    role_of,
    settle_findings,
)
from fallback_doctor.core.language.texts import LANGUAGES, label
from fallback_doctor.core.model.result import Finding, finding_from_dict

STATIC_STEPS: tuple[str, ...] = ("configuration", "log", "stack")
"""Read by one collection (the static inspection, ``diagnose --quick``)."""
INFERENCE_STEPS: tuple[str, ...] = ("cpu_baseline", "gpu_retry")
STEPS: tuple[str, ...] = (*STATIC_STEPS, *INFERENCE_STEPS)
"""The FAQ's steps, in order."""

INFERENCE_FINDING_PREFIX = "inference."
"""The GPU retry's findings (core/readers/inference/findings.py): replaced when the retry runs again."""


@dataclass(frozen=True)
class StepOutcome:
    """What one test-inference step produced (JSON-ready; comes back from a step's child as is)."""

    step: str
    """"cpu_baseline" or "gpu_retry"."""
    result: dict[str, Any] | None = None
    """The probe's result (``ProbeResult.to_json()``), None when the step was skipped."""
    skipped: str | None = None
    """Why no test inference was run (no ONNX Runtime, no libPath …)."""
    skipped_words: dict[str, Any] | None = None
    """``skipped`` as catalogue words ``{id, params}`` where core said it so (None: shown as written)."""
    model: dict[str, Any] | None = None
    """The test model: name, path, nodes, dims, runs, warmup, description."""
    series: dict[str, Any] | None = None
    """The sampler's series of this step (GPU and CPU readings with phase marks), when sampled."""
    started: float | None = None
    """When the step started (seconds since the epoch)."""
    findings: tuple[Finding, ...] = field(default=())
    """The step's own findings (the GPU retry's, from core/readers/inference/findings.py)."""
    gpu_verified: bool = False
    verdict: str | None = None
    """The probe's verdict (gpu_active, fell_back_to_cpu, failed …)."""

    def to_json(self) -> dict[str, object]:
        """The outcome as a JSON-ready dict (findings in the document's shape)."""
        data: dict[str, object] = to_jsonable(self)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> StepOutcome:
        """Read an outcome back (what a step's child printed); a part of the wrong type reads as absent."""
        result, words, model, series = (data.get(k) for k in ("result", "skipped_words", "model", "series"))
        skipped, started, verdict = data.get("skipped"), data.get("started"), data.get("verdict")
        return cls(
            step=str(data["step"]),
            result=result if isinstance(result, dict) else None,
            skipped=skipped if isinstance(skipped, str) else None,
            skipped_words=words if isinstance(words, dict) else None,
            model=model if isinstance(model, dict) else None,
            series=series if isinstance(series, dict) else None,
            started=started if isinstance(started, int | float) and not isinstance(started, bool) else None,
            findings=tuple(finding_from_dict(f) for f in as_list(data.get("findings"))),
            gpu_verified=bool(data.get("gpu_verified")),
            verdict=verdict if isinstance(verdict, str) else None,
        )


def empty_inference(
    skipped: str | None = None, skipped_words: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The document's ``inference`` before any test inference (``skipped_words``: why not, as
    catalogue words ``{id, params}``, given only where core said it so)."""
    inference: dict[str, object] = {
        "skipped": skipped,
        "model": None,
        "cpu_baseline": None,
        "gpu_retry": None,
        "verdict": None,
        "gpu_verified": False,
        "series": None,
        "probe_outputs": [],
    }
    if skipped_words is not None:
        inference["skipped_words"] = skipped_words
    return inference


def settle_context(document: Mapping[str, object]) -> SettleContext:
    """What ranking needs from the document's environment (the same facts the snapshot gives)."""
    environment = as_dict(document.get("environment"))
    target = as_dict(environment.get("target"))
    ort = as_dict(environment.get("onnxruntime"))
    lib_path = target.get("lib_path")
    return SettleContext(
        ort_is_lib_path=bool(lib_path) and ort.get("package_dir") == lib_path,
        config_path=target.get("config_path"),
    )


def judge(document: dict[str, Any], findings: Sequence[Finding]) -> dict[str, Any]:
    """The document with ``findings`` settled and ranked, each with its declared role, the first
    cause named, and the verdict decided again (in place)."""
    ranked = settle_findings(findings, settle_context(document))
    gpu_ran = bool((document.get("inference") or {}).get("gpu_verified"))
    verdict = decide_verdict(ranked, gpu_ran=gpu_ran)
    document["findings"] = [_as_document(f, application_python(document)) for f in ranked]
    first = first_cause(ranked)
    document["first_cause"] = first.id if first is not None else None
    document["verdict"] = verdict.value
    document["verdict_text"] = verdict_texts(verdict)
    return checked(document)


def application_python(document: Mapping[str, object]) -> str | None:
    """The application's interpreter (the script's ``PY``): the target's, None for a native server."""
    target = document.get("target") or {}
    python = target.get("python") if isinstance(target, Mapping) else None
    return str(python) if python else None


def _as_document(finding: Finding, python: str | None) -> dict[str, object]:
    """A finding as the document holds it: with its declared role and its fix as a script."""
    from fallback_doctor.core.document.script import fix_script

    data: dict[str, Any] = {**to_jsonable(finding), "role": role_of(finding.id).value}
    for words in ("texts", "text"):  # a finding has one of the two (core/language/texts.py finding_words)
        if not data.get(words):
            data.pop(words, None)
    if isinstance(data.get("remediation"), dict):
        data["remediation"]["script"] = fix_script(data, "en", python)
    return data


def verdict_texts(verdict: Verdict | str) -> dict[str, str]:
    """The verdict in words, in every language (from the catalog)."""
    return {lang: label(f"verdict.{Verdict(verdict).value}", lang) for lang in LANGUAGES}


def apply_step(document: Mapping[str, Any], outcome: StepOutcome) -> dict[str, Any]:
    """A new document: ``outcome`` added where the schema puts it, then re-ranked and re-judged."""
    if outcome.step not in INFERENCE_STEPS:
        raise ValueError(f"unknown step {outcome.step!r} (one of {', '.join(INFERENCE_STEPS)})")
    new = copy.deepcopy(dict(document))
    inference = {**empty_inference(), **(new.get("inference") or {})}
    findings = [finding_from_dict(f) for f in new.get("findings") or ()]
    inference.pop("skipped_words", None)
    if outcome.skipped is not None and outcome.result is None:
        inference["skipped"] = outcome.skipped
        if outcome.skipped_words is not None:
            inference["skipped_words"] = outcome.skipped_words
    else:
        inference["skipped"] = None
        inference["model"] = outcome.model or inference.get("model")
        result = dict(outcome.result or {})
        outputs = [o for o in inference.get("probe_outputs") or () if o.get("step") != outcome.step]
        outputs += [
            {"step": outcome.step, "name": str(o.get("name")), "text": str(o.get("text"))}
            for o in result.pop("outputs", None) or ()
        ]
        inference["probe_outputs"] = outputs
        series = outcome.series or result.pop("series", None)
        result.pop("series", None)
        cpu = result.pop("cpu", None)
        if outcome.step == "cpu_baseline" or inference.get("cpu_baseline") is None:
            inference["cpu_baseline"] = _baseline(result, cpu, outcome.started, outcome.step)
        if outcome.step == "gpu_retry":
            inference["gpu_retry"] = {**result, "started": outcome.started}
            inference["verdict"] = outcome.verdict
            inference["gpu_verified"] = outcome.gpu_verified
            inference["series"] = series
            findings = [f for f in findings if not f.id.startswith(INFERENCE_FINDING_PREFIX)]
            findings.extend(outcome.findings)
            # Imported here: the static steps (diagnose --quick) need none of the inference's types.
            from fallback_doctor.core.readers.inference.tried import with_tried_evidence

            findings = with_tried_evidence(findings, inference["gpu_retry"])
    new["inference"] = inference
    steps = [s for s in new.get("steps") or () if s != outcome.step]
    new["steps"] = [s for s in STEPS if s in {*steps, outcome.step}]
    new["quick"] = not any(s in new["steps"] for s in INFERENCE_STEPS)
    return judge(new, findings)


def _baseline(
    result: Mapping[str, object], cpu: object, started: float | None, step: str
) -> dict[str, object]:
    """``inference.cpu_baseline``: the CPU session, the runtime it ran on, how its child failed."""
    return {
        "session": cpu if isinstance(cpu, dict) else None,
        "runtime": result.get("runtime"),
        "failure": result.get("failure"),
        "started": started,
        "measured_by": step,
    }


def baseline_of(outcome: StepOutcome) -> StepOutcome:
    """The CPU-baseline step of a probe run that measured both (`diagnose` runs one probe for both).

    The probe's first session is always the CPU baseline; its outputs, series and strategies stay
    with the GPU retry, so nothing is in the document twice.
    """
    result = {k: v for k, v in (outcome.result or {}).items() if k not in ("outputs", "series", "strategies")}
    return StepOutcome(
        step="cpu_baseline",
        result=result if outcome.result is not None else None,
        skipped=outcome.skipped,
        skipped_words=outcome.skipped_words,
        model=outcome.model,
        started=outcome.started,
    )


def apply_probe_run(document: Mapping[str, object], outcome: StepOutcome) -> dict[str, Any]:
    """A probe run that measured the CPU baseline and the GPU retry, applied as those two steps."""
    return apply_step(apply_step(document, baseline_of(outcome)), outcome)


def apply_inspection(previous: Mapping[str, Any] | None, static: Mapping[str, Any]) -> dict[str, object]:
    """The static inspection run again (check again): its facts, the test inference kept, re-judged."""
    new = copy.deepcopy(dict(static))
    if not previous or not previous.get("inference"):
        return new
    inference = copy.deepcopy(dict(previous["inference"]))
    static_inference = new.get("inference") or {}
    new["inference"] = {**inference, "skipped": static_inference.get("skipped")}
    new["inference"].pop("skipped_words", None)
    if static_inference.get("skipped_words") is not None:
        new["inference"]["skipped_words"] = static_inference["skipped_words"]
    kept = [
        finding_from_dict(f)
        for f in previous.get("findings") or ()
        if str(f.get("id", "")).startswith(INFERENCE_FINDING_PREFIX)
    ]
    findings = [finding_from_dict(f) for f in new.get("findings") or ()] + kept
    done = set(previous.get("steps") or ()) | set(new.get("steps") or ())
    new["steps"] = [s for s in STEPS if s in done]
    new["quick"] = not any(s in new["steps"] for s in INFERENCE_STEPS)
    return judge(new, findings)
