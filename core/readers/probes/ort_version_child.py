"""Read an ONNX Runtime C library's own version through its C API, in a child process.

SELF-CONTAINED: the standard library only, Python 3.8 or newer. Run by path, never imported:

    python ort_version_child.py /opt/bareun/lib/libonnxruntime.so.1.23.2

It loads the library and calls ``OrtGetApiBase()->GetVersionString()`` (onnxruntime_c_api.h:
``struct OrtApiBase { const OrtApi* (*GetApi)(uint32_t); const char* (*GetVersionString)(void); }``),
then prints one JSON line: ``{"version": "1.23.2"}``, or ``{"error": "..."}`` with exit status 3.
Loading runs the library's initialisers, which is why this is a child: a broken library can
only take this process down. By hand, the same as:
``python3 -c "import ctypes; l=ctypes.CDLL('LIB'); ..."`` (this file is that one-liner, spelt out).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys


class OrtApiBase(ctypes.Structure):
    """The two entry points every ONNX Runtime release exports first (ABI-stable)."""

    _fields_ = [
        ("GetApi", ctypes.c_void_p),
        ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p)),
    ]


def read_version(path: str) -> str:
    """The version string the library reports about itself."""
    if sys.platform == "win32":
        folder = os.path.dirname(os.path.abspath(path))
        if hasattr(os, "add_dll_directory"):
            os.add_dll_directory(folder)
        library = ctypes.CDLL(path, winmode=0)
    else:
        library = ctypes.CDLL(path)
    get_base = library.OrtGetApiBase
    get_base.restype = ctypes.POINTER(OrtApiBase)
    get_base.argtypes = []
    base = get_base()
    if not base:
        raise RuntimeError("OrtGetApiBase() returned NULL")
    raw = base.contents.GetVersionString()
    if not raw:
        raise RuntimeError("GetVersionString() returned NULL")
    return str(raw.decode("utf-8", errors="replace"))


def main(argv: list[str]) -> int:
    """Print the version of the library named in argv[1] as one JSON line."""
    if len(argv) != 2:
        sys.stdout.write(json.dumps({"error": "usage: ort_version_child.py LIBRARY"}) + "\n")
        return 2
    try:
        version = read_version(argv[1])
    except (OSError, AttributeError, RuntimeError, ValueError) as error:
        sys.stdout.write(json.dumps({"error": f"{type(error).__name__}: {error}"}) + "\n")
        return 3
    sys.stdout.write(json.dumps({"version": version}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
