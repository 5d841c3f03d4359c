"""Native child probe: load the NVIDIA driver and CUDA libraries, report what each says.

SELF-CONTAINED: the standard library only, Python 3.8 or newer. It is run by path by
the application's interpreter (or ours), never imported by the tool:

    python native_child.py < request.json

The request is one JSON object on stdin::

    {"libraries": ["libcudart.so.12", "/opt/venv/.../libcudnn.so.9"], "libcuda": true}

The reply is JSON lines on stdout, each flushed at once so that a crash leaves the
progress behind: a "begin" line names the step about to run ("loading libcudnn.so.9"),
the line after it gives its result, and the last line is {"event": "done"}. If the
process dies (a missing libcudnn_graph makes cudnnGetVersion abort the process), the
last "begin" without a result names the step that killed it.

By hand, the same as: `python -c "import ctypes; ctypes.CDLL('libcuda.so.1')"`, and on
Linux `LD_DEBUG=libs python -c "import ctypes; ctypes.CDLL('libcudnn.so.9')"`.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
from typing import Mapping

# CUresult / cudaError_t numbers we name ourselves when libcuda cannot (cuda.h,
# driver_types.h). 35 is the runtime's cudaErrorInsufficientDriver.
CU_RESULT_NAMES = {
    0: "CUDA_SUCCESS",
    1: "CUDA_ERROR_INVALID_VALUE",
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    4: "CUDA_ERROR_DEINITIALIZED",
    34: "CUDA_ERROR_STUB_LIBRARY",
    35: "cudaErrorInsufficientDriver",
    46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
    304: "CUDA_ERROR_OPERATING_SYSTEM",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}

CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
RTLD_DI_LINKMAP = 2

# cuDNN's sub-libraries, by major; the first of each list is the one whose absence
# makes the version call abort the process (compat-reference 3.2, "Probe pitfall").
CUDNN_COMPANIONS_LINUX = {
    9: ["graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic"],
    8: ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"],
}


def emit(obj: Mapping[str, object]) -> None:
    """Write one JSON line and flush it, so it survives a crash of this process."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=True, sort_keys=True) + "\n")
    sys.stdout.flush()


def begin(step: str) -> None:
    """Announce the step about to run; the parent blames it if nothing follows."""
    emit({"event": "begin", "step": step})


def load(name: str) -> tuple[ctypes.CDLL | None, str | None]:
    """Load a library as the application would; return (library, None) or (None, error)."""
    try:
        if sys.platform == "win32":
            # winmode=0: the classic LoadLibrary search order (PATH included), as native code gets.
            return ctypes.CDLL(name, winmode=0), None
        return ctypes.CDLL(name), None
    except OSError as error:
        return None, str(error)


class _LinkMap(ctypes.Structure):
    _fields_ = [
        ("l_addr", ctypes.c_void_p),
        ("l_name", ctypes.c_char_p),
        ("l_ld", ctypes.c_void_p),
        ("l_next", ctypes.c_void_p),
        ("l_prev", ctypes.c_void_p),
    ]


def _dlinfo_function() -> ctypes._NamedFuncPointer | None:
    for candidate in (None, "libdl.so.2"):
        try:
            return ctypes.CDLL(candidate).dlinfo
        except (OSError, AttributeError):
            continue
    return None


def loaded_path(library: ctypes.CDLL, name: str) -> str | None:
    """The file the loader took: dlinfo's link map (Linux), GetModuleFileName (Windows)."""
    if sys.platform == "win32":
        try:
            buffer = ctypes.create_unicode_buffer(32768)
            kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
            kernel32.GetModuleFileNameW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32]
            if kernel32.GetModuleFileNameW(ctypes.c_void_p(library._handle), buffer, 32768):
                return buffer.value
        except (OSError, AttributeError):
            pass
        return None
    dlinfo = _dlinfo_function()
    if dlinfo is not None:
        pointer = ctypes.POINTER(_LinkMap)()
        dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        status = dlinfo(ctypes.c_void_p(library._handle), RTLD_DI_LINKMAP, ctypes.byref(pointer))
        if status == 0 and pointer and pointer.contents.l_name:
            raw: bytes = pointer.contents.l_name
            return os.path.abspath(raw.decode("utf-8", "replace"))
    return _path_from_maps(name)


def _path_from_maps(name: str) -> str | None:
    base = os.path.basename(name).split(".so")[0] + ".so"
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith(base):
                    return parts[5].strip()
    except OSError:
        pass
    return None


