"""Where samples come from, behind one interface: NVML, psutil (the probe's CPU) and replay.

Public API:

- ``SampleSource`` (Protocol) for GPU readings: ``name``, ``open() -> SourceStatus``,
  ``read(now, pid) -> tuple[GpuSample, ...]`` (one sample per GPU, stamped ``now``; empty when
  the source cannot read), ``status() -> SourceStatus``, ``close()``. A source never raises
  for a missing driver or an unsupported query and never invents zeros: what it cannot tell
  is ``None`` and its status says why.
- ``CpuSource`` (Protocol) for the probe's CPU %: the same, with ``read(now, pid) -> float | None``.
- ``NvmlSource(indices=None, *, nvml=None, proc_root="/")``: NVML through nvidia-ml-py, in our
  own process (NVML creates no CUDA context). ``indices``: NVML GPU indices to read (default:
  all). NVML numbers GPUs in PCI order and ignores CUDA_VISIBLE_DEVICES; the GPU whose
  ``process_memory_mib`` grows is the one the probe really uses. ``nvml`` replaces the
  ``pynvml`` module (tests only: this machine has no driver).
- ``PsutilCpuSource(*, include_children=False)``: ``psutil.Process(pid).cpu_percent()``; the
  first reading after a PID change only primes psutil and reads ``None`` (psutil's first call
  always returns 0.0, which is not a measurement).
- ``ReplaySource(samples_or_recording, *, speed=1.0, restamp=True, loop=False, provenance=None)``:
  replays a real recorded series through the same interface: at its recorded pace (``speed``
  1.0) or faster (``speed`` 50.0), sample-and-hold at the reader's ticks like NVML; or, with
  ``speed=None``, one recorded tick per ``read`` whatever the clock (tests, benchmarks).
  ``restamp`` puts the reader's ``now`` on the samples (a live-looking graph); ``False``
  keeps the recorded times (opening a bundle). Its status always says the series was
  recorded elsewhere (``code="replay"``) unless the recording says it was recorded here.
- ``nvml_unavailable_status(error_code, text)``: the status for an NVML init failure.

By hand, the same readings: `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,
memory.total,temperature.gpu,clocks.sm,power.draw --format=csv -lms 100`,
`nvidia-smi --query-compute-apps=pid,used_memory --format=csv`, `top -p PID`.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from fallback_doctor.core.knowledge.nvml_errors import describe_nvml_error
from fallback_doctor.core.sampling.recordings import Recording, group_ticks
from fallback_doctor.core.sampling.sample import (
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


@runtime_checkable
class SampleSource(Protocol):
    """A source of GPU samples (NVML, a replayed recording)."""

    @property
    def name(self) -> str:
        """ "nvml", "replay", …"""
        ...

    def open(self) -> SourceStatus:
        """Prepare to read; the status says why not when it cannot."""
        ...

    def read(self, now: float, pid: int | None) -> tuple[GpuSample, ...]:
        """One sample per GPU, stamped ``now``; empty when nothing can be read."""
        ...

    def status(self) -> SourceStatus:
        """What the source can do now."""
        ...

    def close(self) -> None:
        """Release what ``open`` took (idempotent)."""
        ...


@runtime_checkable
class CpuSource(Protocol):
    """A source of the probe's CPU utilization."""

    @property
    def name(self) -> str:
        """ "psutil", …"""
        ...

    def open(self) -> SourceStatus:
        """Prepare to read."""
        ...

    def read(self, now: float, pid: int | None) -> float | None:
        """The probe's CPU % (of one core) since the previous read; None when not known."""
        ...

    def status(self) -> SourceStatus:
        """What the source can do now."""
        ...

    def close(self) -> None:
        """Release resources (idempotent)."""
        ...


def nvml_unavailable_status(code: int | None, text: str | None) -> SourceStatus:
    """The status of an NVML that could not start: its meaning in words, the NVML error name."""
    meaning = describe_nvml_error(code, text)
    reason = meaning.meaning
    return SourceStatus("nvml", SOURCE_UNAVAILABLE, meaning.status, reason)


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
                self._notes[f"gpu {index}"] = f"NVML sees {count} GPU(s); index {index} does not exist"
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

            def query(field: str, function: Any, *args: Any, handle: Any = handle) -> Any:
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

    def _process_memory(self, handle: Any, pid: int | None, query: Any) -> dict[str, Any]:
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
                except nvml.NVMLError:
                    continue
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


