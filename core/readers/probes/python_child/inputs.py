"""Inputs, outputs and statistics: shapes, generated inputs, digests, comparison, timed runs."""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple, TypedDict, Union

from probe_shared import latency  # type: ignore[import-not-found]

from .capture import phase_end, phase_start
from .common import _NUMPY_TYPES, Request, UnusableModelError


class InputDescription(TypedDict):
    """One declared input: its name, numpy dtype, declared dims (None where symbolic and unnamed)
    and the concrete dims the probe fed."""

    name: str
    dtype: str
    shape: List[Optional[Union[int, str]]]
    resolved_shape: List[int]


def resolve_shape(shape: List[Any], request: Request, name: Optional[str] = None) -> List[int]:
    """Concrete dims: the parent's request["shapes"][name] where it has the input at this rank; else
    symbolic names from request["dims"], unknown ones request["default_dim"]."""
    planned = (request.get("shapes") or {}).get(name) if name is not None else None
    if isinstance(planned, list) and len(planned) == len(shape):
        return [int(dim) for dim in planned]
    dims = request.get("dims") or {}
    default = int(request.get("default_dim") or 1)
    out: List[int] = []
    for dim in shape:
        if isinstance(dim, int) and dim >= 0:
            out.append(dim)
        elif isinstance(dim, str) and dim in dims:
            out.append(int(dims[dim]))
        else:
            out.append(default)
    return out


def make_inputs(
    np: ModuleType, session_inputs: List[Any], request: Request
) -> Tuple[Dict[str, object], List[InputDescription]]:
    """Deterministic input data for every declared input (same seed: same data in every child)."""
    feeds: Dict[str, object] = {}
    described: List[InputDescription] = []
    ranges = request.get("input_ranges") or {}
    seed = int(request.get("seed") or 0)
    for index, arg in enumerate(session_inputs):
        dtype = _NUMPY_TYPES.get(arg.type)
        if dtype is None:
            raise UnusableModelError(
                "input %r has type %s; the probe can only generate numeric and boolean tensors"
                % (arg.name, arg.type)
            )
        shape = resolve_shape(list(arg.shape or []), request, arg.name)
        rng = np.random.default_rng(seed + index)
        lowered = arg.name.lower()
        if dtype == "bool":
            data = np.ones(shape, dtype=bool)
        elif dtype.startswith("float"):
            data = rng.standard_normal(shape).astype(dtype)
        else:
            if arg.name in ranges:
                low, high = ranges[arg.name]
                data = rng.integers(int(low), int(high), size=shape).astype(dtype)
            elif "mask" in lowered:
                data = np.ones(shape, dtype=dtype)
            elif "type" in lowered or "segment" in lowered:
                data = np.zeros(shape, dtype=dtype)
            else:
                data = rng.integers(0, 100, size=shape).astype(dtype)
        feeds[arg.name] = data
        described.append(
            {
                "name": arg.name,
                "dtype": dtype,
                "shape": [d if isinstance(d, (int, str)) else None for d in (arg.shape or [])],
                "resolved_shape": shape,
            }
        )
    return feeds, described


def digest(np: ModuleType, name: str, value: Any) -> Dict[str, object]:
    """A short summary of one output tensor."""
    arr = np.ascontiguousarray(value)
    info: Dict[str, object] = {
        "name": name,
        "dtype": str(arr.dtype),
        "shape": list(arr.shape),
        "sha256": hashlib.sha256(arr.tobytes()).hexdigest(),
    }
    if arr.size and arr.dtype.kind in "fiub":
        flat = arr.reshape(-1).astype("float64")
        info["mean"] = float(flat.mean())
        info["abs_max"] = float(np.abs(flat).max())
        info["head"] = [float(x) for x in flat[:6]]
    return info


def compare(
    np: ModuleType, names: List[str], gpu_values: Any, cpu_values: Any, atol: float, rtol: float
) -> Dict[str, object]:
    """GPU outputs against the CPU baseline's, within |g - c| <= atol + rtol * |c|."""
    result: Dict[str, Any] = {
        "equal": True,
        "bitwise_equal": True,
        "max_abs_diff": 0.0,
        "max_rel_diff": 0.0,
        "tolerance_abs": atol,
        "tolerance_rel": rtol,
        "detail": "",
    }
    problems: List[str] = []
    for name, g, c in zip(names, gpu_values, cpu_values):  # noqa: B905 (Python 3.8)
        g = np.asarray(g)
        c = np.asarray(c)
        if g.shape != c.shape or g.dtype != c.dtype:
            problems.append("%s: %s %s against the CPU's %s %s" % (name, g.dtype, g.shape, c.dtype, c.shape))
            result["equal"] = False
            result["bitwise_equal"] = False
            continue
        if g.tobytes() != c.tobytes():
            result["bitwise_equal"] = False
        if g.dtype.kind in "fc":
            diff = np.abs(g.astype("float64") - c.astype("float64"))
            ref = np.abs(c.astype("float64"))
            max_abs = float(diff.max()) if diff.size else 0.0
            max_rel = float((diff / np.maximum(ref, 1e-12)).max()) if diff.size else 0.0
            result["max_abs_diff"] = max(result["max_abs_diff"], max_abs)
            result["max_rel_diff"] = max(result["max_rel_diff"], max_rel)
            if not np.all(diff <= atol + rtol * ref):
                problems.append("%s differs: max |diff| %.3g (max relative %.3g)" % (name, max_abs, max_rel))
                result["equal"] = False
        elif not np.array_equal(g, c):
            problems.append("%s differs" % name)
            result["equal"] = False
    result["detail"] = "; ".join(problems)
    return result