def attempt_record(
    name: str, kind: str, library: ctypes.CDLL | None, error: str | None, path: str | None
) -> dict[str, object]:
    """A fresh record of one load attempt, in the shape NativeFacts.LoadAttempt reads."""
    return {
        "name": name,
        "kind": kind,
        "loaded": library is not None,
        "path": path,
        "error": error,
        "version": None,
        "version_rc": None,
        "driver_version": None,
        "cudart_version": None,
        "missing_companions": [],
        "skipped": None,
    }


def int_call(library: ctypes.CDLL, symbol: str) -> tuple[int | None, int | None]:
    """Call ``symbol(int*)``; return (status, value) or (None, None) when it is absent."""
    function = getattr(library, symbol, None)
    if function is None:
        return None, None
    value = ctypes.c_int(0)
    function.restype = ctypes.c_int
    status = function(ctypes.byref(value))
    return status, value.value


def probe_libcuda() -> None:
    """Load the driver library, read cuDriverGetVersion, run cuInit(0), count devices."""
    name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    begin("loading " + name)
    library, error = load(name)
    record = attempt_record(name, "libcuda", library, error, loaded_path(library, name) if library else None)
    result: dict[str, object] = {"event": "libcuda", "attempt": record, "cu_driver_version": None}
    if library is None:
        emit(result)
        return
    begin("calling cuDriverGetVersion in " + name)
    status, version = int_call(library, "cuDriverGetVersion")
    record["version_rc"] = status
    if status == 0:
        record["version"] = version
        result["cu_driver_version"] = version
    emit(result)

    begin("calling cuInit(0) in " + name)
    init = getattr(library, "cuInit", None)
    if init is None:
        emit({"event": "cu_init", "result": None, "name": "cuInit not found in " + name})
        return
    init.restype = ctypes.c_int
    init.argtypes = [ctypes.c_uint]
    code = init(0)
    emit({"event": "cu_init", "result": code, "name": error_name(library, code)})
    if code != 0:
        return
    begin("calling cuDeviceGetCount in " + name)
    status, count = int_call(library, "cuDeviceGetCount")
    devices = []
    if status == 0 and count is not None:
        for ordinal in range(count):
            devices.append(describe_device(library, ordinal))
    emit({"event": "cu_devices", "count": count if status == 0 else None, "devices": devices})


