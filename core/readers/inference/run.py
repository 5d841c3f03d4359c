"""Run the test inference for a resolved target: the model, the request, the right probe.

A Python target runs the self-contained probe under the application's interpreter; a
native target (Bareun) drives the ONNX Runtime library in its libPath through the C API.
`fallback-doctor test-inference` and `fallback-doctor diagnose` (without --quick) share this.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.platform.resource_files import RESOURCES
from fallback_doctor.core.readers.inference.model_info import ModelInfo, read_model
from fallback_doctor.core.readers.inference.model_inputs import InputPlan, InputsTooLargeError, plan_inputs
from fallback_doctor.core.readers.inference.protobuf_wire import ModelReadError
from fallback_doctor.core.readers.inference.result import ProbeRequest, ProbeResult
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import probe_of

PROVIDERS: dict[str, tuple[str, ...]] = {
    "cuda": ("CUDAExecutionProvider", "CPUExecutionProvider"),
    "tensorrt": ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"),
}

DEFAULT_TIMEOUT_S = 120.0
"""The whole test inference (every strategy, the CPU baseline and the GPU retry) ends within this."""
TENSORRT_TIMEOUT_S = 900.0
"""Building a TensorRT engine can take minutes: the TensorRT attempt gets a longer timeout."""


def whole_timeout(plan_providers: tuple[str, ...], timeout_s: float | None) -> float:
    """The bound of the whole test inference: as asked, else the default for the first provider."""
    if timeout_s:
        return float(timeout_s)
    tensorrt = bool(plan_providers) and plan_providers[0].startswith("Tensorrt")
    return TENSORRT_TIMEOUT_S if tensorrt else DEFAULT_TIMEOUT_S


def inference_notice(target: TargetFacts, timeout_s: float) -> str:
    """What the technician is told before the test inference starts: whose code runs, and how long."""
    if probe_of(target.kind) == Probe.LIBRARY:
        what = f"loads the application's own ONNX Runtime library ({target.lib_path}) in a child process"
    else:
        what = f"imports the application's onnxruntime with its own interpreter ({target.python})"
    return (
        f"the test inference now {what}: the application's code runs, as this user, "
        f"for at most {timeout_s:.0f} s (--inference-timeout SECONDS to allow more)"
    )


class InferenceSetupError(ValueError):
    """The test inference cannot be set up as asked (a model that cannot be read or run, no libPath)."""


@dataclass(frozen=True)
class InferencePlan:
    """What will run: the model, its description, and the probe request."""

    model: Path
    info: ModelInfo
    request: ProbeRequest
    inputs: InputPlan
    """Every input's shape and each dynamic dimension's value with where it came from."""


def bundled_model() -> Path:
    """The bundled test encoder (resources/model/encoder.onnx)."""
    return Path(str(RESOURCES.joinpath("model", "encoder.onnx")))


def model_description(model: Path) -> dict[str, Any]:
    """The description JSON beside a model (``encoder.json`` for ``encoder.onnx``), or {}."""
    try:
        data = json.loads(read_regular_text(model.with_suffix(".json"), 1024 * 1024))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def provider_key(requested: str | None, override: str | None = None) -> str:
    """Which GPU provider to try: the override, TensorRT when the target asks for it, else CUDA."""
    if override:
        return override
    return "tensorrt" if requested == "tensorrt" else "cuda"


def plan_inference(
    model: Path | None,
    *,
    dims: Mapping[str, int] | None = None,
    providers: tuple[str, ...] = PROVIDERS["cuda"],
    runs: int = 20,
    warmup: int = 3,
    threads: int = 2,
    steady: bool = False,
) -> InferencePlan:
    """Read the model and build the probe request; dynamic dims from ``dims``, the description, names.

    Raises InferenceSetupError, naming the file, for a model that cannot be read, fed or allocated.
    """
    path = (model or bundled_model()).resolve()
    if not path.is_file():
        raise InferenceSetupError(f"{path}: no such model file")
    try:
        info = read_model(path)
    except ModelReadError as error:
        raise InferenceSetupError(f"{path}: not an ONNX model this tool can read ({error})") from None
    problems = info.unrunnable()
    if problems:
        raise InferenceSetupError(
            f"{path}: cannot be run with generated inputs: "
            + "; ".join(problems)
            + ". Use the bundled test model or a model with numeric tensor inputs."
        )
    description = model_description(path)
    defaults = description.get("dims") if isinstance(description.get("dims"), dict) else None
    try:
        inputs = plan_inputs(info, dict(dims or {}), defaults)
    except InputsTooLargeError as error:
        raise InferenceSetupError(str(error)) from None
    resolved = {choice.name: choice.value for choice in inputs.choices}
    for name, value in (dims or {}).items():
        resolved.setdefault(name, int(value))
    ranges: dict[str, tuple[int, int]] = {}
    raw_ranges = description.get("input_ranges")
    if isinstance(raw_ranges, dict):
        for name, pair in raw_ranges.items():
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int) for v in pair):
                ranges[str(name)] = (pair[0], pair[1])
    request = ProbeRequest(
        model=str(path),
        runs=runs,
        steady=steady,
        warmup=warmup,
        dims=resolved,
        shapes={name: list(shape) for name, shape in inputs.shapes.items()},
        providers=providers,
        threads=threads,
        input_ranges=ranges,
    )
    return InferencePlan(model=path, info=info, request=request, inputs=inputs)


def run_inference(
    target: TargetFacts,
    plan: InferencePlan,
    *,
    python: str,
    env: Mapping[str, str],
    timeout_s: float | None = None,
    lib_dirs: Sequence[str] | None = None,
    on_phase: Callable[[str, str, float, bool | None], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ProbeResult:
    """Run the CPU baseline and the GPU retry on the target's own ONNX Runtime.

    ``on_phase`` hears each probe phase live (name, "start" | "end", wall-clock time, ok);
    ``on_start`` each probe child's PID as soon as it runs.

    By hand, for a Python application: ``python -c "import onnxruntime as o; s =
    o.InferenceSession('model.onnx', providers=['CUDAExecutionProvider']); print(s.get_providers())"``.
    """
    timeout = whole_timeout(plan.request.providers, timeout_s)
    if probe_of(target.kind) == Probe.LIBRARY:
        if not target.lib_path:
            raise InferenceSetupError("the Bareun configuration names no libPath: nothing to test")
        from fallback_doctor.core.readers.inference.capi import run_capi_probe

        library = target.lib_ort.core_library if target.lib_ort and target.lib_ort.core_library else None
        return run_capi_probe(
            library or target.lib_path,
            plan.request.model,
            plan.request.to_json(),
            env,
            timeout,
            on_phase=on_phase,
            on_start=on_start,
        )
    from fallback_doctor.core.readers.inference.python_probe import run_python_probe

    return run_python_probe(
        python,
        plan.request,
        env=env,
        timeout_s=timeout,
        lib_dirs=lib_dirs,
        on_phase=on_phase,
        on_start=on_start,
    )
