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

from typing import Protocol, runtime_checkable

from fallback_doctor.core.readers.sampling.cpu_source import PsutilCpuSource
from fallback_doctor.core.readers.sampling.nvml_source import (
    NvmlSource,
    nvml_unavailable_status,
    pid_namespace_nested,
)
from fallback_doctor.core.readers.sampling.replay_source import ReplaySource
from fallback_doctor.core.readers.sampling.sample import (
    GpuSample,
    SourceStatus,
)

# The sources live one module each; their callers import them from here.
__all__ = [
    "CpuSource",
    "NvmlSource",
    "PsutilCpuSource",
    "ReplaySource",
    "SampleSource",
    "nvml_unavailable_status",
    "pid_namespace_nested",
]


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