def error_name(library: ctypes.CDLL, code: int) -> str:
    """cuGetErrorName of a CUresult, or our own name when libcuda cannot say."""
    get_name = getattr(library, "cuGetErrorName", None)
    if get_name is not None:
        text = ctypes.c_char_p()
        get_name.restype = ctypes.c_int
        get_name.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        if get_name(code, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode("ascii", "replace")
    return CU_RESULT_NAMES.get(code, "CUresult " + str(code))


def describe_device(library: ctypes.CDLL, ordinal: int) -> list[str | int]:
    """[name, cc major, cc minor] of one device (cuDeviceGetName, attributes 75/76)."""
    device = ctypes.c_int(0)
    if library.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
        return ["device " + str(ordinal), -1, -1]
    name = ctypes.create_string_buffer(256)
    get_name = getattr(library, "cuDeviceGetName", None)
    if get_name is None or get_name(name, 256, device) != 0:
        name.value = b"?"
    cc = []
    for attribute in (
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    ):
        value = ctypes.c_int(-1)
        library.cuDeviceGetAttribute(ctypes.byref(value), attribute, device)
        cc.append(value.value)
    return [name.value.decode("utf-8", "replace"), cc[0], cc[1]]


def kind_of(name: str) -> str:
    """The kind of library: "cudart", "cudnn" (the main library, not a sub-library) or "library"."""
    base = os.path.basename(name).lower()
    if "cudart" in base:
        return "cudart"
    if re.match(r"^(lib)?cudnn(64_\d+\.dll|\.so.*|\.dll)$", base):
        return "cudnn"
    return "library"


def probe_cudart(name: str, library: ctypes.CDLL, record: dict[str, object]) -> None:
    """cudaRuntimeGetVersion and cudaDriverGetVersion (0 when there is no driver)."""
    begin("calling cudaRuntimeGetVersion in " + name)
    status, version = int_call(library, "cudaRuntimeGetVersion")
    record["version_rc"] = status
    if status == 0:
        record["version"] = version
    begin("calling cudaDriverGetVersion in " + name)
    status, driver = int_call(library, "cudaDriverGetVersion")
    if status == 0:
        record["driver_version"] = driver


def cudnn_major(name: str, path: str | None) -> int | None:
    """The cuDNN major from the name asked for or the file loaded (libcudnn.so.9 -> 9)."""
    for text in (os.path.basename(name), os.path.basename(os.path.realpath(path or name))):
        match = re.search(r"\.so\.(\d+)", text) or re.search(r"cudnn64_(\d+)\.dll", text, re.I)
        if match:
            return int(match.group(1))
    return None


def companion_files(major: int, directory: str) -> list[tuple[str, str]]:
    """cuDNN's sub-libraries expected next to it: (part, path) pairs."""
    parts = CUDNN_COMPANIONS_LINUX.get(major, [])
    if sys.platform == "win32":
        return [(part, os.path.join(directory, "cudnn_%s64_%d.dll" % (part, major))) for part in parts]
    return [(part, os.path.join(directory, "libcudnn_%s.so.%d" % (part, major))) for part in parts]


def probe_cudnn(name: str, library: ctypes.CDLL, record: dict[str, object]) -> None:
    """Check the sub-libraries first; call cudnnGetVersion only when it cannot abort us."""
    recorded = record["path"]
    path = recorded if isinstance(recorded, str) else None
    major = cudnn_major(name, path)
    directory = os.path.dirname(path) if path else None
    if major is None or directory is None:
        record["skipped"] = "the cuDNN major or its directory is unknown; the version call was not made"
        return
    companions = companion_files(major, directory)
    record["missing_companions"] = [os.path.basename(p) for _, p in companions if not os.path.exists(p)]
    critical = companions[0][1] if companions else None
    if critical is not None:
        begin("loading " + os.path.basename(critical) + " next to " + name)
        target = critical if os.path.exists(critical) else os.path.basename(critical)
        companion, error = load(target)
        if companion is None:
            record["skipped"] = (
                "%s could not be loaded (%s); calling cudnnGetVersion would abort the process"
                % (os.path.basename(critical), error)
            )
            return
    begin("calling cudnnGetVersion in " + name)
    get_version = getattr(library, "cudnnGetVersion", None)
    if get_version is not None:
        get_version.restype = ctypes.c_size_t
        record["version"] = int(get_version())
    begin("calling cudnnGetCudartVersion in " + name)
    get_cudart = getattr(library, "cudnnGetCudartVersion", None)
    if get_cudart is not None:
        get_cudart.restype = ctypes.c_size_t
        record["cudart_version"] = int(get_cudart())


def probe_library(name: str) -> None:
    """Load one requested library, report where from, and its version where safe."""
    kind = kind_of(name)
    begin("loading " + name)
    library, error = load(name)
    record = attempt_record(name, kind, library, error, loaded_path(library, name) if library else None)
    if library is not None:
        # Provisional: if a version call below kills the process, this much is known.
        emit({"event": "loaded", "attempt": record})
        if kind == "cudart":
            probe_cudart(name, library, record)
        elif kind == "cudnn":
            probe_cudnn(name, library, record)
    emit({"event": "attempt", "attempt": record})


def hello():
    # type: () -> None
    """The first line: which interpreter runs the probe."""
    emit(
        {
            "event": "hello",
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "platform": sys.platform,
        }
    )


def main() -> int:
    """Read the request, probe the driver, then the libraries (cuDNN last), say "done".

    With ``--driver-first`` the driver is probed before the request is read: the parent
    starts this child early and sends the libraries to load once it has resolved them, so
    the interpreter's start-up and the driver's own (cuInit can take a while) overlap with
    the parent's work.
    """
    driver_first = "--driver-first" in sys.argv[1:]
    if driver_first:
        hello()
        probe_libcuda()
    try:
        request = json.loads(sys.stdin.read() or "{}")
    except ValueError as error:
        emit({"event": "error", "error": "the request is not JSON: %s" % error})
        return 2
    if not driver_first:
        hello()
        if request.get("libcuda", True):
            probe_libcuda()
    names = [str(name) for name in request.get("libraries", [])]
    # cuDNN last: of everything here, it is what can take the whole process down.
    ordered = [n for n in names if kind_of(n) != "cudnn"] + [n for n in names if kind_of(n) == "cudnn"]
    for name in ordered:
        probe_library(name)
    emit({"event": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
