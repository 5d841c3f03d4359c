"""C-API probe child: drive a native ONNX Runtime library through its C API with ctypes.

SELF-CONTAINED: the standard library only (ctypes), Python 3.8 or newer. Run by path, never
imported by the tool, so that the GPU retry exercises the very ``libonnxruntime.so`` a native
server (the Bareun server) loads, and a crash in it takes down only this process::

    python ort_capi_child.py < request.json

The request is one JSON object on stdin: the fields of ``ProbeRequest``
(fallback_doctor/core/inference/result.py) plus ``lib_path`` (the ONNX Runtime library to load)
and ``work_dir`` (a folder of ours for the captured stderr; optional).

The reply is JSON lines on stdout, each flushed at once, so that a crash leaves the progress
behind: ``{"event": "begin", "phase": "gpu.session", "step": "..."}`` before each phase and step,
``{"event": "end", "phase": ..., "ok": ...}`` after each phase, ``{"event": "log", ...}`` with the
stderr ONNX Runtime wrote during a phase (captured at the file-descriptor level, because ONNX
Runtime writes its log from C++), then ``{"event": "result", "result": {...}}`` in the shape of
``ProbeResult.to_json()`` and ``{"event": "done"}``.

What it calls, in order (the OrtApi function table, indices from onnxruntime_c_api.h; see
core/inference/capi_layout.py for the whole table and its source): OrtGetApiBase ->
GetVersionString, GetApi (the highest version the library supports), CreateStatus /
GetErrorCode / GetErrorMessage (to check the table), GetAvailableProviders, CreateEnv (VERBOSE),
CreateSessionOptions, SetIntraOpNumThreads, SetSessionLogSeverityLevel, AddSessionConfigEntry
("session.disable_cpu_ep_fallback"), CreateCUDAProviderOptions /
SessionOptionsAppendExecutionProvider_CUDA_V2 (or the exported
OrtSessionOptionsAppendExecutionProvider_CUDA on a library older than API 11),
CreateTensorRTProviderOptions / SessionOptionsAppendExecutionProvider_TensorRT_V2, CreateSession,
SessionGetInput*/Output* with their type infos, CreateCpuMemoryInfo,
CreateTensorWithDataAsOrtValue, Run, GetTensorMutableData, and the Release* calls.

By hand, the same as a C program that calls ``OrtGetApiBase()->GetApi(ORT_API_VERSION)`` and
``SessionOptionsAppendExecutionProvider_CUDA_V2``; or
``python -c "import ctypes; print(ctypes.CDLL('libonnxruntime.so.1').OrtGetApiBase)"``.
"""

from __future__ import annotations

import array
import ctypes
import hashlib
import json
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

T0 = time.monotonic()

# --- the OrtApi function table ----------------------------------------------------------------
# Indices into struct OrtApi, from include/onnxruntime/core/session/onnxruntime_c_api.h
# (microsoft/onnxruntime, ORT_API_VERSION 13 header, commit 0017800f6539412b364502d8b59c11463a6411e6).
# The table is append-only: an index never changes in a later release. The whole table is kept as
# data in core/inference/capi_layout.py; a test checks that these agree with it.
API_INDEX = {
    "CreateStatus": 0,
    "GetErrorCode": 1,
    "GetErrorMessage": 2,
    "CreateEnv": 3,
    "CreateSession": 7,
    "Run": 9,
    "CreateSessionOptions": 10,
    "SetSessionLogSeverityLevel": 22,
    "SetIntraOpNumThreads": 24,
    "SetInterOpNumThreads": 25,
    "SessionGetInputCount": 30,
    "SessionGetOutputCount": 31,
    "SessionGetInputTypeInfo": 33,
    "SessionGetOutputTypeInfo": 34,
    "SessionGetInputName": 36,
    "SessionGetOutputName": 37,
    "CreateRunOptions": 39,
    "RunOptionsSetRunLogSeverityLevel": 41,
    "CreateTensorWithDataAsOrtValue": 49,
    "GetTensorMutableData": 51,
    "CastTypeInfoToTensorInfo": 55,
    "GetOnnxTypeFromTypeInfo": 56,
    "GetTensorElementType": 60,
    "GetDimensionsCount": 61,
    "GetDimensions": 62,
    "GetSymbolicDimensions": 63,
    "GetTensorShapeElementCount": 64,
    "GetTensorTypeAndShape": 65,
    "CreateCpuMemoryInfo": 69,
    "AllocatorFree": 76,
    "GetAllocatorWithDefaultOptions": 78,
    "ReleaseEnv": 92,
    "ReleaseStatus": 93,
    "ReleaseMemoryInfo": 94,
    "ReleaseSession": 95,
    "ReleaseValue": 96,
    "ReleaseRunOptions": 97,
    "ReleaseTypeInfo": 98,
    "ReleaseTensorTypeAndShapeInfo": 99,
    "ReleaseSessionOptions": 100,
    "GetAvailableProviders": 125,
    "ReleaseAvailableProviders": 126,
    "AddSessionConfigEntry": 130,
    "SessionOptionsAppendExecutionProvider_TensorRT_V2": 170,
    "CreateTensorRTProviderOptions": 171,
    "UpdateTensorRTProviderOptions": 172,
    "ReleaseTensorRTProviderOptions": 174,
    "SessionOptionsAppendExecutionProvider_CUDA_V2": 204,
    "CreateCUDAProviderOptions": 205,
    "UpdateCUDAProviderOptions": 206,
    "ReleaseCUDAProviderOptions": 208,
}
#: The API version that brought SessionOptionsAppendExecutionProvider_CUDA_V2 (the header: "since 1.11").
API_CUDA_V2 = 11
#: The oldest API version this probe asks for (everything else it calls is older).
API_MINIMUM = 4
API_HIGHEST_TRIED = 40

ORT_LOGGING_LEVEL_VERBOSE = 0
ORT_LOGGING_LEVEL_WARNING = 2
ORT_ERROR_NAMES = [
    "ORT_OK",
    "ORT_FAIL",
    "ORT_INVALID_ARGUMENT",
    "ORT_NO_SUCHFILE",
    "ORT_NO_MODEL",
    "ORT_ENGINE_ERROR",
    "ORT_RUNTIME_EXCEPTION",
    "ORT_INVALID_PROTOBUF",
    "ORT_MODEL_LOADED",
    "ORT_NOT_IMPLEMENTED",
    "ORT_INVALID_GRAPH",
    "ORT_EP_FAIL",
]
ONNX_TYPE_TENSOR = 1
OrtArenaAllocator = 1
OrtMemTypeDefault = 0

