"""Running the test-inference steps: the CPU baseline and the GPU retry, as :class:`StepOutcome` values.

`diagnose` (core/flow/diagnosis.py) and the wizard's step child (core/flow/step_child.py) both come here;
what an outcome adds to the document is core/flow/steps.py's ``apply_step``. By hand:
``fallback-doctor test-inference --json``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fallback_doctor.core.flow.steps import StepOutcome
from fallback_doctor.core.platform.frozen import default_python
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import find_profile, probe_of

if TYPE_CHECKING:
    from fallback_doctor.core.model.facts.target import TargetFacts
    from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
    from fallback_doctor.core.readers.collect.run import CollectRequest
    from fallback_doctor.core.readers.inference.result import ProbeRequest, ProbeResult
    from fallback_doctor.core.readers.inference.run import InferencePlan

PhaseListener = Callable[[str, str, float, bool | None], None]


@dataclass(frozen=True)
class ProbeSettings:
    """How much the test inference measures (the wizard measures less: the technician is waiting)."""

    runs: int = 20
    """The most timed runs per session (exactly this many when ``steady`` is False)."""
    warmup: int = 3
    threads: int = 2
    steady: bool = True
    """Stop the timed runs once the median is known within 2 % (ProbeRequest.steady)."""
    dims: dict[str, int] = field(default_factory=dict)
    """Values of the model's dynamic dimensions by name (``--dim``); the rest get a default."""
    model: str | None = None
    """The application's own .onnx model (``--model``); None: the bundled test encoder."""
    model_source: str = "given"
    """Where ``model`` came from: "given" (--model, the wizard's field), or seen in the running
    process, "cmdline" or "open_file" (core/readers/inference/model_seen.py)."""
    timeout_s: float | None = None
    """None: the probe's own default (longer for TensorRT)."""


WIZARD_SETTINGS = ProbeSettings(runs=10, warmup=2, timeout_s=120.0)


def skip_reason(
    target: TargetFacts | None, ort_installed: bool | None, python_read: bool = True
) -> str | None:
    """Why no test inference can run on this target, or None when one can.

    ``python_read`` False: the application's package listing failed, so whether ONNX Runtime is
    installed is unknown (never said to be "not installed")."""
    if target is None:
        return "the target could not be resolved"
    profile = find_profile(target.kind)
    probe = profile.probe if profile is not None else Probe.PYTHON
    if profile is not None and (probe is None or (probe == Probe.LIBRARY and not target.lib_path)):
        return profile.no_probe
    if probe == Probe.LIBRARY:
        return None
    if not python_read:
        return (
            "the application's Python could not be inspected (its package listing failed), "
            "so where ONNX Runtime is, and whether it is installed at all, is unknown"
        )
    if ort_installed is False:
        return "ONNX Runtime is not installed in the target environment"
    return None


def gpu_retry_for_snapshot(
    snapshot: EnvironmentSnapshot,
    collect: CollectRequest,
    settings: ProbeSettings,
    progress: Callable[[str], None] | None = None,
) -> StepOutcome:
    """`diagnose`'s test inference: the CPU baseline and the GPU retry in one sampled probe run.

    Only work launched on the GPU proves the GPU works: an import or a device list does not.
    """
    from fallback_doctor.core.readers.collect.environment import service_environment

    ort = snapshot.onnxruntime
    installed = ort is not None and ort.package_dir is not None
    reason = skip_reason(snapshot.target, installed, python_read=snapshot.python is not None)
    if reason is not None or snapshot.target is None:
        return StepOutcome(step="gpu_retry", skipped=reason)
    service = snapshot.process.effective_environment() if snapshot.process is not None else None
    env = service_environment(collect.env, service)
    python = snapshot.python.executable if snapshot.python else collect.python
    settings = with_process_model(snapshot, settings)
    if progress is not None:
        from fallback_doctor.core.readers.inference.run import (
            PROVIDERS,
            inference_notice,
            provider_key,
            whole_timeout,
        )

        progress("inference")
        providers = PROVIDERS[provider_key(snapshot.target.requested_provider)]
        timeout = whole_timeout(providers, settings.timeout_s)
        progress("inference: " + inference_notice(snapshot.target, timeout))
    return run_inference_step(snapshot.target, python, env, gpu=True, settings=settings, sampled=True)


def with_process_model(snapshot: EnvironmentSnapshot, settings: ProbeSettings) -> ProbeSettings:
    """``settings`` with the model the running process names or holds, when none was given."""
    process = snapshot.process
    if settings.model or process is None or not process.pid or process.error:
        return settings
    from fallback_doctor.core.readers.inference.model_seen import models_seen

    seen = models_seen(process.pid, process.cmdline)
    if not seen:
        return settings
    return dataclasses.replace(settings, model=seen[0].path, model_source=seen[0].where)