def timed_runs(
    ort: ModuleType,
    np: ModuleType,
    session: Any,
    feeds: Dict[str, object],
    warmup: int,
    runs: int,
    prefix: str,
    batch: Optional[int],
    steady: bool = False,
) -> Tuple[Dict[str, object], Any]:
    """Warm-up runs, then timed runs (ONNX Runtime's run log at ERROR only, so the VERBOSE session
    log costs nothing here); returns (stats, outputs of the last run).

    ``steady``: ``runs`` is the most; the runs stop once the median is known well enough
    (:func:`steady_enough`), so a quiet machine spends 5 runs where a busy one needs 20."""
    options = ort.RunOptions()
    options.log_severity_level = 3
    outputs = None
    if warmup > 0:  # none for a session that ran on the CPU anyway: no empty phase on the graph
        phase_start(prefix + ".warmup")
        for _ in range(warmup):
            outputs = session.run(None, feeds, options)
        phase_end()
    phase_start(prefix + ".timed")
    times: List[float] = []
    for _ in range(max(1, runs)):
        begin = time.perf_counter()
        outputs = session.run(None, feeds, options)
        times.append(time.perf_counter() - begin)
        if steady and steady_enough(times):
            break
    phase_end()
    return latency(times, warmup, batch), outputs


STEADY_MIN_RUNS = 5
STEADY_WITHIN = 0.02


def steady_enough(times: List[float]) -> bool:
    """Whether the median of ``times`` is known within 2 % (its standard error, from the spread).

    The standard error of a median is about 1.253 sigma / sqrt(n); sigma is estimated robustly
    as 1.4826 times the median absolute deviation, so one slow outlier does not keep it going.
    At least 5 runs are taken.
    """
    count = len(times)
    if count < STEADY_MIN_RUNS:
        return False
    ordered = sorted(times)
    middle = _median(ordered)
    spread = _median(sorted(abs(value - middle) for value in ordered))
    return bool(1.253 * 1.4826 * spread / math.sqrt(count) <= STEADY_WITHIN * middle)


def _median(ordered: List[float]) -> float:
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2.0


def provider_arg(request: Request, providers: List[str]) -> List[Union[str, Tuple[str, Dict[str, str]]]]:
    """Providers with options (the TensorRT engine cache when asked)."""
    out: List[Union[str, Tuple[str, Dict[str, str]]]] = []
    cache = request.get("trt_cache_dir")
    for name in providers:
        if name == "TensorrtExecutionProvider" and cache:
            out.append((name, {"trt_engine_cache_enable": "True", "trt_engine_cache_path": cache}))
        else:
            out.append(name)
    return out


def gpu_memory(pid: int) -> Dict[str, object]:
    """GPU memory of this process and of the others, via NVML when pynvml is importable here."""
    try:
        import pynvml
    except ImportError:
        return {
            "note": "pynvml is not installed in the application's environment: GPU memory per process unknown"
        }
    try:
        pynvml.nvmlInit()
    except Exception as error:  # noqa: BLE001 (NVML raises its own error classes)
        return {"note": "NVML could not be initialised: %s" % error}
    mine = 0
    others = 0
    total = 0
    try:
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            total += int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
            for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                used = int(proc.usedGpuMemory or 0)
                if proc.pid == pid:
                    mine += used
                else:
                    others += used
    except Exception as error:  # noqa: BLE001
        return {"note": "NVML could not list processes: %s" % error}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return {"probe_bytes": mine, "others_bytes": others, "total_bytes": total, "note": ""}


def save_baseline(np: ModuleType, folder: Optional[str], names: List[str], values: Any) -> None:
    """Store the CPU baseline's outputs for a later child (another strategy) to compare with."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for index, value in enumerate(values):
        np.save(os.path.join(folder, "out%d.npy" % index), np.asarray(value), allow_pickle=False)
    with open(os.path.join(folder, "names.json"), "w") as handle:
        json.dump(list(names), handle)


def load_baseline(np: ModuleType, folder: Optional[str]) -> Optional[Tuple[List[str], List[object]]]:
    """The CPU baseline's outputs stored by an earlier child, or None."""
    if not folder or not os.path.exists(os.path.join(folder, "names.json")):
        return None
    with open(os.path.join(folder, "names.json")) as handle:
        names = json.load(handle)
    return names, [
        np.load(os.path.join(folder, "out%d.npy" % i), allow_pickle=False) for i in range(len(names))
    ]
