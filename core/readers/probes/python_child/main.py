"""The Python probe child's main: read the request, run the strategy's sessions, write the result."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from . import capture as capture_state
from .capture import (
    _OPEN_PHASES,
    _PHASES,
    capture_offset,
    capture_since,
    cleanup_capture,
    emit,
    important_lines,
    lower_priority,
    phase_end,
    phase_start,
    setup_capture,
    test_misbehave,
)
from .common import Request, UnusableModelError
from .inputs import load_baseline
from .ort_now import _CALLBACK, log_mark, log_since, run_selection
from .sessions import describe_runtime, run_cpu, run_gpu


def new_result(request: Request) -> Dict[str, Any]:
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


def import_runtime(result: Dict[str, Any], strategy: str) -> Optional[Tuple[ModuleType, ModuleType]]:
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
    runtime: Dict[str, object] = result["runtime"]
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


def prepare_strategy(ort: ModuleType, strategy: str, result: Dict[str, Any]) -> Dict[str, object]:
    """The strategy's entry; runs preload_dlls() for that strategy ("skipped" where it has none)."""
    entry: Dict[str, object] = {"name": strategy, "stage": "runtime_loaded"}
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
    ort: ModuleType, np: ModuleType, request: Request, result: Dict[str, Any], entry: Dict[str, Any]
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
        request: Request = json.loads(raw) if raw.strip() else {}
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


def run() -> None:
    """The child's life: main, and on an unexpected error the traceback on the protocol (exit 3)."""
    exit_code = 1
    try:
        exit_code = main(sys.argv[1:])
    except BaseException as failure:
        if isinstance(failure, SystemExit):
            raise
        import traceback

        text = traceback.format_exc()
        if capture_state._PROTO is not None:
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
