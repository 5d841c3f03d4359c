"""Test-inference probe child: run by the APPLICATION's interpreter, in the application's environment.

SELF-CONTAINED: Python 3.8+, the standard library, onnxruntime and numpy (the application's own),
and probe_shared.py from beside it (what both probes share). It never imports fallback_doctor.
The request (JSON, the fields of ProbeRequest in fallback_doctor/core/inference/result.py) comes
on stdin; progress and the result go to stdout as JSON lines, one object per line::

    {"event": "hello", "pid": 123, "wall": 1718000000.1, ...}
    {"event": "phase", "name": "cpu.session", "state": "start", "t": 0.41, "wall": ...}
    {"event": "phase", "name": "cpu.session", "state": "end", "ok": true, "t": 0.45, "wall": ...}
    {"event": "result", "result": {...ProbeResult JSON...}}

So a crash says where it happened: the last phase started and not ended. Everything else the
process writes (ONNX Runtime's C++ log on fd 2, its Python "EP Error" banner on fd 1) goes to a
temporary file via os.dup2 at the file-descriptor level, is read back per phase and quoted in the
result; the protocol has its own duplicate of the original stdout.

By default the probe lowers its priority (nice) and caps ONNX Runtime's threads, because it may
run beside a production server. A technician can run it by hand::

    echo '{"model": "encoder.onnx", "dims": {"batch": 16, "seq": 128}}' | python ort_python_child.py

TEST ONLY: ``test_mode`` ("crash", "hang", "flood", "garbage") makes the child misbehave on
purpose, and only when the environment also has FALLBACK_DOCTOR_PROBE_TEST=1 (set by the tests).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from typing import IO, Any, Dict, List, Optional, Set, Tuple, Union

# The code both probes share, from beside this file (run_python_probe copies it into the work folder).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_shared import count_placements, latency, strip_ansi  # type: ignore[import-not-found]

_START = time.monotonic()
_PROTO: Optional[IO[str]] = None  # the protocol stream (a duplicate of the original stdout)
_CAPTURE: Optional[Tuple[str, int]] = None  # (path, fd) of the file that receives fds 1 and 2
_OWN_CAPTURE = False  # True when this process made the capture file (and removes it)
_OPEN_PHASES: List[Tuple[str, float]] = []
_PHASES: List[Dict[str, Any]] = []
_GPU_PROVIDERS = (
    "CUDAExecutionProvider",
    "TensorrtExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "DmlExecutionProvider",
)
_NUMPY_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int64)": "int64",
    "tensor(int32)": "int32",
    "tensor(int16)": "int16",
    "tensor(int8)": "int8",
    "tensor(uint64)": "uint64",
    "tensor(uint32)": "uint32",
    "tensor(uint16)": "uint16",
    "tensor(uint8)": "uint8",
    "tensor(bool)": "bool",
}
_IMPORTANT_TAGS = ("[E:onnxruntime", "[W:onnxruntime", "[F:onnxruntime", " when using [", "UserWarning")
_IMPORTANT_STARTS = ("EP Error", "Falling back to")


class UnusableModelError(Exception):
    """The model cannot be run with generated inputs (a string input, a sequence, ...)."""


def emit(obj: Dict[str, Any]) -> None:
    """Write one protocol line (JSON) and flush it."""
    obj.setdefault("t", round(time.monotonic() - _START, 6))
    obj.setdefault("wall", time.time())
    assert _PROTO is not None
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def phase_start(name: str) -> None:
    """Mark the start of a phase (also on stdout, so a crash says where)."""
    _OPEN_PHASES.append((name, time.monotonic() - _START))
    emit({"event": "phase", "name": name, "state": "start"})


def phase_end(ok: bool = True) -> None:
    """Mark the end of the innermost open phase."""
    name, start = _OPEN_PHASES.pop()
    end = time.monotonic() - _START
    _PHASES.append({"name": name, "start_s": round(start, 6), "end_s": round(end, 6), "ok": bool(ok)})
    emit({"event": "phase", "name": name, "state": "end", "ok": bool(ok)})


def setup_capture(path: Optional[str] = None) -> None:
    """Send fds 1 and 2 to a file (the parent's ``--capture PATH``, else a temporary one that is
    removed at the end); keep a private duplicate of stdout for the protocol."""
    global _PROTO, _CAPTURE, _OWN_CAPTURE
    proto_fd = os.dup(1)
    _PROTO = os.fdopen(proto_fd, "w", encoding="utf-8", errors="replace")
    if path:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    else:
        fd, path = tempfile.mkstemp(prefix="gfd-probe-", suffix=".log")
        _OWN_CAPTURE = True
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    _CAPTURE = (path, fd)


def capture_offset() -> int:
    """The current size of the capture file (a phase's log starts here)."""
    sys.stdout.flush()
    sys.stderr.flush()
    assert _CAPTURE is not None
    return os.fstat(_CAPTURE[1]).st_size


def capture_since(offset: int) -> str:
    """The text written to fds 1 and 2 since ``offset``."""
    sys.stdout.flush()
    sys.stderr.flush()
    assert _CAPTURE is not None
    with open(_CAPTURE[0], "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    return str(strip_ansi(data.decode("utf-8", errors="replace")))


def cleanup_capture() -> None:
    """Remove the temporary capture file (not the parent's: the parent reads and removes it)."""
    if _CAPTURE is not None and _OWN_CAPTURE:
        try:
            os.unlink(_CAPTURE[0])
        except OSError:
            pass


def important_lines(text: str) -> List[str]:
    """ONNX Runtime's warning and error lines (and the Python EP Error banner), in order."""
    keep: List[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        tagged = any(tag in line for tag in _IMPORTANT_TAGS) or line.startswith(_IMPORTANT_STARTS)
        python_error = "Error" in line and "onnxruntime" in line and "[V:" not in line and "[I:" not in line
        if tagged or python_error:
            keep.append(line)
    return keep


def mapped_libraries() -> Optional[Set[str]]:
    """Shared objects mapped into this process (Linux /proc/self/maps), by file name."""
    names: Set[str] = set()
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 6 and ".so" in parts[-1]:
                    names.add(os.path.basename(parts[-1]))
    except OSError:
        return None
    return names


# --- ONNX Runtime as it is now: log callback, exact placement, devices, automatic selection ----------

_CALLBACK: List[str] = []  # messages from set_default_logger_callback, written as ORT's own lines
_CALLBACK_CAP = 20000
_SEVERITY = "VIWEF"
_ASSIGNMENT_KEY = "session.record_ep_graph_assignment_info"
_NAMES_KEPT = 40


def install_logger_callback(ort: Any) -> str:
    """Receive ONNX Runtime's messages through set_default_logger_callback where it exists (1.32+).

    Its docstring warns that messages from ONNX Runtime's worker threads still go to the platform
    sink (stderr), so the stderr capture stays; returns where messages are read from."""
    register = getattr(ort, "set_default_logger_callback", None)
    if register is None:
        return "stderr"

    def callback(severity: int, category: str, logid: str, location: str, message: str) -> None:
        if len(_CALLBACK) < _CALLBACK_CAP:
            letter = _SEVERITY[severity] if 0 <= severity < len(_SEVERITY) else str(severity)
            _CALLBACK.append("[%s:%s:%s, %s] %s" % (letter, category, logid or "Default", location, message))

    try:
        register(callback, 2)
    except Exception:  # noqa: BLE001 (an older binding's signature, or no environment yet)
        return "stderr"
    return "logger callback and stderr"


def log_mark() -> Tuple[int, int]:
    """Where a phase's log starts: the capture file's size and the callback's message count."""
    return capture_offset(), len(_CALLBACK)


def log_since(mark: Tuple[int, int]) -> str:
    """What ONNX Runtime wrote since ``mark``: the captured fds 1 and 2, then the callback's lines."""
    text = capture_since(mark[0])
    extra = _CALLBACK[mark[1] :]
    return text + "".join(line + "\n" for line in extra)


def has_assignment_api(ort: Any) -> bool:
    """InferenceSession.get_provider_graph_assignment_info exists (onnxruntime 1.31.1 has it)."""
    return hasattr(getattr(ort, "InferenceSession", None), "get_provider_graph_assignment_info")


def placement_from_api(session: Any) -> Optional[List[Dict[str, Any]]]:
    """Per provider: nodes, subgraphs, operator types and the first names, from the session itself."""
    getter = getattr(session, "get_provider_graph_assignment_info", None)
    if getter is None:
        return None
    try:
        subgraphs = list(getter())
    except Exception:  # noqa: BLE001 (the session option was not honoured)
        return None
    per: Dict[str, Dict[str, Any]] = {}
    for subgraph in subgraphs:
        name = str(subgraph.ep_name)
        empty: Dict[str, Any] = {"provider": name, "nodes": 0, "subgraphs": 0, "op_types": {}, "names": []}
        entry = per.setdefault(name, empty)
        entry["subgraphs"] += 1
        for node in subgraph.get_nodes():
            entry["nodes"] += 1
            op = "%s.%s" % (node.domain, node.op_type) if node.domain else str(node.op_type)
            entry["op_types"][op] = entry["op_types"].get(op, 0) + 1
            if len(entry["names"]) < _NAMES_KEPT:
                entry["names"].append(str(node.name))
    return list(per.values())


def placement(session: Any, log: str) -> Tuple[Dict[str, int], str, List[Dict[str, Any]]]:
    """(nodes per provider, their source, per-provider detail): the API where it answers, else the log."""
    exact = placement_from_api(session)
    if exact:
        return {p["provider"]: p["nodes"] for p in exact}, "get_provider_graph_assignment_info", exact
    counts = count_placements(log)
    source = "verbose log" if counts else "no node placement lines in the VERBOSE log"
    return counts, source, [{"provider": k, "nodes": v} for k, v in counts.items()]


def _enum_name(value: Any) -> str:
    """OrtHardwareDeviceType.GPU -> "GPU"."""
    return str(value).rsplit(".", 1)[-1]


def _number(value: Any) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def ep_devices(ort: Any) -> Optional[List[Dict[str, Any]]]:
    """onnxruntime.get_ep_devices() as plain data, or None where this ONNX Runtime has none."""
    getter = getattr(ort, "get_ep_devices", None)
    if getter is None:
        return None
    out: List[Dict[str, Any]] = []
    try:
        for device in getter():
            hardware = getattr(device, "device", None)
            out.append(
                {
                    "ep_name": str(device.ep_name),
                    "ep_vendor": str(getattr(device, "ep_vendor", "")),
                    "device_type": _enum_name(getattr(hardware, "type", "")),
                    "device_vendor": str(getattr(hardware, "vendor", "")),
                    "vendor_id": _number(getattr(hardware, "vendor_id", None)),
                    "device_id": _number(getattr(hardware, "device_id", None)),
                }
            )
    except Exception:  # noqa: BLE001
        return None
    return out


def _warnings(log: str) -> List[str]:
    """ONNX Runtime's warning, error and fatal lines (and Python warnings) in a log."""
    marks = ("[W:", "[E:", "[F:", "Warning", "EP Error")
    return [line for line in important_lines(log) if any(mark in line for mark in marks)]


def _select_devices(ort: Any, so: Any, out: Dict[str, Any]) -> None:
    """add_provider_for_devices with the GPU devices get_ep_devices() lists (none: nothing added)."""
    gpus = [d for d in ort.get_ep_devices() if _enum_name(getattr(d.device, "type", "")) == "GPU"]
    out["policy"] = "add_provider_for_devices(%s)" % ", ".join(sorted({str(d.ep_name) for d in gpus}))
    if gpus:
        so.add_provider_for_devices(gpus, {})
    else:
        out["error"] = "get_ep_devices() listed no GPU device, so add_provider_for_devices had none to add"


def run_selection(ort: Any, request: Dict[str, Any], model: str) -> Dict[str, Any]:
    """A session made the automatic way (a policy, or add_provider_for_devices), and what it picked."""
    wanted = str(request.get("selection") or "PREFER_GPU")
    mode = "devices" if wanted == "devices" else "policy"
    out: Dict[str, Any] = {"mode": mode, "policy": wanted}
    so = session_options(ort, request, True)
    policies = getattr(ort, "OrtExecutionProviderDevicePolicy", None)
    if not hasattr(so, "set_provider_selection_policy") or policies is None:
        out["supported"] = False
        out["error"] = "onnxruntime %s has no automatic provider selection" % getattr(ort, "__version__", "?")
        return out
    out["ep_devices"] = ep_devices(ort) or []
    mark = log_mark()
    phase_start("gpu.select")
    try:
        if mode == "devices":
            _select_devices(ort, so, out)
        else:
            so.set_provider_selection_policy(getattr(policies, wanted))
        session = ort.InferenceSession(model, sess_options=so)
    except Exception as error:  # noqa: BLE001
        phase_end(False)
        out["error"] = "%s: %s" % (type(error).__name__, error)
        out["messages"] = _warnings(log_since(mark))
        return out
    phase_end(True)
    log = log_since(mark)
    active = list(session.get_providers())
    out["active_providers"] = active
    out["nodes_per_provider"], out["nodes_source"], _detail = placement(session, log)
    out["messages"] = _warnings(log)
    out["silent"] = not any(p in _GPU_PROVIDERS for p in active) and not out["messages"]
    return out


def plugin_eps(ort: Any, build_info: Optional[str]) -> Tuple[List[str], List[str]]:
    """Plugin execution providers: the bundled CUDA plugin (build info "cuda-plugin-ep=") and the
    onnxruntime-ep-* packages' libraries, each registered once to see whether it loads here."""
    found: List[str] = []
    notes: List[str] = []
    if build_info and "cuda-plugin-ep=" in build_info:
        getter = getattr(ort, "_get_cuda_plugin_ep_library_path", None)
        path = None
        try:
            path = getter() if getter is not None else None
        except Exception:  # noqa: BLE001
            path = None
        found.append("bundled CUDA plugin EP%s" % (" (%s)" % path if path else ""))
    register = getattr(ort, "register_execution_provider_library", None)
    for name, path in _plugin_libraries():
        if register is None:
            found.append("%s: %s (this onnxruntime cannot register plugin providers)" % (name, path))
            continue
        try:
            register("gfd_probe_" + name, path)
        except Exception as error:  # noqa: BLE001 (a missing dependency: ONNX Runtime's own message)
            found.append("%s: %s did not load: %s" % (name, path, str(error).strip()[:400]))
            continue
        found.append("%s: %s loaded" % (name, path))
        try:
            ort.unregister_execution_provider_library("gfd_probe_" + name)
        except Exception:  # noqa: BLE001
            notes.append("%s could not be unregistered again" % path)
    return found, notes


def _plugin_libraries() -> List[Tuple[str, str]]:
    """(distribution, library) of each installed onnxruntime-ep-* package, found the package's own
    way where it has one (``import`` it, ``get_library_path()``: that also runs its preloading of
    the libraries it bundles), else by the shared libraries its RECORD lists."""
    try:
        from importlib import metadata
    except ImportError:
        return []
    out: List[Tuple[str, str]] = []
    for dist in metadata.distributions():
        name = str(dist.metadata["Name"] or "")
        if not name.lower().replace("_", "-").startswith("onnxruntime-ep-"):
            continue
        found = _plugin_by_module(dist)
        if found:
            out.extend((name, path) for path in found)
            continue
        for item in dist.files or []:
            base = os.path.basename(str(item))
            if base.startswith(("libonnxruntime_providers_", "onnxruntime_providers_")):
                out.append((name, str(dist.locate_file(item))))
    return out[:8]


def _plugin_by_module(dist: Any) -> List[str]:
    """The library paths a plugin package's modules report (get_library_path()), or []."""
    import importlib

    paths: List[str] = []
    for top in (dist.read_text("top_level.txt") or "").split():
        try:
            module = importlib.import_module(top)
            getter = getattr(module, "get_library_path", None)
            if getter is not None:
                paths.append(str(getter()))
        except Exception:  # noqa: BLE001 (a broken plugin package: its files are scanned instead)
            continue
    return paths


def lower_priority(nice: Any) -> None:
    """Lower this process's priority (it may run beside a production server)."""
    if nice and hasattr(os, "nice"):
        try:
            os.nice(int(nice))
        except OSError:
            pass


def test_misbehave(mode: Optional[str], when: str) -> None:
    """TEST ONLY: misbehave on purpose, when FALLBACK_DOCTOR_PROBE_TEST=1 is set as well."""
    if not mode or os.environ.get("FALLBACK_DOCTOR_PROBE_TEST") != "1":
        return
    assert _PROTO is not None
    if mode == "garbage" and when == "start":
        _PROTO.write("this is not JSON\n")
        _PROTO.flush()
        sys.exit(0)
    if mode == "flood" and when == "start":
        chunk = ("x" * 1023 + "\n") * 1024
        for _ in range(64):  # 64 MiB: far more than the parent keeps
            _PROTO.write(chunk)
        _PROTO.flush()
        sys.exit(0)
    if mode == "hang" and when == "gpu.session":
        child_pid = os.fork() if hasattr(os, "fork") else 0
        if child_pid == 0 and hasattr(os, "fork"):
            time.sleep(3600)  # a grandchild in the same process group: it must not survive either
            os._exit(0)
        time.sleep(3600)
    if mode == "crash" and when == "gpu.session":
        sys.stdout.write("about to crash on purpose (test mode)\n")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)


# --- inputs, outputs, statistics -----------------------------------------------------------------


def resolve_shape(shape: List[Any], request: Dict[str, Any]) -> List[int]:
    """Concrete dims: symbolic names from request["dims"], unknown ones request["default_dim"]."""
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
    np: Any, session_inputs: List[Any], request: Dict[str, Any]
) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Deterministic input data for every declared input (same seed: same data in every child)."""
    feeds: Dict[str, Any] = {}
    described: List[Dict[str, Any]] = []
    ranges = request.get("input_ranges") or {}
    seed = int(request.get("seed") or 0)
    for index, arg in enumerate(session_inputs):
        dtype = _NUMPY_TYPES.get(arg.type)
        if dtype is None:
            raise UnusableModelError(
                "input %r has type %s; the probe can only generate numeric and boolean tensors"
                % (arg.name, arg.type)
            )
        shape = resolve_shape(list(arg.shape or []), request)
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


def digest(np: Any, name: str, value: Any) -> Dict[str, Any]:
    """A short summary of one output tensor."""
    arr = np.ascontiguousarray(value)
    info: Dict[str, Any] = {
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
    np: Any, names: List[str], gpu_values: Any, cpu_values: Any, atol: float, rtol: float
) -> Dict[str, Any]:
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
    ort: Any,
    np: Any,
    session: Any,
    feeds: Dict[str, Any],
    warmup: int,
    runs: int,
    prefix: str,
    batch: Optional[int],
) -> Tuple[Dict[str, Any], Any]:
    """Warm-up runs, then timed runs (ONNX Runtime's run log at ERROR only, so the VERBOSE session
    log costs nothing here); returns (stats, outputs of the last run)."""
    options = ort.RunOptions()
    options.log_severity_level = 3
    phase_start(prefix + ".warmup")
    outputs = None
    for _ in range(warmup):
        outputs = session.run(None, feeds, options)
    phase_end()
    phase_start(prefix + ".timed")
    times: List[float] = []
    for _ in range(max(1, runs)):
        begin = time.perf_counter()
        outputs = session.run(None, feeds, options)
        times.append(time.perf_counter() - begin)
    phase_end()
    return latency(times, warmup, batch), outputs


def session_options(ort: Any, request: Dict[str, Any], verbose: bool, strict: bool = False) -> Any:
    """Session options: thread cap, VERBOSE log during creation, the strict key when asked."""
    so = ort.SessionOptions()
    threads = int(request.get("threads") or 0)
    if threads > 0:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    if verbose:
        so.log_severity_level = 0
    if strict:
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    if has_assignment_api(ort):
        so.add_session_config_entry(_ASSIGNMENT_KEY, "1")
    return so


def provider_arg(
    request: Dict[str, Any], providers: List[str]
) -> List[Union[str, Tuple[str, Dict[str, str]]]]:
    """Providers with options (the TensorRT engine cache when asked)."""
    out: List[Union[str, Tuple[str, Dict[str, str]]]] = []
    cache = request.get("trt_cache_dir")
    for name in providers:
        if name == "TensorrtExecutionProvider" and cache:
            out.append((name, {"trt_engine_cache_enable": "True", "trt_engine_cache_path": cache}))
        else:
            out.append(name)
    return out


def gpu_memory(pid: int) -> Dict[str, Any]:
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


def save_baseline(np: Any, folder: Optional[str], names: List[str], values: Any) -> None:
    """Store the CPU baseline's outputs for a later child (another strategy) to compare with."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for index, value in enumerate(values):
        np.save(os.path.join(folder, "out%d.npy" % index), np.asarray(value), allow_pickle=False)
    with open(os.path.join(folder, "names.json"), "w") as handle:
        json.dump(list(names), handle)


def load_baseline(np: Any, folder: Optional[str]) -> Optional[Tuple[List[str], List[Any]]]:
    """The CPU baseline's outputs stored by an earlier child, or None."""
    if not folder or not os.path.exists(os.path.join(folder, "names.json")):
        return None
    with open(os.path.join(folder, "names.json")) as handle:
        names = json.load(handle)
    return names, [
        np.load(os.path.join(folder, "out%d.npy" % i), allow_pickle=False) for i in range(len(names))
    ]


# --- the probe -----------------------------------------------------------------------------------


def create_session(ort: Any, model: str, so: Any, providers: List[Any]) -> Tuple[Any, Optional[str]]:
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
    ort: Any, np: Any, request: Dict[str, Any], result: Dict[str, Any], model: str
) -> Tuple[Optional[Dict[str, Any]], Optional[List[str]], Any]:
    """The CPU baseline: CPU provider, warm-up, timed runs, digests."""
    mark = log_mark()
    phase_start("cpu.session")
    begin = time.perf_counter()
    session, error = create_session(ort, model, session_options(ort, request, True), ["CPUExecutionProvider"])
    create_s = time.perf_counter() - begin
    phase_end(session is not None)
    log = log_since(mark)
    cpu: Dict[str, Any] = {
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
        ort, np, session, feeds, int(request.get("warmup", 3)), int(request.get("runs", 20)), "cpu", batch
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
    ort: Any, request: Dict[str, Any], model: str, providers: List[str]
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
    np: Any, request: Dict[str, Any], names: List[str], outputs: Any, baseline: Optional[Tuple[Any, Any]]
) -> Dict[str, Any]:
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
    ort: Any,
    np: Any,
    request: Dict[str, Any],
    result: Dict[str, Any],
    model: str,
    feeds: Optional[Dict[str, Any]],
    baseline: Optional[Tuple[Any, Any]],
) -> Dict[str, Any]:
    """The GPU retry: GPU provider(s) then CPU, VERBOSE creation log, placement, strict run, compare."""
    providers = list(request.get("providers") or ["CUDAExecutionProvider", "CPUExecutionProvider"])
    wanted_gpu = [p for p in providers if p in _GPU_PROVIDERS]
    gpu: Dict[str, Any] = {"requested_providers": providers}
    mark = log_mark()
    mapped_before = mapped_libraries()
    session, error, gpu["session_create_s"] = gpu_session(ort, request, model, providers)
    log = log_since(mark)
    mapped_after = mapped_libraries()
    gpu["ort_messages"] = important_lines(log)
    result["log_excerpt"].extend(gpu["ort_messages"])
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
    try:
        stats, outputs = timed_runs(
            ort, np, session, feeds, int(request.get("warmup", 3)), int(request.get("runs", 20)), "gpu", batch
        )
    except Exception as run_error:  # noqa: BLE001
        if _OPEN_PHASES:
            phase_end(False)
        gpu["error"] = "%s: %s" % (type(run_error).__name__, run_error)
        gpu["verdict"] = "failed"
        gpu["ort_messages"] = gpu["ort_messages"] + important_lines(log_since(mark))
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
    ort: Any, request: Dict[str, Any], model: str, providers: List[str]
) -> Tuple[Dict[str, Any], List[str]]:
    """A session with session.disable_cpu_ep_fallback = 1: a fallback becomes ONNX Runtime's error."""
    phase_start("gpu.strict")
    mark = log_mark()
    strict_providers = [p for p in providers if p != "CPUExecutionProvider"]
    session, error = create_session(
        ort, model, session_options(ort, request, False, strict=True), provider_arg(request, strict_providers)
    )
    phase_end(session is not None)
    log = log_since(mark)
    out: Dict[str, Any] = {"attempted": True, "session_created": session is not None, "error": error}
    if session is not None:
        active = list(session.get_providers())
        if not any(p in _GPU_PROVIDERS for p in active):
            out["session_created"] = False
            out["error"] = "the strict session was created without a GPU provider: %s" % active
    lines = important_lines(log)
    if out["error"] is None and session is None:
        out["error"] = lines[-1] if lines else None
    ep_errors = [line for line in lines if line.startswith("EP Error")]
    if session is None and ep_errors and out["error"] and "Conflicting session configuration" in out["error"]:
        # Python retried on the CPU alone after the GPU provider failed, which the strict key forbids:
        # the provider's own error comes first.
        out["error"] = "%s (then: %s)" % (ep_errors[0], out["error"])
    return out, lines


