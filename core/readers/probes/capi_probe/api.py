"""The OrtApi function table of a loaded ONNX Runtime library, called by name through ctypes.

Indices and signatures from onnxruntime_c_api.h (see core/readers/inference/capi_layout.py for the whole
table and its source); OrtError carries ONNX Runtime's own code and message.
"""

from __future__ import annotations

import ctypes
import re
import sys
from typing import TypedDict

# --- the OrtApi function table ----------------------------------------------------------------
# Indices into struct OrtApi, from include/onnxruntime/core/session/onnxruntime_c_api.h
# (microsoft/onnxruntime, ORT_API_VERSION 13 header, commit 0017800f6539412b364502d8b59c11463a6411e6).
# The table is append-only: an index never changes in a later release. The whole table is kept as
# data in core/readers/inference/capi_layout.py; a test checks that these agree with it.
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
class Request(TypedDict, total=False):
    """What the parent asks (core/readers/inference/capi.py): ProbeRequest's JSON plus the libPath
    to load, the model and the work folder. Every key may be missing: readers give the default."""

    lib_path: str
    work_dir: str | None
    model: str
    runs: int
    steady: bool
    warmup: int
    dims: dict[str, int]
    default_dim: int
    shapes: dict[str, list[int]]
    input_ranges: dict[str, list[int]]
    providers: list[str]
    cpu_baseline: bool
    gpu_retry: bool
    strict: bool
    strategy: str
    threads: int
    nice: int
    tolerance_abs: float
    tolerance_rel: float
    baseline_dir: str | None
    seed: int
    trt_cache_dir: str | None
    selection: str | None
    test_mode: str | None


class _Declared(TypedDict):
    name: str
    element: int
    shape: list[int | str | None]
    dtype: str


class Declared(_Declared, total=False):
    """A session's declared input or output: name, ONNX element type, dims (a symbol's name or None
    where unknown), the type's name; ``error`` where it is not a tensor, ``resolved`` once the probe
    chose concrete dims for an input."""

    error: str
    resolved: list[int]


class Output(TypedDict):
    """One output tensor of a Run as the probe keeps it: its name, ONNX element type (and that type's
    name), its shape, and its raw bytes (empty for a type the probe does not decode)."""

    name: str
    element: int
    dtype: str
    shape: list[int]
    data: bytes


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

SIGNATURES: dict[str, tuple[type[ctypes._CData] | None, list[type[ctypes._CData]]]] = {
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


# --- the API ----------------------------------------------------------------------------------


class Api:
    """The OrtApi function table of a loaded library, called by name through ctypes."""

    def __init__(self, library: ctypes.CDLL) -> None:
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
        self.table: ctypes._Pointer[ctypes.c_void_p] | None = None
        self.functions: dict[str, ctypes._CFunctionType] = {}

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

    def fn(self, name: str) -> ctypes._CFunctionType:
        """The function pointer ``name`` of the table, typed from SIGNATURES."""
        if name not in self.functions:
            restype, argtypes = SIGNATURES[name]
            if self.table is None:
                raise RuntimeError("the OrtApi table is read before negotiate()")
            address = self.table[API_INDEX[name]]
            if not address:
                raise OrtError(name, 9, "the OrtApi table of this library has no %s" % name)
            self.functions[name] = FUNCTION_TYPE(restype, *argtypes)(address)
        return self.functions[name]

    def call(self, name: str, *args: object) -> None:
        """Call a status-returning function; raise OrtError with ONNX Runtime's own message."""
        status = self.fn(name)(*args)
        self.check(name, status)

    def check(self, name: str, status: int | None) -> None:
        """Turn a non-NULL OrtStatus* into OrtError (and release it)."""
        if status:
            code = int(self.fn("GetErrorCode")(status))
            raw = self.fn("GetErrorMessage")(status)
            message = raw.decode("utf-8", "replace") if raw else ""
            self.fn("ReleaseStatus")(status)
            raise OrtError(name, code, message)

    def release(self, name: str, pointer: object) -> None:
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

    def available_providers(self) -> list[str]:
        """GetAvailableProviders: compiled in, not proof that they can run."""
        names = ctypes.POINTER(ctypes.c_char_p)()
        count = ctypes.c_int(0)
        self.call("GetAvailableProviders", ctypes.byref(names), ctypes.byref(count))
        result = [names[i].decode("utf-8", "replace") for i in range(count.value)]
        self.call("ReleaseAvailableProviders", names, count)
        return result


def c_strings(values: list[str]) -> ctypes.Array[ctypes.c_char_p]:
    """A char*[] of UTF-8 strings."""
    return (ctypes.c_char_p * len(values))(*[v.encode("utf-8") for v in values])