# ONNXTensorElementDataType -> (name, array typecode or "e" for float16 via struct, item size)
ELEMENT_TYPES = {
    1: ("float32", "f", 4),
    2: ("uint8", "B", 1),
    3: ("int8", "b", 1),
    4: ("uint16", "H", 2),
    5: ("int16", "h", 2),
    6: ("int32", "i", 4),
    7: ("int64", "q", 8),
    8: ("string", "", 0),
    9: ("bool", "B", 1),
    10: ("float16", "e", 2),
    11: ("float64", "d", 8),
    12: ("uint32", "I", 4),
    13: ("uint64", "Q", 8),
    14: ("complex64", "", 8),
    15: ("complex128", "", 16),
    16: ("bfloat16", "", 2),
}
GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_KEEP = 400
"""At most this many captured log lines per phase go into the reply."""

P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
SIZE_P = ctypes.POINTER(ctypes.c_size_t)
INT_P = ctypes.POINTER(ctypes.c_int)
PATH_T = ctypes.c_wchar_p if sys.platform == "win32" else ctypes.c_char_p
FUNCTION_TYPE = ctypes.WINFUNCTYPE if sys.platform == "win32" else ctypes.CFUNCTYPE  # type: ignore[attr-defined]

SIGNATURES: Dict[str, Tuple[Any, List[Any]]] = {
    "CreateStatus": (P, [ctypes.c_int, ctypes.c_char_p]),
    "GetErrorCode": (ctypes.c_int, [P]),
    "GetErrorMessage": (ctypes.c_char_p, [P]),
    "CreateEnv": (P, [ctypes.c_int, ctypes.c_char_p, PP]),
    "CreateSession": (P, [P, PATH_T, P, PP]),
    "Run": (
        P,
        [
            P,
            P,
            ctypes.POINTER(ctypes.c_char_p),
            PP,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_size_t,
            PP,
        ],
    ),
    "CreateSessionOptions": (P, [PP]),
    "SetSessionLogSeverityLevel": (P, [P, ctypes.c_int]),
    "SetIntraOpNumThreads": (P, [P, ctypes.c_int]),
    "SetInterOpNumThreads": (P, [P, ctypes.c_int]),
    "SessionGetInputCount": (P, [P, SIZE_P]),
    "SessionGetOutputCount": (P, [P, SIZE_P]),
    "SessionGetInputTypeInfo": (P, [P, ctypes.c_size_t, PP]),
    "SessionGetOutputTypeInfo": (P, [P, ctypes.c_size_t, PP]),
    "SessionGetInputName": (P, [P, ctypes.c_size_t, P, PP]),
    "SessionGetOutputName": (P, [P, ctypes.c_size_t, P, PP]),
    "CreateRunOptions": (P, [PP]),
    "RunOptionsSetRunLogSeverityLevel": (P, [P, ctypes.c_int]),
    "CreateTensorWithDataAsOrtValue": (
        P,
        [P, P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, ctypes.c_int, PP],
    ),
    "GetTensorMutableData": (P, [P, PP]),
    "CastTypeInfoToTensorInfo": (P, [P, PP]),
    "GetOnnxTypeFromTypeInfo": (P, [P, INT_P]),
    "GetTensorElementType": (P, [P, INT_P]),
    "GetDimensionsCount": (P, [P, SIZE_P]),
    "GetDimensions": (P, [P, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]),
    "GetSymbolicDimensions": (P, [P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
    "GetTensorShapeElementCount": (P, [P, SIZE_P]),
    "GetTensorTypeAndShape": (P, [P, PP]),
    "CreateCpuMemoryInfo": (P, [ctypes.c_int, ctypes.c_int, PP]),
    "AllocatorFree": (P, [P, P]),
    "GetAllocatorWithDefaultOptions": (P, [PP]),
    "GetAvailableProviders": (P, [ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)), INT_P]),
    "ReleaseAvailableProviders": (P, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]),
    "AddSessionConfigEntry": (P, [P, ctypes.c_char_p, ctypes.c_char_p]),
    "SessionOptionsAppendExecutionProvider_TensorRT_V2": (P, [P, P]),
    "CreateTensorRTProviderOptions": (P, [PP]),
    "UpdateTensorRTProviderOptions": (
        P,
        [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t],
    ),
    "ReleaseTensorRTProviderOptions": (None, [P]),
    "SessionOptionsAppendExecutionProvider_CUDA_V2": (P, [P, P]),
    "CreateCUDAProviderOptions": (P, [PP]),
    "UpdateCUDAProviderOptions": (
        P,
        [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t],
    ),
    "ReleaseCUDAProviderOptions": (None, [P]),
}
for _name in (
    "ReleaseEnv",
    "ReleaseStatus",
    "ReleaseMemoryInfo",
    "ReleaseSession",
    "ReleaseValue",
    "ReleaseRunOptions",
    "ReleaseTypeInfo",
    "ReleaseTensorTypeAndShapeInfo",
    "ReleaseSessionOptions",
):
    SIGNATURES[_name] = (None, [P])


# --- output -----------------------------------------------------------------------------------


def now() -> float:
    """Seconds since this process started its work."""
    return round(time.monotonic() - T0, 6)


def emit(obj: Dict[str, Any]) -> None:
    """Write one JSON line and flush it, so it survives a crash of this process."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, sort_keys=True) + "\n")
    sys.stdout.flush()


def step(phase: str, text: str) -> None:
    """Announce a step about to run; the parent blames it if nothing follows."""
    emit({"event": "begin", "phase": phase, "step": text, "t": now()})


class OrtError(Exception):
    """An OrtStatus error: ONNX Runtime's own code and message."""

    def __init__(self, function: str, code: int, message: str) -> None:
        super().__init__(message)
        self.function = function
        self.code = code
        self.message = message

    def quoted(self) -> str:
        """The error as ONNX Runtime said it, with the call and the code name."""
        name = ORT_ERROR_NAMES[self.code] if 0 <= self.code < len(ORT_ERROR_NAMES) else str(self.code)
        return "%s failed (%s): %s" % (self.function, name, self.message)


# --- stderr capture ---------------------------------------------------------------------------