def describe_runtime(ort: Any, runtime: Dict[str, Any], notes: List[str]) -> None:
    """Where the log is read from, get_device(), get_ep_devices() and the plugin providers."""
    runtime["log_source"] = install_logger_callback(ort)
    try:
        runtime["get_device"] = str(ort.get_device())
    except Exception:  # noqa: BLE001
        runtime["get_device"] = None
    runtime["ep_devices"] = ep_devices(ort) or []
    runtime["plugin_eps"], plugin_notes = plugin_eps(ort, runtime.get("build_info"))
    notes.extend(plugin_notes)


def new_result(request: Dict[str, Any]) -> Dict[str, Any]:
    """The result document before anything ran."""
    return {
        "kind": "python",
        "schema": 1,
        "completed": False,
        "notes": [],
        "log_excerpt": [],
        "runtime": {
            "interpreter": sys.executable,
            "python_version": sys.version.split()[0],
            "pid": os.getpid(),
        },
        "model": {"path": request.get("model", ""), "inputs": [], "outputs": []},
    }


def read_model_file(model: Any, result: Dict[str, Any]) -> bool:
    """The model's sha256 and size into the result; False (and a failure) when it cannot be read."""
    try:
        with open(model, "rb") as handle:
            data = handle.read()
    except (OSError, TypeError) as error:  # None or a non-path: open() fails
        result["failure"] = {"kind": "unusable_model", "sentence": "the model could not be read: %s" % error}
        return False
    result["model"]["sha256"] = hashlib.sha256(data).hexdigest()
    result["model"]["size_bytes"] = len(data)
    return True