def _mismatch_error(nvml: Any) -> type[BaseException]:
    """pynvml's NVMLLibraryMismatchError (not an NVMLError), or a class nothing raises."""
    error = getattr(nvml, "NVMLLibraryMismatchError", None)
    return error if isinstance(error, type) and issubclass(error, BaseException) else _NeverRaisedError


class _NeverRaisedError(Exception):
    """Stands in for an exception class a pynvml stand-in does not define."""


def _code(error: BaseException) -> int | None:
    value = getattr(error, "value", None)
    return int(value) if isinstance(value, int) else None


class PsutilCpuSource:
    """The probe's CPU utilization from psutil (percent of one core, like `top -p PID`)."""

    def __init__(self, *, include_children: bool = False, psutil_module: Any = None) -> None:
        """``include_children``: add the probe's child processes; ``psutil_module``: tests only."""
        self._include_children = include_children
        self._psutil = psutil_module
        self._processes: dict[int, Any] = {}
        self._pid: int | None = None
        self._status = SourceStatus("psutil", SOURCE_NOT_STARTED)

    @property
    def name(self) -> str:
        """Always "psutil"."""
        return "psutil"

    def open(self) -> SourceStatus:
        """Import psutil; without it the status says so."""
        if self._psutil is None:
            try:
                import psutil
            except ImportError as error:
                self._status = SourceStatus(
                    "psutil", SOURCE_UNAVAILABLE, "psutil_missing", f"psutil is not installed ({error})"
                )
                return self._status
            self._psutil = psutil
        self._status = SourceStatus("psutil", SOURCE_OK, "no_pid", "no probe process to watch yet")
        return self._status

    def read(self, now: float, pid: int | None) -> float | None:
        """CPU % since the previous read; None on the first read for a PID, or once it has exited."""
        del now
        if self._psutil is None:
            return None
        if pid is None:
            self._pid, self._processes = None, {}
            self._status = SourceStatus("psutil", SOURCE_OK, "no_pid", "no probe process to watch yet")
            return None
        psutil = self._psutil
        if pid != self._pid:
            self._pid, self._processes = pid, {}
        try:
            main = self._processes.get(pid)
            if main is None:
                main = self._processes[pid] = psutil.Process(pid)
                main.cpu_percent(None)
                self._prime_children(main)
                self._status = SourceStatus("psutil", SOURCE_OK, "ok")
                return None
            total = float(main.cpu_percent(None))
            if self._include_children:
                total += self._children_percent(main)
        except psutil.NoSuchProcess:
            self._status = SourceStatus(
                "psutil", SOURCE_UNAVAILABLE, "process_gone", f"the probe process {pid} has exited"
            )
            return None
        except psutil.AccessDenied:
            self._status = SourceStatus(
                "psutil", SOURCE_UNAVAILABLE, "no_permission", f"not allowed to read process {pid}'s CPU time"
            )
            return None
        self._status = SourceStatus("psutil", SOURCE_OK, "ok")
        return total

    def _prime_children(self, main: Any) -> None:
        if not self._include_children:
            return
        for child in main.children(recursive=True):
            try:
                child.cpu_percent(None)
                self._processes[int(child.pid)] = child
            except self._psutil.Error:
                continue

    def _children_percent(self, main: Any) -> float:
        total = 0.0
        for child in main.children(recursive=True):
            known = self._processes.get(int(child.pid))
            try:
                if known is None:
                    child.cpu_percent(None)
                    self._processes[int(child.pid)] = child
                    continue
                total += float(known.cpu_percent(None))
            except self._psutil.Error:
                continue
        return total

    def status(self) -> SourceStatus:
        """The status after the latest read."""
        return self._status

    def close(self) -> None:
        """Forget the watched processes."""
        self._processes = {}
        self._pid = None


