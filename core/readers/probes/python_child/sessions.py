"""The probe's sessions: the CPU baseline, the GPU retry, the strict run, what the runtime is."""

from __future__ import annotations

import os
import time
from types import ModuleType
from typing import Any, Dict, List, Optional, Set, Tuple

from .capture import _OPEN_PHASES, important_lines, mapped_libraries, phase_end, phase_start, test_misbehave
from .common import _GPU_PROVIDERS, _NUMPY_TYPES, Request
from .inputs import compare, digest, gpu_memory, make_inputs, provider_arg, save_baseline, timed_runs
from .ort_now import (
    ep_devices,
    install_logger_callback,
    log_mark,
    log_since,
    placement,
    plugin_eps,
    session_options,
)


def create_session(
    ort: ModuleType, model: str, so: object, providers: List[Any]
) -> Tuple[Any, Optional[str]]:
    """Create a session; returns (session or None, error text or None)."""
    try:
        return ort.InferenceSession(model, sess_options=so, providers=providers), None
    except Exception as error:  # noqa: BLE001 (ONNX Runtime raises many types)
        return None, "%s: %s" % (type(error).__name__, error)


def grade_failure(
    text: str, mapped_before: Optional[Set[str]], mapped_after: Optional[Set[str]], gpu_providers: List[str]
) -> str:
    """The furthest stage reached when the GPU provider is not active, from the log and the maps."""
    newly = (mapped_after or set()) - (mapped_before or set())
    provider_libs = [
        n for n in (mapped_after or set()) if n.startswith("libonnxruntime_providers_") and "shared" not in n
    ]
    loaded = any(
        ("providers_" + p.replace("ExecutionProvider", "").lower()) in n
        for n in provider_libs
        for p in gpu_providers
    )
    if "Failed to load library" in text or "cannot open shared object file" in text:
        return "runtime_loaded"
    if loaded:
        return "libraries_loaded"
    del newly
    return "runtime_loaded"


def run_cpu(
    ort: ModuleType, np: ModuleType, request: Request, result: Dict[str, Any], model: str
) -> Tuple[Optional[Dict[str, object]], Optional[List[str]], object]:
    """The CPU baseline: CPU provider, warm-up, timed runs, digests."""
    mark = log_mark()
    phase_start("cpu.session")
    begin = time.perf_counter()
    session, error = create_session(ort, model, session_options(ort, request, True), ["CPUExecutionProvider"])
    create_s = time.perf_counter() - begin
    phase_end(session is not None)
    log = log_since(mark)
    cpu: Dict[str, object] = {
        "requested_providers": ["CPUExecutionProvider"],
        "session_create_s": create_s,
        "ort_messages": important_lines(log),
    }
    if session is None:
        cpu.update({"stage": "runtime_loaded", "verdict": "failed", "error": error})
        result["cpu"] = cpu
        return None, None, None
    cpu["active_providers"] = list(session.get_providers())
    cpu["nodes_per_provider"], cpu["nodes_source"], cpu["placement"] = placement(session, log)
    feeds, described = make_inputs(np, session.get_inputs(), request)
    result["model"]["inputs"] = described
    result["model"]["outputs"] = [
        {
            "name": o.name,
            "dtype": _NUMPY_TYPES.get(o.type, o.type),
            "shape": [d if isinstance(d, (int, str)) else None for d in (o.shape or [])],
        }
        for o in session.get_outputs()
    ]
    batch = described[0]["resolved_shape"][0] if described and described[0]["resolved_shape"] else None
    result["model"]["batch_size"] = batch
    stats, outputs = timed_runs(
        ort,
        np,
        session,
        feeds,
        int(request.get("warmup", 3)),
        int(request.get("runs", 20)),
        "cpu",
        batch,
        bool(request.get("steady")),
    )
    names = [o.name for o in session.get_outputs()]
    cpu.update(
        {
            "stage": "session_created",
            "verdict": "not_run",
            "latency": stats,
            "outputs": [digest(np, n, v) for n, v in zip(names, outputs)],  # noqa: B905
        }
    )
    result["cpu"] = cpu
    save_baseline(np, request.get("baseline_dir"), names, outputs)
    return feeds, names, outputs


def gpu_session(
    ort: ModuleType, request: Request, model: str, providers: List[str]
) -> Tuple[Any, Optional[str], float]:
    """The "gpu.session" phase: the session with the GPU provider(s), ORT's default log at VERBOSE."""
    phase_start("gpu.session")
    test_misbehave(request.get("test_mode"), "gpu.session")
    try:
        ort.set_default_logger_severity(0)
    except Exception:  # noqa: BLE001
        pass
    begin = time.perf_counter()
    session, error = create_session(
        ort, model, session_options(ort, request, True), provider_arg(request, providers)
    )
    seconds = time.perf_counter() - begin
    try:
        ort.set_default_logger_severity(2)
    except Exception:  # noqa: BLE001
        pass
    phase_end(session is not None)
    return session, error, seconds


def compare_with_baseline(
    np: ModuleType,
    request: Request,
    names: List[str],
    outputs: object,
    baseline: Optional[Tuple[Any, Any]],
) -> Dict[str, object]:
    """The GPU outputs against the CPU baseline's, or why there is no comparison."""
    atol = float(request.get("tolerance_abs", 1e-3))
    rtol = float(request.get("tolerance_rel", 1e-3))
    if baseline is not None:
        return compare(np, names, outputs, baseline[1], atol, rtol)
    return {
        "equal": False,
        "bitwise_equal": False,
        "max_abs_diff": None,
        "max_rel_diff": None,
        "tolerance_abs": atol,
        "tolerance_rel": rtol,
        "detail": "no CPU baseline to compare with",
    }