def import_runtime(result: Dict[str, Any], strategy: str) -> Optional[Tuple[Any, Any]]:
    """import numpy and onnxruntime (the "import" phase) and describe them; None on failure."""
    offset = capture_offset()
    phase_start("import")
    import_begin = time.perf_counter()
    try:
        import numpy as np
        import onnxruntime as ort  # type: ignore[import-untyped]
    except BaseException as error:  # noqa: BLE001 (an ImportError, or a native failure surfacing)
        phase_end(False)
        result["failure"] = {
            "kind": "error",
            "phase": "import",
            "sentence": "ONNX Runtime could not be imported by the application's Python: %s" % error,
            "stderr_tail": capture_since(offset)[-4000:],
        }
        result["strategies"] = [{"name": strategy, "stage": "nothing"}]
        return None
    result["cost"] = {"import_s": time.perf_counter() - import_begin}
    phase_end()
    runtime: Dict[str, Any] = result["runtime"]
    runtime["ort_version"] = getattr(ort, "__version__", None)
    runtime["ort_location"] = os.path.dirname(getattr(ort, "__file__", "") or "") or None
    runtime["numpy_version"] = getattr(np, "__version__", None)
    runtime["available_providers"] = list(ort.get_available_providers())
    runtime["cuda_version"] = getattr(ort, "cuda_version", None)
    try:
        runtime["build_info"] = ort.get_build_info()
    except Exception:  # noqa: BLE001
        runtime["build_info"] = None
    describe_runtime(ort, runtime, result["notes"])
    return ort, np


