"""The GPU retry through the C API: append the CUDA (or TensorRT) provider, the session, the strict run."""

from __future__ import annotations

import ctypes
import os
import sys

from .api import API_CUDA_V2, GPU_PROVIDERS, OrtError, P, c_strings
from .output import emit, step
from .probe import Probe
from .stats import compare, digest, nodes_per_provider, ort_messages


class GpuProbe(Probe):
    """The probe with its GPU retry and strict run."""

    def append_providers(self, options: ctypes.c_void_p, phase: str) -> tuple[list[str], list[str], bool]:
        """Append the requested GPU providers; (appended, ONNX Runtime's errors, providers library loaded)."""
        api = self.api
        assert api is not None
        appended: list[str] = []
        errors: list[str] = []
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

    def append_cuda(self, options: ctypes.c_void_p) -> None:
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

    def append_tensorrt(self, options: ctypes.c_void_p) -> None:
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

    def gpu_retry(self) -> dict[str, object]:
        """Providers as requested (GPU first, then the CPU), VERBOSE session log, runs, comparison, strict."""
        api = self.api
        assert api is not None
        requested = list(self.request.get("providers") or ["CUDAExecutionProvider", "CPUExecutionProvider"])
        run: dict[str, object] = {
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
        lines: list[str] = []
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

    def provider_created(self, lines: list[str]) -> bool:
        """The GPU provider got past its creation: no "Failed to create" line in the log."""
        text = "\n".join(lines)
        return (
            "Failed to create" not in text
            and "Failed to load" not in text
            and "CUDA_PATH is set" not in text
            and "cudaErrorNoDevice" not in text
            and "cuda_call" not in text.lower()
        )

    def strict_run(self) -> dict[str, object]:
        """session.disable_cpu_ep_fallback = 1: a fallback becomes ONNX Runtime's own error."""
        api = self.api
        assert api is not None
        self.begin("gpu.strict")
        options = session = None
        result: dict[str, object] = {"attempted": True, "session_created": False, "error": None}
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


def gpu_memory() -> dict[str, object]:
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
