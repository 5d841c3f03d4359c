"""ONNX Runtime as it is now: log callback, exact placement, EP devices, selection, plugin EPs."""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Dict, List, Optional, SupportsInt, Tuple, Union

if TYPE_CHECKING:
    from importlib.metadata import Distribution

from probe_shared import count_placements  # type: ignore[import-not-found]

from .capture import capture_offset, capture_since, important_lines, phase_end, phase_start
from .common import _GPU_PROVIDERS, Request

_CALLBACK: List[str] = []  # messages from set_default_logger_callback, written as ORT's own lines
_CALLBACK_CAP = 20000
_SEVERITY = "VIWEF"
_ASSIGNMENT_KEY = "session.record_ep_graph_assignment_info"
_NAMES_KEPT = 40


def install_logger_callback(ort: ModuleType) -> str:
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


def has_assignment_api(ort: ModuleType) -> bool:
    """InferenceSession.get_provider_graph_assignment_info exists (onnxruntime 1.31.1 has it)."""
    return hasattr(getattr(ort, "InferenceSession", None), "get_provider_graph_assignment_info")


def placement_from_api(session: object) -> Optional[Tuple[Dict[str, int], List[Dict[str, object]]]]:
    """(nodes per provider, per provider: nodes, subgraphs, operator types and the first names), from
    the session itself."""
    getter = getattr(session, "get_provider_graph_assignment_info", None)
    if getter is None:
        return None
    try:
        subgraphs = list(getter())
    except Exception:  # noqa: BLE001 (the session option was not honoured)
        return None
    nodes: Dict[str, int] = {}
    parts: Dict[str, int] = {}
    op_types: Dict[str, Dict[str, int]] = {}
    names: Dict[str, List[str]] = {}
    for subgraph in subgraphs:
        name = str(subgraph.ep_name)
        parts[name] = parts.get(name, 0) + 1
        nodes.setdefault(name, 0)
        ops = op_types.setdefault(name, {})
        kept = names.setdefault(name, [])
        for node in subgraph.get_nodes():
            nodes[name] += 1
            op = "%s.%s" % (node.domain, node.op_type) if node.domain else str(node.op_type)
            ops[op] = ops.get(op, 0) + 1
            if len(kept) < _NAMES_KEPT:
                kept.append(str(node.name))
    return nodes, [
        {"provider": p, "nodes": nodes[p], "subgraphs": parts[p], "op_types": op_types[p], "names": names[p]}
        for p in parts
    ]


def placement(session: object, log: str) -> Tuple[Dict[str, int], str, List[Dict[str, object]]]:
    """(nodes per provider, their source, per-provider detail): the API where it answers, else the log."""
    exact = placement_from_api(session)
    if exact and exact[1]:
        return exact[0], "get_provider_graph_assignment_info", exact[1]
    counts = count_placements(log)
    source = "verbose log" if counts else "no node placement lines in the VERBOSE log"
    return counts, source, [{"provider": k, "nodes": v} for k, v in counts.items()]


def _enum_name(value: object) -> str:
    """OrtHardwareDeviceType.GPU -> "GPU"."""
    return str(value).rsplit(".", 1)[-1]


def _number(value: Union[str, SupportsInt, None]) -> Optional[int]:
    """A device attribute as an int; None where the runtime has none or it is not a number."""
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def ep_devices(ort: ModuleType) -> Optional[List[Dict[str, object]]]:
    """onnxruntime.get_ep_devices() as plain data, or None where this ONNX Runtime has none."""
    getter = getattr(ort, "get_ep_devices", None)
    if getter is None:
        return None
    out: List[Dict[str, object]] = []
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


def _select_devices(ort: ModuleType, so: Any, out: Dict[str, object]) -> None:
    """add_provider_for_devices with the GPU devices get_ep_devices() lists (none: nothing added)."""
    gpus = [d for d in ort.get_ep_devices() if _enum_name(getattr(d.device, "type", "")) == "GPU"]
    out["policy"] = "add_provider_for_devices(%s)" % ", ".join(sorted({str(d.ep_name) for d in gpus}))
    if gpus:
        so.add_provider_for_devices(gpus, {})
    else:
        out["error"] = "get_ep_devices() listed no GPU device, so add_provider_for_devices had none to add"


def run_selection(ort: ModuleType, request: Request, model: str) -> Dict[str, object]:
    """A session made the automatic way (a policy, or add_provider_for_devices), and what it picked."""
    wanted = str(request.get("selection") or "PREFER_GPU")
    mode = "devices" if wanted == "devices" else "policy"
    out: Dict[str, object] = {"mode": mode, "policy": wanted}
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
    if not any(p in _GPU_PROVIDERS for p in active):
        del session
        out["registered"] = _with_cuda_registered(ort, request, model, wanted, mode)
    return out


def cuda_provider_library(ort: ModuleType) -> Optional[str]:
    """The CUDA provider's own library in this onnxruntime's capi folder, or None."""
    if ort.__file__ is None:  # a namespace package: no capi folder to look in
        return None
    capi = os.path.join(os.path.dirname(os.path.abspath(ort.__file__)), "capi")
    for name in ("libonnxruntime_providers_cuda.so", "onnxruntime_providers_cuda.dll"):
        path = os.path.join(capi, name)
        if os.path.isfile(path):
            return path
    return None


def _with_cuda_registered(
    ort: ModuleType, request: Request, model: str, wanted: str, mode: str
) -> Optional[Dict[str, object]]:
    """The same automatic selection once the CUDA provider's library is registered with the
    environment (register_execution_provider_library): automatic selection only chooses among
    registered providers, and onnxruntime-gpu does not register its CUDA provider by itself
    (seen on an H200: PREFER_GPU picked the CPU on a stack whose CUDA provider ran every node).
    None where this onnxruntime cannot register libraries or has no CUDA provider library."""
    register = getattr(ort, "register_execution_provider_library", None)
    path = cuda_provider_library(ort)
    if register is None or path is None or "CUDAExecutionProvider" not in ort.get_available_providers():
        return None
    out: Dict[str, object] = {"library": path}
    name = "CUDAExecutionProvider"
    try:
        register(name, path)
    except Exception as error:  # noqa: BLE001 (a missing dependency: ONNX Runtime's own message)
        out["error"] = "register_execution_provider_library: %s: %s" % (
            type(error).__name__,
            str(error).strip()[:400],
        )
        return out
    try:
        out["ep_devices"] = ep_devices(ort) or []
        so = session_options(ort, request, True)
        if mode == "devices":
            _select_devices(ort, so, out)
            out.pop("policy", None)
        else:
            so.set_provider_selection_policy(getattr(ort.OrtExecutionProviderDevicePolicy, wanted))
        mark = log_mark()
        session = ort.InferenceSession(model, sess_options=so)
        out["active_providers"] = list(session.get_providers())
        out["nodes_per_provider"], out["nodes_source"], _detail = placement(session, log_since(mark))
        del session
    except Exception as error:  # noqa: BLE001
        out["error"] = "%s: %s" % (type(error).__name__, str(error).strip()[:400])
    finally:
        try:
            ort.unregister_execution_provider_library(name)
        except Exception:  # noqa: BLE001 (sessions are gone; nothing else to do)
            pass
    return out


def plugin_eps(ort: ModuleType, build_info: Optional[str]) -> Tuple[List[str], List[str]]:
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


def _plugin_by_module(dist: Distribution) -> List[str]:
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


def session_options(ort: ModuleType, request: Request, verbose: bool, strict: bool = False) -> Any:
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
