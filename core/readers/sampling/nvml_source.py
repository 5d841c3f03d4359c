"""GPU samples from NVML (nvidia-ml-py) in our own process; NVML creates no CUDA context.

See core/readers/sampling/sources.py for the interface. Every NVML error is a status, never an
exception; what NVML cannot tell reads ``None``, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fallback_doctor.core.readers.knowledge.nvml_errors import NVML_ERRORS, describe_nvml_error
from fallback_doctor.core.readers.sampling.sample import (
    SOURCE_ERROR,
    SOURCE_FINISHED,
    SOURCE_NOT_STARTED,
    SOURCE_OK,
    SOURCE_UNAVAILABLE,
    GpuSample,
    SourceStatus,
)

_MIB = 1024 * 1024
# NVML return codes after which a GPU cannot be read any more (GPU lost, reset required, …).
_FATAL_NVML = frozenset({1, 9, 12, 15, 16, 18})
_NVML_NOT_SUPPORTED = 3


def nvml_unavailable_status(code: int | None, text: str | None) -> SourceStatus:
    """The status of an NVML that could not start: its meaning in words, the NVML error name."""
    meaning = describe_nvml_error(code, text)
    reason = meaning.meaning
    known = code is not None and code in NVML_ERRORS
    words = {"id": f"evidence.nvml.{meaning.status}", "params": {}} if known else None
    return SourceStatus("nvml", SOURCE_UNAVAILABLE, meaning.status, reason, reason_words=words)


class NvmlSource:
    """GPU readings from NVML (nvidia-ml-py): utilization, memory (whole GPU and by PID), etc.

    By hand: `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total,
    temperature.gpu,clocks.sm,power.draw --format=csv -lms 100` and
    `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`.
    """

    def __init__(
        self, indices: Sequence[int] | None = None, *, nvml: Any = None, proc_root: str = "/"
    ) -> None:
        """``indices``: NVML indices to read (None: every GPU); ``nvml``: a pynvml stand-in (tests)."""
        self._wanted = tuple(indices) if indices is not None else None
        self._nvml = nvml
        self._proc_root = proc_root
        self._handles: list[tuple[int, Any]] = []
        self._initialised = False
        self._status = SourceStatus("nvml", SOURCE_NOT_STARTED)
        self._notes: dict[str, str] = {}
        self._pid_namespace_nested = False
        self._fatal: tuple[int | None, str] | None = None

    @property
    def name(self) -> str:
        """Always "nvml"."""
        return "nvml"

    def open(self) -> SourceStatus:
        """nvmlInit and a handle per GPU; an NVML that cannot start is a status, not an error."""
        if self._initialised:
            return self._status
        nvml = self._nvml
        if nvml is None:
            try:
                import pynvml
            except ImportError as error:
                self._status = SourceStatus(
                    "nvml",
                    SOURCE_UNAVAILABLE,
                    "pynvml_missing",
                    f"nvidia-ml-py is not installed in the tool's environment ({error})",
                )
                return self._status
            nvml = self._nvml = pynvml
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as error:
            self._status = nvml_unavailable_status(_code(error), str(error))
            return self._status
        self._initialised = True
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as error:
            self._status = nvml_unavailable_status(_code(error), str(error))
            return self._status
        indices = self._wanted if self._wanted is not None else tuple(range(count))
        for index in indices:
            if not 0 <= index < count:
                self._notes[f"gpu {index}"] = (
                    f"NVML sees {count} GPU{'' if count == 1 else 's'}; index {index} does not exist"
                )
                continue
            try:
                self._handles.append((index, nvml.nvmlDeviceGetHandleByIndex(index)))
            except nvml.NVMLError as error:
                self._notes[f"gpu {index}"] = describe_nvml_error(_code(error), str(error)).meaning
        if not self._handles:
            self._status = SourceStatus(
                "nvml",
                SOURCE_UNAVAILABLE,
                "gpu_not_found",
                "NVML works but there is no GPU to read"
                if count == 0
                else "none of the requested GPUs exists",
                tuple(f"{key}: {value}" for key, value in sorted(self._notes.items())),
            )
            return self._status
        self._pid_namespace_nested = pid_namespace_nested(self._proc_root)
        self._status = self._ok_status()
        return self._status

    def read(self, now: float, pid: int | None) -> tuple[GpuSample, ...]:
        """One sample per GPU; a query the GPU does not support reads None and adds a note."""
        if not self._handles or self._status.state not in (SOURCE_OK,):
            return ()
        nvml = self._nvml
        samples: list[GpuSample] = []
        self._fatal = None
        for index, handle in self._handles:
            values: dict[str, Any] = {}

            def query(field: str, function: object, *args: Any, handle: object = handle) -> Any:
                return self._query(handle, field, function, *args)

            rates = query("utilization", nvml.nvmlDeviceGetUtilizationRates)
            if rates is not None:
                values["utilization_percent"] = float(rates.gpu)
                values["memory_activity_percent"] = float(rates.memory)
            memory = query("memory", nvml.nvmlDeviceGetMemoryInfo)
            if memory is not None:
                values["memory_used_mib"] = int(memory.used) / _MIB
                values["memory_total_mib"] = int(memory.total) / _MIB
            temperature = query(
                "temperature", nvml.nvmlDeviceGetTemperature, getattr(nvml, "NVML_TEMPERATURE_GPU", 0)
            )
            if temperature is not None:
                values["temperature_c"] = float(temperature)
            clock = query("sm clock", nvml.nvmlDeviceGetClockInfo, getattr(nvml, "NVML_CLOCK_SM", 1))
            if clock is not None:
                values["sm_clock_mhz"] = float(clock)
            power = query("power", nvml.nvmlDeviceGetPowerUsage)
            if power is not None:
                values["power_w"] = float(power) / 1000.0
            values.update(self._process_memory(handle, pid, query))
            samples.append(GpuSample(timestamp=now, gpu_index=index, pid=pid, **values))
        if self._fatal is not None:
            meaning = describe_nvml_error(self._fatal[0], self._fatal[1])
            self._status = SourceStatus(
                "nvml", SOURCE_ERROR, meaning.status, meaning.meaning, self._note_tuple()
            )
        else:
            self._status = self._ok_status()
        return tuple(samples)

    def _query(self, handle: Any, field: str, function: Any, *args: Any) -> Any:
        """One NVML call; an error becomes None plus a note (and a fatal one ends the source)."""
        nvml = self._nvml
        try:
            return function(handle, *args)
        except nvml.NVMLError as error:
            code = _code(error)
            if code in _FATAL_NVML:
                self._fatal = (code, str(error))
            meaning = describe_nvml_error(code, str(error)).meaning
            self._notes[field] = meaning if code != _NVML_NOT_SUPPORTED else "not supported on this GPU"
            return None
        except AttributeError:
            self._notes[field] = "this nvidia-ml-py has no such query"
            return None
        except _mismatch_error(nvml):
            # pynvml's unversioned call wants the newest NVML function (…_v3); an older driver lacks it.
            self._notes[field] = describe_nvml_error(13, None).meaning
            return None

    def _process_memory(self, handle: object, pid: int | None, query: Any) -> dict[str, object]:
        if pid is None:
            return {}
        listed: dict[int, float | None] = {}
        found_any_list = False
        for field, function_name in (
            ("processes", "nvmlDeviceGetComputeRunningProcesses"),
            ("graphics processes", "nvmlDeviceGetGraphicsRunningProcesses"),
        ):
            function = getattr(self._nvml, function_name, None)
            if function is None:
                continue
            processes = query(field, function)
            older = getattr(self._nvml, function_name + "_v2", None)
            if processes is None and older is not None:
                processes = query(field, older)
                if processes is not None:
                    self._notes.pop(field, None)
            if processes is None:
                continue
            found_any_list = True
            for process in processes:
                used = getattr(process, "usedGpuMemory", None)
                mib = int(used) / _MIB if used is not None else None
                previous = listed.get(int(process.pid))
                listed[int(process.pid)] = mib if previous is None else previous
        if not found_any_list:
            return {}
        others = [mib for owner, mib in listed.items() if owner != pid]
        other_total = None if any(mib is None for mib in others) else float(sum(m or 0.0 for m in others))
        if self._pid_namespace_nested:
            self._notes["probe memory"] = (
                "inside a container's PID namespace NVML lists host PIDs, so the probe's own "
                "GPU memory cannot be told apart (the whole GPU's memory still can)"
            )
            return {"other_processes_memory_mib": None}
        if pid in listed:
            own = listed[pid]
            if own is None:
                self._notes["probe memory"] = "the driver does not report memory per process here (WDDM?)"
            return {"process_memory_mib": own, "other_processes_memory_mib": other_total}
        return {"process_memory_mib": 0.0, "other_processes_memory_mib": other_total}

    def processes(self) -> tuple[tuple[int, int, float | None], ...] | None:
        """(GPU index, PID, MiB held) for every process NVML lists now; None when it cannot tell.

        Compute and graphics processes, once each per GPU (MiB None where the driver does not
        report per-process memory). By hand: `nvidia-smi --query-compute-apps=pid,used_memory
        --format=csv`.
        """
        if not self._handles or self._status.state != SOURCE_OK:
            return None
        nvml = self._nvml
        found: dict[tuple[int, int], float | None] = {}
        answered = False
        for index, handle in self._handles:
            for function_name in (
                "nvmlDeviceGetComputeRunningProcesses",
                "nvmlDeviceGetGraphicsRunningProcesses",
            ):
                function = getattr(nvml, function_name, None)
                if function is None:
                    continue
                try:
                    listed = function(handle)
                except (nvml.NVMLError, _mismatch_error(nvml)):
                    continue  # a driver without the _v3 call makes pynvml raise a mismatch
                answered = True
                for process in listed:
                    used = getattr(process, "usedGpuMemory", None)
                    key = (index, int(process.pid))
                    if found.get(key) is None:
                        found[key] = int(used) / _MIB if used is not None else None
        if not answered:
            return None
        return tuple((index, pid, mib) for (index, pid), mib in sorted(found.items()))

    def status(self) -> SourceStatus:
        """The status after the latest open/read."""
        return self._status

    def close(self) -> None:
        """nvmlShutdown (idempotent)."""
        if self._initialised and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                pass
        self._initialised = False
        self._handles = []
        if self._status.state == SOURCE_OK:
            self._status = SourceStatus("nvml", SOURCE_FINISHED, "closed", None, self._note_tuple())

    def _ok_status(self) -> SourceStatus:
        return SourceStatus("nvml", SOURCE_OK, "ok", None, self._note_tuple())

    def _note_tuple(self) -> tuple[str, ...]:
        return tuple(f"{key}: {value}" for key, value in sorted(self._notes.items()))


def pid_namespace_nested(proc_root: str = "/") -> bool:
    """Whether this process runs in a nested PID namespace (a container): NSpid lists > 1 PID.

    By hand: `grep NSpid /proc/self/status`.
    """
    path = proc_root.rstrip("/") + "/proc/self/status"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return len(line.split()) > 2
    except OSError:
        return False
    return False


def _mismatch_error(nvml: object) -> type[BaseException]:
    """pynvml's NVMLLibraryMismatchError (not an NVMLError), or a class nothing raises."""
    error = getattr(nvml, "NVMLLibraryMismatchError", None)
    return error if isinstance(error, type) and issubclass(error, BaseException) else _NeverRaisedError


class _NeverRaisedError(Exception):
    """Stands in for an exception class a pynvml stand-in does not define."""


def _code(error: BaseException) -> int | None:
    value = getattr(error, "value", None)
    return int(value) if isinstance(value, int) else None