def run_gpu(
    ort: ModuleType,
    np: ModuleType,
    request: Request,
    result: Dict[str, Any],
    model: str,
    feeds: Optional[Dict[str, object]],
    baseline: Optional[Tuple[Any, Any]],
) -> Dict[str, object]:
    """The GPU retry: GPU provider(s) then CPU, VERBOSE creation log, placement, strict run, compare."""
    providers = list(request.get("providers") or ["CUDAExecutionProvider", "CPUExecutionProvider"])
    wanted_gpu = [p for p in providers if p in _GPU_PROVIDERS]
    gpu: Dict[str, object] = {"requested_providers": providers}
    mark = log_mark()
    mapped_before = mapped_libraries()
    session, error, gpu["session_create_s"] = gpu_session(ort, request, model, providers)
    log = log_since(mark)
    mapped_after = mapped_libraries()
    messages = important_lines(log)
    gpu["ort_messages"] = messages
    result["log_excerpt"].extend(messages)
    if session is None:
        gpu.update(
            {
                "verdict": "failed",
                "error": error,
                "stage": grade_failure(log + (error or ""), mapped_before, mapped_after, wanted_gpu),
            }
        )
        return gpu
    active = list(session.get_providers())
    gpu["active_providers"] = active
    nodes, gpu["nodes_source"], gpu["placement"] = placement(session, log)
    gpu["nodes_per_provider"] = nodes
    on_gpu = [p for p in active if p in _GPU_PROVIDERS]
    if on_gpu:
        gpu["stage"] = "session_created"
    else:
        gpu["stage"] = grade_failure(log, mapped_before, mapped_after, wanted_gpu)
    if feeds is None:
        feeds, described = make_inputs(np, session.get_inputs(), request)
        result["model"]["inputs"] = described
        batch = described[0]["resolved_shape"][0] if described and described[0]["resolved_shape"] else None
        result["model"]["batch_size"] = batch
    batch = result["model"].get("batch_size")
    # A session the GPU provider did not join runs on the CPU: one run shows it answers (and gives
    # the outputs to compare); timing it again would only measure the CPU baseline a second time.
    warmup, runs = (int(request.get("warmup", 3)), int(request.get("runs", 20))) if on_gpu else (0, 1)
    try:
        stats, outputs = timed_runs(
            ort, np, session, feeds, warmup, runs, "gpu", batch, bool(request.get("steady"))
        )
    except Exception as run_error:  # noqa: BLE001
        if _OPEN_PHASES:
            phase_end(False)
        gpu["error"] = "%s: %s" % (type(run_error).__name__, run_error)
        gpu["verdict"] = "failed"
        gpu["ort_messages"] = messages + important_lines(log_since(mark))
        return gpu
    names = [o.name for o in session.get_outputs()]
    gpu["latency"] = stats
    gpu["outputs"] = [digest(np, n, v) for n, v in zip(names, outputs)]  # noqa: B905
    gpu_nodes = sum(count for provider, count in nodes.items() if provider in _GPU_PROVIDERS)
    if on_gpu and (gpu_nodes > 0 or not nodes):
        gpu["stage"] = "inference_on_gpu"
        gpu["verdict"] = "gpu_active"
    else:
        gpu["verdict"] = "fell_back_to_cpu"
    gpu["comparison"] = compare_with_baseline(np, request, names, outputs, baseline)
    gpu["gpu_memory"] = gpu_memory(os.getpid())
    del session
    if request.get("strict", True) and wanted_gpu:
        gpu["strict"], strict_lines = run_strict(ort, request, model, providers)
        result["log_excerpt"].extend(line for line in strict_lines if line not in result["log_excerpt"])
    return gpu


def run_strict(
    ort: ModuleType, request: Request, model: str, providers: List[str]
) -> Tuple[Dict[str, object], List[str]]:
    """A session with session.disable_cpu_ep_fallback = 1: a fallback becomes ONNX Runtime's error."""
    phase_start("gpu.strict")
    mark = log_mark()
    strict_providers = [p for p in providers if p != "CPUExecutionProvider"]
    session, error = create_session(
        ort, model, session_options(ort, request, False, strict=True), provider_arg(request, strict_providers)
    )
    phase_end(session is not None)
    log = log_since(mark)
    created = session is not None
    if session is not None:
        active = list(session.get_providers())
        if not any(p in _GPU_PROVIDERS for p in active):
            created = False
            error = "the strict session was created without a GPU provider: %s" % active
    lines = important_lines(log)
    if error is None and session is None:
        error = lines[-1] if lines else None
    ep_errors = [line for line in lines if line.startswith("EP Error")]
    if session is None and ep_errors and error and "Conflicting session configuration" in error:
        # Python retried on the CPU alone after the GPU provider failed, which the strict key forbids:
        # the provider's own error comes first.
        error = "%s (then: %s)" % (ep_errors[0], error)
    out: Dict[str, object] = {"attempted": True, "session_created": created, "error": error}
    return out, lines


def describe_runtime(ort: ModuleType, runtime: Dict[str, object], notes: List[str]) -> None:
    """Where the log is read from, get_device(), get_ep_devices() and the plugin providers."""
    runtime["log_source"] = install_logger_callback(ort)
    try:
        runtime["get_device"] = str(ort.get_device())
    except Exception:  # noqa: BLE001
        runtime["get_device"] = None
    runtime["ep_devices"] = ep_devices(ort) or []
    build_info = runtime.get("build_info")
    runtime["plugin_eps"], plugin_notes = plugin_eps(ort, build_info if isinstance(build_info, str) else None)
    notes.extend(plugin_notes)