class ReplaySource:
    """A real recorded series replayed through the ``SampleSource`` interface."""

    def __init__(
        self,
        series: Recording | Sequence[GpuSample],
        *,
        speed: float | None = 1.0,
        restamp: bool = True,
        loop: bool = False,
        provenance: str | None = None,
        recorded_here: bool | None = None,
    ) -> None:
        """``series``: a parsed recording (its source goes into the status) or samples.

        ``speed``: 1.0 the recorded pace, 10.0 ten times faster, None one tick per read.
        ``provenance``: where the samples come from, for the status (a Recording brings its own).
        """
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        if isinstance(series, Recording):
            samples: Sequence[GpuSample] = series.samples
            provenance = provenance or series.provenance()
            here = series.recorded_here if recorded_here is None else recorded_here
        else:
            samples = series
            here = bool(recorded_here)
            provenance = provenance or (
                "recorded on this machine" if here else "recorded elsewhere and replayed, not measured here"
            )
        self._ticks = group_ticks(sorted(samples, key=lambda sample: sample.timestamp))
        self._speed = speed
        self._restamp = restamp
        self._loop = loop
        self._provenance = provenance
        self._recorded_here = here
        self._start: float | None = None
        self._position = 0
        self._offsets = tuple(tick[0].timestamp - self._ticks[0][0].timestamp for tick in self._ticks)
        gaps = [b - a for a, b in zip(self._offsets, self._offsets[1:], strict=False) if b > a]
        self._hold = statistics.median(gaps) if gaps else 1.0
        self._status = SourceStatus("replay", SOURCE_NOT_STARTED, "replay", provenance)

    @property
    def name(self) -> str:
        """Always "replay"."""
        return "replay"

    @property
    def tick_count(self) -> int:
        """How many recorded ticks there are."""
        return len(self._ticks)

    @property
    def recorded_here(self) -> bool:
        """Whether the replayed samples were measured on this machine (a bundle made here)."""
        return self._recorded_here

    @property
    def provenance(self) -> str:
        """Where the replayed samples come from, in words."""
        return self._provenance

    def open(self) -> SourceStatus:
        """Ready to replay (an empty series is "finished" at once)."""
        self._start, self._position = None, 0
        if not self._ticks:
            self._status = SourceStatus(
                "replay", SOURCE_FINISHED, "replay_empty", "the recording holds no samples"
            )
        else:
            self._status = SourceStatus("replay", SOURCE_OK, "replay", self._provenance)
        return self._status

    def read(self, now: float, pid: int | None) -> tuple[GpuSample, ...]:
        """The tick due at ``now`` (sample-and-hold), or the next tick when ``speed`` is None."""
        if self._status.state != SOURCE_OK:
            return ()
        if self._speed is None:
            if self._position >= len(self._ticks):
                if not self._loop:
                    return self._finish()
                self._position = 0
            tick = self._ticks[self._position]
            self._position += 1
        else:
            if self._start is None:
                self._start = now
            elapsed = (now - self._start) * self._speed
            end = self._offsets[-1] + self._hold
            if elapsed >= end:
                if not self._loop:
                    return self._finish()
                elapsed %= end
            while self._position + 1 < len(self._ticks) and self._offsets[self._position + 1] <= elapsed:
                self._position += 1
            if self._offsets[self._position] > elapsed:
                self._position = 0
                while self._position + 1 < len(self._ticks) and self._offsets[self._position + 1] <= elapsed:
                    self._position += 1
            tick = self._ticks[self._position]
        if self._restamp:
            return tuple(replace(sample, timestamp=now, pid=pid) for sample in tick)
        return tick

    def _finish(self) -> tuple[GpuSample, ...]:
        self._status = SourceStatus(
            "replay",
            SOURCE_FINISHED,
            "replay_finished",
            f"all {len(self._ticks)} recorded ticks were replayed ({self._provenance})",
        )
        return ()

    def status(self) -> SourceStatus:
        """OK while replaying (the reason names the recording), then "finished"."""
        return self._status

    def close(self) -> None:
        """Nothing to release."""
        if self._status.state == SOURCE_OK:
            self._status = replace(self._status, state=SOURCE_FINISHED, code="replay_stopped")