def run_inference_step(
    target: TargetFacts,
    python: str,
    env: Mapping[str, str],
    *,
    gpu: bool,
    settings: ProbeSettings,
    sampled: bool = False,
    on_phase: PhaseListener | None = None,
    on_start: Callable[[int], None] | None = None,
) -> StepOutcome:
    """One test-inference step on the target's own ONNX Runtime: the CPU baseline, or with the GPU retry.

    ``sampled``: a sampler (NVML, psutil) runs beside the probe and its series comes back with the
    result (`diagnose`); the wizard samples in its own process for the live graph instead.
    """
    from fallback_doctor.core.readers.inference.findings import gpu_verified, inference_findings
    from fallback_doctor.core.readers.inference.run import InferenceSetupError, run_inference

    step = "gpu_retry" if gpu else "cpu_baseline"
    started = time.time()
    try:
        plan, not_run = _plan(target, settings, gpu)
        if sampled:
            from fallback_doctor.core.readers.inference.sampled import run_sampled_inference

            result = run_sampled_inference(
                target, plan, python=python, env=env, timeout_s=settings.timeout_s, on_phase=on_phase
            )
        elif gpu or probe_of(target.kind) == Probe.LIBRARY:
            result = run_inference(
                target,
                plan,
                python=python,
                env=env,
                timeout_s=settings.timeout_s,
                on_phase=on_phase,
                on_start=on_start,
            )
        else:
            result = _cpu_only(plan.request, python, env, settings, on_phase, on_start)
    except InferenceSetupError as error:
        return StepOutcome(step=step, skipped=str(error), started=started)
    verified = bool(gpu and gpu_verified(result))
    return StepOutcome(
        step=step,
        result=result.to_json(),
        model=model_summary(plan, settings.model_source, not_run),
        started=started,
        findings=tuple(inference_findings(result)) if gpu else (),
        gpu_verified=verified,
        verdict=result.verdict.value if gpu else None,
    )


def _plan(target: TargetFacts, settings: ProbeSettings, gpu: bool) -> tuple[InferencePlan, str | None]:
    """The plan, and None; or, when the model seen in the running process cannot be run, the bundled
    encoder's plan and why that model was not run (a model given by the technician is an error)."""
    from fallback_doctor.core.readers.inference.run import (
        PROVIDERS,
        InferenceSetupError,
        plan_inference,
        provider_key,
    )

    def make(model: str | None) -> InferencePlan:
        plan = plan_inference(
            Path(model) if model else None,
            dims=dict(settings.dims),
            providers=PROVIDERS[provider_key(target.requested_provider)],
            runs=settings.runs,
            warmup=settings.warmup,
            threads=settings.threads,
            steady=settings.steady,
        )
        return dataclasses.replace(plan, request=dataclasses.replace(plan.request, gpu_retry=gpu, strict=gpu))

    try:
        return make(settings.model), None
    except InferenceSetupError as error:
        if not settings.model or settings.model_source == "given":
            raise
        return make(None), str(error)


def model_summary(
    plan: InferencePlan, source: str = "given", not_run: str | None = None
) -> dict[str, object]:
    """The report's ``inference.model``: which model and where it came from ("bundled", "given",
    "cmdline", "open_file"), each dynamic dimension's value and source; ``not_run``: why the model
    seen in the running process gave way to the bundled encoder."""
    from fallback_doctor.core.readers.inference.run import bundled_model

    flops = plan.info.matmul_flops(plan.request.dims)
    work = f", {flops / 1e9:.2f} GFLOPs per batch" if flops else ""
    bundled = plan.model == bundled_model().resolve()
    return {
        "name": plan.model.name,
        "path": str(plan.model),
        "bundled": bundled,
        "source": "bundled" if bundled else source,
        "seen_not_run": not_run,
        "nodes": len(plan.info.nodes),
        "inputs": len(plan.info.inputs),
        "dims": dict(plan.request.dims),
        "dims_used": [{"name": c.name, "value": c.value, "source": c.source} for c in plan.inputs.choices],
        "shapes": {name: list(shape) for name, shape in plan.inputs.shapes.items()},
        "runs": plan.request.runs,
        "warmup": plan.request.warmup,
        "description": f"{plan.model.name}: {len(plan.info.inputs)} inputs, "
        f"{len(plan.info.nodes)} nodes{work}",
    }


def _cpu_only(
    request: ProbeRequest,
    python: str,
    env: Mapping[str, str],
    settings: ProbeSettings,
    on_phase: PhaseListener | None,
    on_start: Callable[[int], None] | None,
) -> ProbeResult:
    """The CPU baseline of a Python application: the "as is" strategy only, no GPU session."""
    from fallback_doctor.core.readers.inference.python_probe import run_python_probe
    from fallback_doctor.core.readers.inference.result import StrategyName

    return run_python_probe(
        python,
        request,
        env=env,
        timeout_s=settings.timeout_s,
        strategies=(StrategyName.AS_IS,),
        on_phase=on_phase,
        on_start=on_start,
    )


def wizard_step(
    target: TargetFacts,
    python: str | None,
    *,
    gpu: bool,
    settings: ProbeSettings = WIZARD_SETTINGS,
    on_phase: PhaseListener | None = None,
    progress: Callable[[str], None] | None = None,
) -> StepOutcome:
    """The wizard's CPU baseline or GPU retry (its child runs this with the technician's environment).

    ``progress`` hears "inference: <words>" before the probe starts (the wizard shows them as they are).
    """
    env = dict(os.environ)
    chosen = python or target.python or default_python()
    reason = skip_reason(target, None)
    if reason is not None:
        return StepOutcome(step="gpu_retry" if gpu else "cpu_baseline", skipped=reason)
    if progress is not None:
        progress("inference")
    return run_inference_step(target, chosen, env, gpu=gpu, settings=settings, on_phase=on_phase)