def prepare_strategy(ort: Any, strategy: str, result: Dict[str, Any]) -> Dict[str, Any]:
    """The strategy's entry; runs preload_dlls() for that strategy ("skipped" where it has none)."""
    entry: Dict[str, Any] = {"name": strategy, "stage": "runtime_loaded"}
    if strategy == "as_is":
        entry["description"] = "the application's environment as it is"
        return entry
    if strategy != "preload_dlls":
        entry["description"] = "LD_LIBRARY_PATH=%s" % os.environ.get("LD_LIBRARY_PATH", "")
        return entry
    entry["description"] = "onnxruntime.preload_dlls() before creating the session"
    if not hasattr(ort, "preload_dlls"):
        entry["skipped"] = "onnxruntime %s has no preload_dlls() (it appeared in 1.21)" % getattr(
            ort, "__version__", "?"
        )
        return entry
    phase_start("preload")
    preload_mark = log_mark()
    try:
        ort.preload_dlls()
        phase_end()
    except Exception as error:  # noqa: BLE001
        phase_end(False)
        result["notes"].append("preload_dlls() failed: %s" % error)
    result["log_excerpt"].extend(important_lines(log_since(preload_mark)))
    return entry


def run_sessions(
    ort: Any, np: Any, request: Dict[str, Any], result: Dict[str, Any], entry: Dict[str, Any]
) -> None:
    """The CPU baseline, the GPU retry and (as is) the automatic selection, into the result."""
    model = request.get("model")
    feeds = None
    baseline = None
    try:
        if request.get("cpu_baseline", True):
            feeds, names, outputs = run_cpu(ort, np, request, result, str(model))
            if outputs is not None:
                baseline = (names, outputs)
            result["cost"]["cpu_session_create_s"] = result["cpu"].get("session_create_s")
        else:
            baseline = load_baseline(np, request.get("baseline_dir"))
        if request.get("gpu_retry", True):
            gpu = run_gpu(ort, np, request, result, str(model), feeds, baseline)
            entry["gpu"] = gpu
            entry["stage"] = gpu.get("stage", "runtime_loaded")
            result["cost"]["gpu_session_create_s"] = gpu.get("session_create_s")
            if entry["name"] == "as_is" and request.get("selection", "PREFER_GPU"):
                entry["selection"] = run_selection(ort, request, str(model))
    except UnusableModelError as error:
        while _OPEN_PHASES:
            phase_end(False)
        result["failure"] = {"kind": "unusable_model", "sentence": str(error)}


