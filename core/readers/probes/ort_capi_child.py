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
core/readers/inference/capi_layout.py for the whole table and its source): OrtGetApiBase ->
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

import os
import sys

# Run by path, by any Python 3.8+ (even without the tool installed): this folder's capi_probe
# package is made importable, and its parts import each other relatively.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    import importlib

    sys.exit(importlib.import_module("capi_probe.main").main())