class Capture:
    """Redirect file descriptor 2 to a file for one phase (ONNX Runtime logs from C++ to fd 2)."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.count = 0
        self.saved: Optional[int] = None
        self.path: Optional[str] = None
        self.phase = ""

    def start(self, phase: str) -> None:
        """Send fd 2 to ``NN-phase.log`` in the work folder (its name is in the begin line)."""
        self.stop()
        self.count += 1
        self.phase = phase
        self.path = os.path.join(self.work_dir, "%02d-%s.log" % (self.count, phase))
        sys.stderr.flush()
        handle = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.saved = os.dup(2)
        os.dup2(handle, 2)
        os.close(handle)
        emit({"event": "begin", "phase": phase, "step": "phase", "log": self.path, "t": now()})

    def offset(self) -> int:
        """How much has been captured so far in this phase (to read what one call adds)."""
        sys.stderr.flush()
        try:
            return os.path.getsize(self.path) if self.path and self.saved is not None else 0
        except OSError:
            return 0

    def errors_since(self, offset: int) -> List[str]:
        """ONNX Runtime's error lines written since ``offset`` (the reason behind a terse status)."""
        if not self.path or self.saved is None:
            return []
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                text = ANSI.sub("", handle.read().decode("utf-8", "replace"))
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if re.search(r"\[(E|F):onnxruntime", line)]

    def stop(self) -> List[str]:
        """Put fd 2 back; return the captured lines (and emit them)."""
        if self.saved is None or self.path is None:
            return []
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.saved = None
        try:
            with open(self.path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        text = ANSI.sub("", text)
        lines = [line.rstrip("\r") for line in text.splitlines() if line.strip()]
        kept = lines if len(lines) <= LOG_KEEP else lines[: LOG_KEEP // 2] + lines[-LOG_KEEP // 2 :]
        emit({"event": "log", "phase": self.phase, "lines": kept, "total": len(lines)})
        return lines


# --- the API ----------------------------------------------------------------------------------


class Api:
    """The OrtApi function table of a loaded library, called by name through ctypes."""

    def __init__(self, library: Any) -> None:
        self.library = library
        base_type = ctypes.POINTER(ctypes.c_void_p * 2)
        get_base = library.OrtGetApiBase
        get_base.restype = base_type
        get_base.argtypes = []
        base = get_base()
        if not base:
            raise RuntimeError("OrtGetApiBase returned NULL")
        entries = base.contents
        self.get_api = FUNCTION_TYPE(P, ctypes.c_uint32)(entries[0])
        get_version = FUNCTION_TYPE(ctypes.c_char_p)(entries[1])
        raw = get_version()
        self.version = raw.decode("utf-8", "replace") if raw else "?"
        self.api_version = 0
        self.table: Any = None
        self.functions: Dict[str, Any] = {}

    def negotiate(self) -> int:
        """GetApi with the highest version this library supports (its minor first, then down)."""
        match = re.match(r"1\.(\d+)", self.version)
        candidates = []
        if match:
            candidates.append(int(match.group(1)))
        candidates += [v for v in range(API_HIGHEST_TRIED, API_MINIMUM - 1, -1) if v not in candidates]
        for version in candidates:
            if match and version > int(match.group(1)):
                continue  # a newer API than the release can only be refused (and ORT prints why)
            pointer = self.get_api(version)
            if pointer:
                self.api_version = version
                self.table = ctypes.cast(pointer, ctypes.POINTER(ctypes.c_void_p))
                return version
        raise RuntimeError(
            "GetApi returned NULL for every API version from %d down to %d" % (candidates[0], API_MINIMUM)
        )

    def fn(self, name: str) -> Any:
        """The function pointer ``name`` of the table, typed from SIGNATURES."""
        if name not in self.functions:
            restype, argtypes = SIGNATURES[name]
            address = self.table[API_INDEX[name]]
            if not address:
                raise OrtError(name, 9, "the OrtApi table of this library has no %s" % name)
            self.functions[name] = FUNCTION_TYPE(restype, *argtypes)(address)
        return self.functions[name]

    def call(self, name: str, *args: Any) -> None:
        """Call a status-returning function; raise OrtError with ONNX Runtime's own message."""
        status = self.fn(name)(*args)
        self.check(name, status)

    def check(self, name: str, status: Any) -> None:
        """Turn a non-NULL OrtStatus* into OrtError (and release it)."""
        if status:
            code = int(self.fn("GetErrorCode")(status))
            raw = self.fn("GetErrorMessage")(status)
            message = raw.decode("utf-8", "replace") if raw else ""
            self.fn("ReleaseStatus")(status)
            raise OrtError(name, code, message)

    def release(self, name: str, pointer: Any) -> None:
        """Release* of one object; NULL is ignored, as the C API allows."""
        if pointer:
            self.fn("Release" + name)(pointer)

    def verify_table(self) -> None:
        """CreateStatus/GetErrorCode/GetErrorMessage round trip: the indices fit this library."""
        status = self.fn("CreateStatus")(2, b"gfd table check")
        code = self.fn("GetErrorCode")(status)
        message = self.fn("GetErrorMessage")(status)
        self.fn("ReleaseStatus")(status)
        if code != 2 or message != b"gfd table check":
            raise RuntimeError(
                "the OrtApi table does not match onnxruntime_c_api.h (code %r, message %r)" % (code, message)
            )

    def available_providers(self) -> List[str]:
        """GetAvailableProviders: compiled in, not proof that they can run."""
        names = ctypes.POINTER(ctypes.c_char_p)()
        count = ctypes.c_int(0)
        self.call("GetAvailableProviders", ctypes.byref(names), ctypes.byref(count))
        result = [names[i].decode("utf-8", "replace") for i in range(count.value)]
        self.call("ReleaseAvailableProviders", names, count)
        return result


def c_strings(values: List[str]) -> Any:
    """A char*[] of UTF-8 strings."""
    return (ctypes.c_char_p * len(values))(*[v.encode("utf-8") for v in values])


# --- model metadata and inputs ------------------------------------------------------------------


def tensor_info(api: Api, type_info: Any) -> Tuple[int, List[Any]]:
    """(element type, dims with symbolic names or None for unknown) of a tensor type info."""
    onnx_type = ctypes.c_int(0)
    api.call("GetOnnxTypeFromTypeInfo", type_info, ctypes.byref(onnx_type))
    if onnx_type.value != ONNX_TYPE_TENSOR:
        raise ValueError("not a tensor (ONNXType %d)" % onnx_type.value)
    info = P()
    api.call("CastTypeInfoToTensorInfo", type_info, ctypes.byref(info))  # owned by type_info
    element = ctypes.c_int(0)
    api.call("GetTensorElementType", info, ctypes.byref(element))
    count = ctypes.c_size_t(0)
    api.call("GetDimensionsCount", info, ctypes.byref(count))
    dims = (ctypes.c_int64 * max(count.value, 1))()
    api.call("GetDimensions", info, dims, count.value)
    symbols = (ctypes.c_char_p * max(count.value, 1))()
    api.call("GetSymbolicDimensions", info, symbols, count.value)
    shape: List[Any] = []
    for i in range(count.value):
        if dims[i] >= 0:
            shape.append(int(dims[i]))
        else:
            raw = symbols[i]
            symbol = raw.decode("utf-8", "replace") if raw else ""
            shape.append(symbol or None)
    return element.value, shape


def session_io(api: Api, session: Any) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """Names, element types and declared shapes of a session's inputs and outputs."""
    allocator = P()
    api.call("GetAllocatorWithDefaultOptions", ctypes.byref(allocator))
    result = []
    for kind in ("Input", "Output"):
        count = ctypes.c_size_t(0)
        api.call("SessionGet%sCount" % kind, session, ctypes.byref(count))
        items = []
        for index in range(count.value):
            name_pointer = P()
            api.call("SessionGet%sName" % kind, session, index, allocator, ctypes.byref(name_pointer))
            name = ctypes.string_at(name_pointer).decode("utf-8", "replace")
            api.call("AllocatorFree", allocator, name_pointer)
            type_info = P()
            api.call("SessionGet%sTypeInfo" % kind, session, index, ctypes.byref(type_info))
            try:
                element, shape = tensor_info(api, type_info)
                item = {
                    "name": name,
                    "element": element,
                    "shape": shape,
                    "dtype": ELEMENT_TYPES.get(element, ("type %d" % element, "", 0))[0],
                }
            except ValueError as error:
                item = {"name": name, "element": 0, "shape": [], "dtype": "non-tensor", "error": str(error)}
            finally:
                api.release("TypeInfo", type_info)
            items.append(item)
        result.append(items)
    return result[0], result[1]


def resolve_shape(shape: List[Any], dims: Dict[str, int], default_dim: int) -> List[int]:
    """Replace symbolic and unknown dimensions: by name from ``dims``, else ``default_dim``."""
    resolved = []
    for dim in shape:
        if isinstance(dim, int):
            resolved.append(dim)
        elif isinstance(dim, str) and dim in dims:
            resolved.append(int(dims[dim]))
        else:
            resolved.append(int(default_dim))
    return resolved


def make_data(element: int, count: int, rng: random.Random) -> bytes:
    """Deterministic input bytes: floats in [-1, 1), integers 0 or 1 (valid ids and indices), bools."""
    name, code, _size = ELEMENT_TYPES[element]
    if name.startswith("float"):
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
        if code == "e":
            return struct.pack("<%de" % count, *values)
        return array.array(code, values).tobytes()
    values_i = [rng.randrange(2) for _ in range(count)]
    return array.array(code, values_i).tobytes()


def product(values: List[int]) -> int:
    """The product of a list of ints (1 for an empty one)."""
    total = 1
    for value in values:
        total *= value
    return total


# --- sessions and runs --------------------------------------------------------------------------


class Inputs:
    """OrtValues over buffers we own, for one Run."""

    def __init__(self, api: Api, inputs: List[Dict[str, Any]], buffers: List[bytes]) -> None:
        self.api = api
        self.names = c_strings([item["name"] for item in inputs])
        self.memory_info = P()
        api.call("CreateCpuMemoryInfo", OrtArenaAllocator, OrtMemTypeDefault, ctypes.byref(self.memory_info))
        self.keep: List[Any] = []
        self.values = (P * max(len(inputs), 1))()
        for index, (item, data) in enumerate(zip(inputs, buffers)):  # noqa: B905 (Python 3.8)
            buffer = ctypes.create_string_buffer(data, len(data)) if data else ctypes.create_string_buffer(1)
            shape = (ctypes.c_int64 * max(len(item["resolved"]), 1))(*item["resolved"])
            self.keep += [buffer, shape]
            value = P()
            api.call(
                "CreateTensorWithDataAsOrtValue",
                self.memory_info,
                ctypes.cast(buffer, P),
                len(data),
                shape,
                len(item["resolved"]),
                item["element"],
                ctypes.byref(value),
            )
            self.values[index] = value
        self.count = len(inputs)

    def release(self) -> None:
        """ReleaseValue each input, then ReleaseMemoryInfo."""
        for index in range(self.count):
            self.api.release("Value", self.values[index])
        self.api.release("MemoryInfo", self.memory_info)


def run_once(
    api: Api, session: Any, run_options: Any, inputs: Inputs, output_names: List[str], keep: bool
) -> List[Dict[str, Any]]:
    """One Run; return the outputs' element types, shapes and bytes when ``keep``, then release them."""
    names = c_strings(output_names)
    outputs = (P * max(len(output_names), 1))()
    api.call(
        "Run",
        session,
        run_options,
        inputs.names,
        inputs.values,
        inputs.count,
        names,
        len(output_names),
        outputs,
    )
    result = []
    try:
        if keep:
            for index, name in enumerate(output_names):
                result.append(read_value(api, name, outputs[index]))
    finally:
        for index in range(len(output_names)):
            api.release("Value", outputs[index])
    return result


def read_value(api: Api, name: str, value: Any) -> Dict[str, Any]:
    """Element type, shape and raw bytes of an output tensor (GetTensorTypeAndShape, GetTensorMutableData)."""
    info = P()
    api.call("GetTensorTypeAndShape", value, ctypes.byref(info))
    try:
        element = ctypes.c_int(0)
        api.call("GetTensorElementType", info, ctypes.byref(element))
        count = ctypes.c_size_t(0)
        api.call("GetDimensionsCount", info, ctypes.byref(count))
        dims = (ctypes.c_int64 * max(count.value, 1))()
        api.call("GetDimensions", info, dims, count.value)
        elements = ctypes.c_size_t(0)
        api.call("GetTensorShapeElementCount", info, ctypes.byref(elements))
    finally:
        api.release("TensorTypeAndShapeInfo", info)
    dtype, _code, size = ELEMENT_TYPES.get(element.value, ("type %d" % element.value, "", 0))
    data = b""
    if size and elements.value:
        pointer = P()
        api.call("GetTensorMutableData", value, ctypes.byref(pointer))
        data = ctypes.string_at(pointer, elements.value * size)
    return {
        "name": name,
        "element": element.value,
        "dtype": dtype,
        "shape": [int(dims[i]) for i in range(count.value)],
        "data": data,
    }


def numbers(output: Dict[str, Any]) -> Optional[List[float]]:
    """The values of a numeric output as floats, or None for a type we do not decode."""
    _name, code, size = ELEMENT_TYPES.get(output["element"], ("", "", 0))
    data = output["data"]
    if not code or not size:
        return None
    if code == "e":
        return list(struct.unpack("<%de" % (len(data) // 2), data))
    values = array.array(code)
    values.frombytes(data)
    return [float(v) for v in values]


def digest(output: Dict[str, Any]) -> Dict[str, Any]:
    """An OutputDigest: sha256 of the raw bytes, mean, largest magnitude, the first values."""
    values = numbers(output)
    result = {
        "name": output["name"],
        "dtype": output["dtype"],
        "shape": output["shape"],
        "sha256": hashlib.sha256(output["data"]).hexdigest(),
        "mean": None,
        "abs_max": None,
        "head": [],
    }
    if values:
        finite = [v for v in values if v == v and abs(v) != float("inf")]
        result["mean"] = sum(finite) / len(finite) if finite else None
        result["abs_max"] = max(abs(v) for v in finite) if finite else None
        result["head"] = values[:8]
    return result


def percentile(sorted_values: List[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = fraction * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def latency(times_s: List[float], warmup: int, batch: Optional[int]) -> Dict[str, Any]:
    """LatencyStats from the timed runs (milliseconds), with throughput."""
    ms = sorted(t * 1000.0 for t in times_s)
    mean = sum(ms) / len(ms)
    per_s = 1000.0 / mean if mean > 0 else 0.0
    return {
        "runs": len(ms),
        "warmup": warmup,
        "p50_ms": percentile(ms, 0.50),
        "p95_ms": percentile(ms, 0.95),
        "p99_ms": percentile(ms, 0.99),
        "mean_ms": mean,
        "min_ms": ms[0],
        "max_ms": ms[-1],
        "batches_per_s": per_s,
        "items_per_s": per_s * batch if batch else None,
    }


def compare(
    gpu: List[Dict[str, Any]], cpu: List[Dict[str, Any]], tol_abs: float, tol_rel: float
) -> Dict[str, Any]:
    """OutputComparison: |gpu - cpu| <= abs + rel * |cpu| everywhere, same names, dtypes, shapes."""
    result = {
        "equal": False,
        "bitwise_equal": False,
        "max_abs_diff": None,
        "max_rel_diff": None,
        "tolerance_abs": tol_abs,
        "tolerance_rel": tol_rel,
        "detail": "",
    }

    def signature(outputs: List[Dict[str, Any]]) -> List[Any]:
        return [(o["name"], o["dtype"], o["shape"]) for o in outputs]

    if signature(gpu) != signature(cpu):
        result["detail"] = "the outputs differ in names, types or shapes from the CPU baseline's"
        return result
    bitwise = all(g["data"] == c["data"] for g, c in zip(gpu, cpu))  # noqa: B905 (Python 3.8)
    max_abs = 0.0
    max_rel = 0.0
    equal = True
    details = []
    for g, c in zip(gpu, cpu):  # noqa: B905 (Python 3.8)
        gv, cv = numbers(g), numbers(c)
        if gv is None or cv is None:
            if g["data"] != c["data"]:
                equal = False
                details.append("%s differs (compared as bytes)" % g["name"])
            continue
        for a, b in zip(gv, cv):  # noqa: B905 (Python 3.8)
            diff = abs(a - b)
            if diff != diff:  # NaN in one of them
                if not (a != a and b != b):
                    equal = False
                continue
            max_abs = max(max_abs, diff)
            if b != 0:
                max_rel = max(max_rel, diff / abs(b))
            if diff > tol_abs + tol_rel * abs(b):
                equal = False
        if not equal and not details:
            details.append("%s differs beyond the tolerance" % g["name"])
    result.update(
        equal=equal,
        bitwise_equal=bitwise,
        max_abs_diff=max_abs,
        max_rel_diff=max_rel,
        detail="; ".join(details),
    )
    return result


# --- node placement from the VERBOSE log ----------------------------------------------------------

PLACEMENT_ALL = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
PLACEMENT_SOME = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
ORT_MESSAGE = re.compile(r"\[(W|E|F):onnxruntime")


def nodes_per_provider(lines: List[str]) -> Dict[str, int]:
    """Count nodes per provider from ONNX Runtime's VERBOSE "Node placements" lines."""
    counts: Dict[str, int] = {}
    for line in lines:
        match = PLACEMENT_ALL.search(line) or PLACEMENT_SOME.search(line)
        if match:
            counts[match.group(1)] = counts.get(match.group(1), 0) + int(match.group(2))
    return counts


def untimed(line: str) -> str:
    """A log line without its timestamp (to drop repeats of the same message)."""
    return line[line.find("[") :] if "[" in line else line


def ort_messages(lines: List[str]) -> List[str]:
    """ONNX Runtime's own warning, error and fatal lines, as it wrote them."""
    return [line.strip() for line in lines if ORT_MESSAGE.search(line)][:50]


# --- the probe ----------------------------------------------------------------------------------


class Probe:
    """One probe run: load the library, the CPU baseline, the GPU retry, the strict run."""

    def __init__(self, request: Dict[str, Any]) -> None:
        self.request = request
        self.work_dir = request.get("work_dir") or tempfile.mkdtemp(prefix="gfd-capi-")
        self.own_work_dir = not request.get("work_dir")
        self.capture = Capture(self.work_dir)
        self.phases: List[Dict[str, Any]] = []
        self.notes: List[str] = []
        self.log_excerpt: List[str] = []
        self.api: Optional[Api] = None
        self.env = P()
        self.runtime: Dict[str, Any] = {
            "pid": os.getpid(),
            "python_version": sys.version.split()[0],
            "interpreter": sys.executable,
            "ort_location": request.get("lib_path"),
        }
        self.cost: Dict[str, Any] = {}
        self.model: Optional[Dict[str, Any]] = None
        self.inputs: List[Dict[str, Any]] = []
        self.output_names: List[str] = []
        self.buffers: List[bytes] = []
        self.cpu_outputs: Optional[List[Dict[str, Any]]] = None

    # phases
    def begin(self, name: str) -> None:
        """Start a phase: a PhaseMark, and fd 2 captured to its own file."""
        self.phases.append({"name": name, "start_s": now(), "end_s": None, "ok": None})
        self.capture.start(name)

    def end(self, ok: bool) -> List[str]:
        """End the current phase; return what ONNX Runtime wrote to stderr during it."""
        lines = self.capture.stop()
        mark = self.phases[-1]
        mark["end_s"] = now()
        mark["ok"] = ok
        emit({"event": "end", "phase": mark["name"], "ok": ok, "t": mark["end_s"]})
        seen = {untimed(line) for line in self.log_excerpt}
        for line in ort_messages(lines)[:20]:
            if untimed(line) not in seen:
                seen.add(untimed(line))
                self.log_excerpt.append(line)
        return lines

    # steps
    def load(self) -> bool:
        """dlopen the library, OrtGetApiBase, GetVersionString, GetApi, check the table."""
        lib_path = str(self.request.get("lib_path") or "")
        self.begin("import")
        started = time.monotonic()
        try:
            step("import", "loading %s" % lib_path)
            mode = getattr(os, "RTLD_NOW", 0) | getattr(os, "RTLD_LOCAL", 0)
            if sys.platform == "win32":
                library = ctypes.CDLL(lib_path, winmode=0)
            else:
                library = ctypes.CDLL(lib_path, mode=mode)
        except OSError as error:
            self.end(False)
            self.failure("start", "the ONNX Runtime library %s could not be loaded: %s" % (lib_path, error))
            return False
        try:
            step("import", "calling OrtGetApiBase in %s" % os.path.basename(lib_path))
            if not hasattr(library, "OrtGetApiBase"):
                raise RuntimeError("%s has no OrtGetApiBase: it is not an ONNX Runtime library" % lib_path)
            api = Api(library)
            self.runtime["ort_version"] = api.version
            step("import", "calling GetApi (ONNX Runtime %s)" % api.version)
            api.negotiate()
            step("import", "checking the OrtApi table (API %d)" % api.api_version)
            api.verify_table()
            self.runtime["available_providers"] = api.available_providers()
            self.runtime["build_info"] = "C API %d (library %s)" % (api.api_version, api.version)
            self.notes.append(
                "ONNX Runtime %s ran: the library %s, driven through its C API (API version %d)"
                % (api.version, lib_path, api.api_version)
            )
            self.notes.append(
                "the C API does not expose a session's active providers: they are inferred "
                "from ONNX Runtime's VERBOSE node placement lines and from the strict session"
            )
            step("import", "calling CreateEnv (VERBOSE)")
            api.call("CreateEnv", ORT_LOGGING_LEVEL_VERBOSE, b"gfd-capi-probe", ctypes.byref(self.env))
        except (RuntimeError, OrtError) as error:
            self.end(False)
            text = error.quoted() if isinstance(error, OrtError) else str(error)
            self.failure("error", text)
            return False
        self.api = api
        self.cost["import_s"] = time.monotonic() - started
        self.end(True)
        emit({"event": "runtime", "runtime": self.runtime})
        return True

    def failure(self, kind: str, sentence: str) -> None:
        """Record a failure the probe itself found (not a crash: the parent sees those)."""
        self.result_failure = {
            "kind": kind,
            "sentence": sentence,
            "phase": self.phases[-1]["name"] if self.phases else None,
        }
        emit({"event": "error", "kind": kind, "error": sentence})

    result_failure: Optional[Dict[str, Any]] = None

    def session_options(self, verbose: bool) -> Any:
        """CreateSessionOptions with the thread cap (and VERBOSE session logging when asked)."""
        api = self.api
        assert api is not None
        options = P()
        api.call("CreateSessionOptions", ctypes.byref(options))
        threads = int(self.request.get("threads", 2) or 0)
        api.call("SetIntraOpNumThreads", options, threads)
        api.call("SetInterOpNumThreads", options, 1)
        api.call(
            "SetSessionLogSeverityLevel",
            options,
            ORT_LOGGING_LEVEL_VERBOSE if verbose else ORT_LOGGING_LEVEL_WARNING,
        )
        return options

    def create_session(self, options: Any, phase: str) -> Tuple[Any, float]:
        """CreateSession from the model path; (session, seconds)."""
        api = self.api
        assert api is not None
        model = str(self.request["model"])
        path = model if sys.platform == "win32" else model.encode("utf-8")
        session = P()
        step(phase, "calling CreateSession on %s" % os.path.basename(model))
        started = time.monotonic()
        api.call("CreateSession", self.env, path, options, ctypes.byref(session))
        return session, time.monotonic() - started

    def describe_model(self, session: Any) -> bool:
        """Inputs and outputs from the session; the inputs built from the declared types and shapes."""
        api = self.api
        assert api is not None
        inputs, outputs = session_io(api, session)
        dims = {str(k): int(v) for k, v in (self.request.get("dims") or {}).items()}
        default_dim = int(self.request.get("default_dim", 1))
        problems = []
        for item in inputs:
            if item.get("error") or not ELEMENT_TYPES.get(item["element"], ("", "", 0))[1]:
                problems.append(
                    "input %r is of type %s, which this probe cannot make data for"
                    % (item["name"], item["dtype"])
                )
            item["resolved"] = resolve_shape(item["shape"], dims, default_dim)
        model = str(self.request["model"])
        size = os.path.getsize(model)
        sha = hashlib.sha256()
        with open(model, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        first = inputs[0]["resolved"] if inputs else []
        self.model = {
            "path": model,
            "sha256": sha.hexdigest(),
            "size_bytes": size,
            "inputs": [
                {"name": i["name"], "dtype": i["dtype"], "shape": i["shape"], "resolved_shape": i["resolved"]}
                for i in inputs
            ],
            "outputs": [{"name": o["name"], "dtype": o["dtype"], "shape": o["shape"]} for o in outputs],
            "batch_size": first[0] if first else None,
        }
        emit({"event": "model", "model": self.model})
        if problems:
            self.failure("unusable_model", "the model cannot be run this way: " + "; ".join(problems))
            return False
        rng = random.Random(int(self.request.get("seed", 0)))
        self.inputs = inputs
        self.buffers = [make_data(i["element"], product(i["resolved"]), rng) for i in inputs]
        self.output_names = [o["name"] for o in outputs]
        return True

    def measure(self, session: Any, prefix: str) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
        """Warm-up runs, then timed runs (run log at WARNING); latency and the last outputs."""
        api = self.api
        assert api is not None
        run_options = P()
        api.call("CreateRunOptions", ctypes.byref(run_options))
        api.call("RunOptionsSetRunLogSeverityLevel", run_options, ORT_LOGGING_LEVEL_WARNING)
        inputs = Inputs(api, self.inputs, self.buffers)
        try:
            warmup = int(self.request.get("warmup", 3))
            runs = max(1, int(self.request.get("runs", 20)))
            self.begin(prefix + ".warmup")
            step(prefix + ".warmup", "calling Run %d times (warm-up)" % warmup)
            outputs = run_once(api, session, run_options, inputs, self.output_names, keep=True)
            for _ in range(max(0, warmup - 1)):
                run_once(api, session, run_options, inputs, self.output_names, keep=False)
            self.end(True)
            self.begin(prefix + ".timed")
            step(prefix + ".timed", "calling Run %d times (timed)" % runs)
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                run_once(api, session, run_options, inputs, self.output_names, keep=False)
                times.append(time.perf_counter() - started)
            self.end(True)
            batch = self.model.get("batch_size") if self.model else None
            return latency(times, warmup, batch), outputs
        finally:
            inputs.release()
            api.release("RunOptions", run_options)

    def cpu_baseline(self) -> Dict[str, Any]:
        """The CPU provider only: session, metadata, warm-up, timed runs, output digests."""
        api = self.api
        assert api is not None
        # stage and verdict grade GPU attempts: the CPU baseline keeps "runtime_loaded" / "not_run".
        run: Dict[str, Any] = {
            "stage": "runtime_loaded",
            "requested_providers": ["CPUExecutionProvider"],
            "verdict": "not_run",
        }
        self.begin("cpu.session")
        options = session = None
        try:
            options = self.session_options(verbose=True)
            session, seconds = self.create_session(options, "cpu.session")
            lines = self.end(True)
            run["session_create_s"] = seconds
            self.cost["cpu_session_create_s"] = seconds
            run["nodes_per_provider"] = nodes_per_provider(lines)
            run["nodes_source"] = (
                "verbose log" if run["nodes_per_provider"] else "no node placement lines in the log"
            )
            run["active_providers"] = ["CPUExecutionProvider"]
            if not self.describe_model(session):
                run["error"] = self.result_failure["sentence"] if self.result_failure else "unusable model"
                return run
            if not self.request.get("cpu_baseline", True):
                return run
            stats, outputs = self.measure(session, "cpu")
            run["latency"] = stats
            run["outputs"] = [digest(o) for o in outputs]
            self.cpu_outputs = outputs
            self.store_baseline(outputs)
        except OrtError as error:
            lines = self.end(False) if self.capture.saved is not None else []
            run["error"] = error.quoted()
            run["ort_messages"] = ort_messages(lines)
        finally:
            api.release("Session", session)
            api.release("SessionOptions", options)
        return run

    def store_baseline(self, outputs: List[Dict[str, Any]]) -> None:
        """Write the CPU outputs (raw bytes + index) to baseline_dir for children that compare later."""
        folder = self.request.get("baseline_dir")
        if not folder:
            return
        os.makedirs(folder, exist_ok=True)
        index = []
        for number, output in enumerate(outputs):
            name = "capi-output-%d.bin" % number
            with open(os.path.join(folder, name), "wb") as handle:
                handle.write(output["data"])
            entry = {k: output[k] for k in ("name", "element", "dtype", "shape")}
            entry["file"] = name
            index.append(entry)
        with open(os.path.join(folder, "capi-outputs.json"), "w") as handle:
            json.dump(index, handle)

    def load_baseline(self) -> Optional[List[Dict[str, Any]]]:
        """The CPU outputs of an earlier child, from baseline_dir (None when there are none)."""
        folder = self.request.get("baseline_dir")
        if not folder or not os.path.exists(os.path.join(folder, "capi-outputs.json")):
            return None
        with open(os.path.join(folder, "capi-outputs.json")) as handle:
            index = json.load(handle)
        outputs = []
        for item in index:
            with open(os.path.join(folder, item["file"]), "rb") as handle:
                item["data"] = handle.read()
            outputs.append(item)
        return outputs

    def append_providers(self, options: Any, phase: str) -> Tuple[List[str], List[str], bool]:
        """Append the requested GPU providers; (appended, ONNX Runtime's errors, providers library loaded)."""
        api = self.api
        assert api is not None
        appended: List[str] = []
        errors: List[str] = []
        for provider in self.request.get("providers") or ["CUDAExecutionProvider", "CPUExecutionProvider"]:
            if provider == "CPUExecutionProvider":
                continue
            step(phase, "appending %s" % provider)
            offset = self.capture.offset()
            try:
                if provider == "CUDAExecutionProvider":
                    self.append_cuda(options)
                elif provider == "TensorrtExecutionProvider":
                    self.append_tensorrt(options)
                else:
                    errors.append("%s: this probe appends only the CUDA and TensorRT providers" % provider)
                    continue
                appended.append(provider)
            except OrtError as error:
                text = "%s: %s" % (provider, error.quoted())
                logged = [line for line in self.capture.errors_since(offset) if line not in text]
                if logged:
                    text += " (ONNX Runtime logged: %s)" % " | ".join(logged[:3])
                errors.append(text)
            emit(
                {
                    "event": "appended",
                    "provider": provider,
                    "ok": provider in appended,
                    "error": errors[-1] if errors and provider not in appended else None,
                }
            )
        return appended, errors, bool(appended)

    def append_cuda(self, options: Any) -> None:
        """CreateCUDAProviderOptions, SessionOptionsAppendExecutionProvider_CUDA_V2 (or the old export)."""
        api = self.api
        assert api is not None
        if api.api_version < API_CUDA_V2:
            legacy = getattr(api.library, "OrtSessionOptionsAppendExecutionProvider_CUDA", None)
            if legacy is None:
                raise OrtError(
                    "OrtSessionOptionsAppendExecutionProvider_CUDA",
                    9,
                    "this library (API %d) exports no CUDA provider entry point" % api.api_version,
                )
            legacy.restype = P
            legacy.argtypes = [P, ctypes.c_int]
            self.notes.append(
                "ONNX Runtime %s (C API %d) predates "
                "SessionOptionsAppendExecutionProvider_CUDA_V2; "
                "the exported OrtSessionOptionsAppendExecutionProvider_CUDA was used"
                % (api.version, api.api_version)
            )
            api.check("OrtSessionOptionsAppendExecutionProvider_CUDA", legacy(options, 0))
            return
        cuda = P()
        api.call("CreateCUDAProviderOptions", ctypes.byref(cuda))
        try:
            # The defaults (device 0) are what a server gets; no UpdateCUDAProviderOptions needed.
            api.call("SessionOptionsAppendExecutionProvider_CUDA_V2", options, cuda)
        finally:
            api.fn("ReleaseCUDAProviderOptions")(cuda) if cuda else None

    def append_tensorrt(self, options: Any) -> None:
        """CreateTensorRTProviderOptions (engine cache), SessionOptionsAppendExecutionProvider_TensorRT_V2."""
        api = self.api
        assert api is not None
        trt = P()
        api.call("CreateTensorRTProviderOptions", ctypes.byref(trt))
        try:
            keys = ["device_id"]
            values = ["0"]
            cache = self.request.get("trt_cache_dir")
            if cache:
                keys += ["trt_engine_cache_enable", "trt_engine_cache_path"]
                values += ["1", str(cache)]
            api.call("UpdateTensorRTProviderOptions", trt, c_strings(keys), c_strings(values), len(keys))
            api.call("SessionOptionsAppendExecutionProvider_TensorRT_V2", options, trt)
        finally:
            api.fn("ReleaseTensorRTProviderOptions")(trt) if trt else None

    def gpu_retry(self) -> Dict[str, Any]:
        """Providers as requested (GPU first, then the CPU), VERBOSE session log, runs, comparison, strict."""
        api = self.api
        assert api is not None
        requested = list(self.request.get("providers") or ["CUDAExecutionProvider", "CPUExecutionProvider"])
        run: Dict[str, Any] = {
            "stage": "runtime_loaded",
            "requested_providers": requested,
            "verdict": "failed",
        }
        if self.request.get("test_mode") == "crash":
            self.begin("gpu.session")
            step("gpu.session", "calling CreateSession with the CUDA provider (TEST: crashing on purpose)")
            ctypes.string_at(0)  # a real NULL dereference: SIGSEGV
        self.begin("gpu.session")
        options = session = None
        lines: List[str] = []
        try:
            options = self.session_options(verbose=True)
            appended, errors, _ = self.append_providers(options, "gpu.session")
            if errors:
                run["error"] = "; ".join(errors)
            if appended:
                run["stage"] = "libraries_loaded"
            session, seconds = self.create_session(options, "gpu.session")
            lines = self.end(True)
            run["session_create_s"] = seconds
            self.cost["gpu_session_create_s"] = seconds
        except OrtError as error:
            lines = self.end(False)
            run["error"] = error.quoted()
        finally:
            api.release("SessionOptions", options)
        counts = nodes_per_provider(lines)
        run["nodes_per_provider"] = counts
        run["nodes_source"] = (
            "verbose log"
            if counts
            else "ONNX Runtime printed no node placement lines during session creation"
        )
        run["ort_messages"] = ort_messages(lines)
        gpu_nodes = sum(n for p, n in counts.items() if p in GPU_PROVIDERS)
        if session:
            active = [p for p in requested if p in counts or p == "CPUExecutionProvider"]
            if not counts:
                active = ["CPUExecutionProvider"]
            run["active_providers"] = active
            if gpu_nodes:
                run["stage"] = "session_created"
            elif run["stage"] == "libraries_loaded" and self.provider_created(lines):
                run["stage"] = "provider_created"
            try:
                stats, outputs = self.measure(session, "gpu")
                run["latency"] = stats
                run["outputs"] = [digest(o) for o in outputs]
                baseline = self.cpu_outputs if self.cpu_outputs is not None else self.load_baseline()
                if baseline is not None:
                    run["comparison"] = compare(
                        outputs,
                        baseline,
                        float(self.request.get("tolerance_abs", 1e-3)),
                        float(self.request.get("tolerance_rel", 1e-3)),
                    )
                if gpu_nodes:
                    run["stage"] = "inference_on_gpu"
                    run["verdict"] = "gpu_active"
                else:
                    run["verdict"] = "fell_back_to_cpu"
            except OrtError as error:
                if self.capture.saved is not None:
                    self.end(False)
                run["error"] = error.quoted()
                run["verdict"] = "failed"
            finally:
                api.release("Session", session)
        if self.request.get("strict", True):
            run["strict"] = self.strict_run()
        run["gpu_memory"] = gpu_memory()
        return run

    def provider_created(self, lines: List[str]) -> bool:
        """The GPU provider got past its creation: no "Failed to create" line in the log."""
        text = "\n".join(lines)
        return (
            "Failed to create" not in text
            and "Failed to load" not in text
            and "CUDA_PATH is set" not in text
            and "cudaErrorNoDevice" not in text
            and "cuda_call" not in text.lower()
        )

    def strict_run(self) -> Dict[str, Any]:
        """session.disable_cpu_ep_fallback = 1: a fallback becomes ONNX Runtime's own error."""
        api = self.api
        assert api is not None
        self.begin("gpu.strict")
        options = session = None
        result: Dict[str, Any] = {"attempted": True, "session_created": False, "error": None}
        try:
            options = self.session_options(verbose=False)
            step("gpu.strict", "calling AddSessionConfigEntry(session.disable_cpu_ep_fallback, 1)")
            api.call("AddSessionConfigEntry", options, b"session.disable_cpu_ep_fallback", b"1")
            _appended, errors, _ = self.append_providers(options, "gpu.strict")
            session, _seconds = self.create_session(options, "gpu.strict")
            result["session_created"] = True
            if errors:
                result["error"] = errors[0]
            self.end(True)
        except OrtError as error:
            self.end(False)
            result["error"] = error.quoted()
        finally:
            api.release("Session", session)
            api.release("SessionOptions", options)
        return result

    def finish(self) -> None:
        """ReleaseEnv; remove our own work folder."""
        if self.api is not None and self.env:
            self.api.release("Env", self.env)
            self.env = P()
        if self.own_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)


def gpu_memory() -> Dict[str, Any]:
    """GPU memory held by this process and by others, from NVML (nvmlDeviceGetComputeRunningProcesses)."""
    name = "nvml.dll" if sys.platform == "win32" else "libnvidia-ml.so.1"
    try:
        nvml = ctypes.CDLL(name)
    except OSError as error:
        return {"note": "NVML could not be loaded (%s): %s" % (name, error)}
    try:
        if nvml.nvmlInit_v2() != 0:
            return {"note": "nvmlInit_v2 failed"}
    except AttributeError:
        return {"note": "%s has no nvmlInit_v2" % name}

    class ProcessInfo(ctypes.Structure):
        _fields_ = [
            ("pid", ctypes.c_uint),
            ("usedGpuMemory", ctypes.c_ulonglong),
            ("gpuInstanceId", ctypes.c_uint),
            ("computeInstanceId", ctypes.c_uint),
        ]

    mine = others = total = 0
    try:
        count = ctypes.c_uint(0)
        nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
        for index in range(count.value):
            device = P()
            if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(device)) != 0:
                continue
            memory = (ctypes.c_ulonglong * 3)()
            if nvml.nvmlDeviceGetMemoryInfo(device, memory) == 0:
                total += memory[0]
            function = getattr(nvml, "nvmlDeviceGetComputeRunningProcesses_v3", None)
            if function is None:
                continue
            size = ctypes.c_uint(64)
            infos = (ProcessInfo * 64)()
            if function(device, ctypes.byref(size), infos) != 0:
                continue
            for i in range(min(size.value, 64)):
                used = infos[i].usedGpuMemory
                if used >= (1 << 63):  # NVML_VALUE_NOT_AVAILABLE
                    continue
                if infos[i].pid == os.getpid():
                    mine += used
                else:
                    others += used
    finally:
        nvml.nvmlShutdown()
    return {"probe_bytes": mine, "others_bytes": others, "total_bytes": total, "note": "NVML, per process"}


def test_misbehaviour(mode: Optional[str]) -> None:
    """TEST ONLY: hang, flood or print garbage on purpose (crash is done inside the GPU retry)."""
    if mode == "hang":
        emit({"event": "begin", "phase": "gpu.session", "step": "TEST: hanging on purpose", "t": now()})
        time.sleep(3600)
    elif mode == "flood":
        line = "x" * 1023 + "\n"
        for _ in range(8 * 1024):
            sys.stdout.write(line)
        sys.stdout.flush()
        sys.exit(0)
    elif mode == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
        sys.exit(0)


def main() -> int:
    """Read the request, run the probe, write the result."""
    try:
        request = json.loads(sys.stdin.read() or "{}")
    except ValueError as error:
        emit({"event": "error", "kind": "error", "error": "the request is not JSON: %s" % error})
        return 2
    emit({"event": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "t": now()})
    nice = int(request.get("nice", 0) or 0)
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    test_misbehaviour(request.get("test_mode"))
    probe = Probe(request)
    result: Dict[str, Any] = {"kind": "capi", "schema": 1, "completed": False}
    strategy: Dict[str, Any] = {
        "name": request.get("strategy") or "as_is",
        "stage": "nothing",
        "description": "the C API of %s, driven through ctypes" % request.get("lib_path"),
    }
    try:
        if probe.load():
            strategy["stage"] = "runtime_loaded"
            cpu = probe.cpu_baseline()
            result["cpu"] = cpu
            usable = probe.model is not None and probe.result_failure is None and not cpu.get("error")
            if usable and request.get("gpu_retry", True):
                gpu = probe.gpu_retry()
                strategy["gpu"] = gpu
                strategy["stage"] = gpu["stage"]
            result["completed"] = usable
    finally:
        probe.finish()
    result.update(
        runtime=probe.runtime,
        model=probe.model,
        strategies=[strategy],
        failure=probe.result_failure,
        phases=probe.phases,
        cost=probe.cost,
        notes=probe.notes,
        log_excerpt=probe.log_excerpt[:40],
    )
    emit({"event": "result", "result": result})
    emit({"event": "done", "t": now()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