def main(argv: List[str]) -> int:
    """Read the request, run the probe, write the result; exit 0 whenever a result was written."""
    capture = argv[argv.index("--capture") + 1] if "--capture" in argv[:-1] else None
    setup_capture(capture)
    raw = sys.stdin.read()
    try:
        request = json.loads(raw) if raw.strip() else {}
    except ValueError as error:
        emit({"event": "error", "message": "the request is not JSON: %s" % error})
        return 2
    emit(
        {"event": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "executable": sys.executable}
    )
    test_misbehave(request.get("test_mode"), "start")
    lower_priority(request.get("nice", 10))
    strategy = request.get("strategy") or "as_is"
    result = new_result(request)
    if read_model_file(request.get("model"), result):
        imported = import_runtime(result, strategy)
        if imported is not None:
            ort, np = imported
            entry = prepare_strategy(ort, strategy, result)
            if "skipped" not in entry:
                run_sessions(ort, np, request, result, entry)
            if _CALLBACK:
                result["notes"].append(
                    "%d of ONNX Runtime's messages came through set_default_logger_callback" % len(_CALLBACK)
                )
            result["strategies"] = [entry]
            result["completed"] = "failure" not in result
            result["phases"] = _PHASES
    emit({"event": "result", "result": result})
    return 0


if __name__ == "__main__":
    exit_code = 1
    try:
        exit_code = main(sys.argv[1:])
    except BaseException as failure:
        if isinstance(failure, SystemExit):
            raise
        import traceback

        text = traceback.format_exc()
        if _PROTO is not None:
            emit(
                {
                    "event": "error",
                    "message": "%s: %s" % (type(failure).__name__, failure),
                    "phase": _OPEN_PHASES[-1][0] if _OPEN_PHASES else None,
                    "traceback": text,
                }
            )
        else:
            assert sys.__stderr__ is not None
            sys.__stderr__.write(text)
        exit_code = 3
    finally:
        cleanup_capture()
    sys.exit(exit_code)
