"""The test inference with its GPU and CPU sampled: the series and the GPU's prior occupants in the result.

``run_sampled_inference`` wraps :func:`~fallback_doctor.core.readers.inference.run.run_inference`: before
the probe it reads who already holds GPU memory (NVML's process list), then a
:class:`~fallback_doctor.core.readers.sampling.sampler.Sampler` reads the GPU (NVML) and the probe's CPU
(psutil) at 10 Hz while the probe runs; it follows each probe child's PID from the moment the
child starts and marks each phase when the child reports it. The series
(``SamplingSeries.to_dict()``, plus ``sentences``: each source's state in words) goes into
``ProbeResult.series``; without NVML the series carries why, never zeros. By hand, the same
readings: ``nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv -lms 100``,
``nvidia-smi --query-compute-apps=pid,used_memory --format=csv`` and ``top -p PID``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.inference.result import GpuOccupancy, GpuProcess, ProbeResult
from fallback_doctor.core.readers.inference.run import InferencePlan, run_inference
from fallback_doctor.core.readers.sampling.sampler import DEFAULT_INTERVAL_S, Sampler
from fallback_doctor.core.readers.sampling.sources import CpuSource, NvmlSource, PsutilCpuSource, SampleSource

PhaseListener = Callable[[str, str, float, bool | None], None]


def gpu_occupancy(source: SampleSource, *, exclude: Sequence[int] = ()) -> GpuOccupancy:
    """Who holds GPU memory now, from an opened GPU source (NVML's process list), or why unknown.

    ``exclude``: PIDs not to count (this tool itself). By hand:
    ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
    """
    status = source.status()
    if not status.available:
        return GpuOccupancy(read=False, note=status.sentence())
    reader = getattr(source, "processes", None)
    listed = reader() if callable(reader) else None
    if listed is None:
        return GpuOccupancy(read=False, note=f"{status.sentence()}; NVML's process list could not be read")
    processes = tuple(
        GpuProcess(pid=int(pid), gpu_index=int(index), used_mib=None if mib is None else float(mib))
        for index, pid, mib in listed
        if int(pid) not in exclude
    )
    return GpuOccupancy(read=True, processes=processes)


def run_sampled_inference(
    target: TargetFacts,
    plan: InferencePlan,
    *,
    python: str,
    env: Mapping[str, str],
    timeout_s: float | None = None,
    lib_dirs: Sequence[str] | None = None,
    on_phase: PhaseListener | None = None,
    on_start: Callable[[int], None] | None = None,
    gpu_source: SampleSource | None = None,
    cpu_source: CpuSource | None = None,
    interval_s: float = DEFAULT_INTERVAL_S,
) -> ProbeResult:
    """``run_inference`` with a sampler beside it; the result carries the series and ``gpu_before``.

    ``gpu_source`` defaults to NVML, ``cpu_source`` to psutil on the probe's PID (and its
    children). Each phase start becomes a mark at the time the child reported it; ``on_phase``
    and ``on_start`` still hear everything. The sampler is stopped whatever happens.
    """
    import os

    gpu = gpu_source if gpu_source is not None else NvmlSource()
    cpu = cpu_source if cpu_source is not None else PsutilCpuSource(include_children=True)
    sampler = Sampler(gpu, cpu, interval_s=interval_s, stop_when_finished=False)
    sampler.open()
    before = gpu_occupancy(gpu, exclude=(os.getpid(),))

    def phase(name: str, edge: str, at: float, ok: bool | None) -> None:
        if edge == "start":
            sampler.mark_phase(name, at=at)
        elif ok is False:
            sampler.mark_phase(f"{name}.failed", at=at)
        if on_phase is not None:
            on_phase(name, edge, at, ok)

    def started(pid: int) -> None:
        sampler.set_pid(pid)
        if on_start is not None:
            on_start(pid)

    sampler.start()
    try:
        result = run_inference(
            target,
            plan,
            python=python,
            env=env,
            timeout_s=timeout_s,
            lib_dirs=lib_dirs,
            on_phase=phase,
            on_start=started,
        )
    finally:
        state = sampler.state()
        series = sampler.stop()
    data: dict[str, Any] = series.to_dict()
    data["sentences"] = list(_sentences(state.sentences(), series.samples))
    data["sentence_words"] = _sentence_words(state, series.samples)
    return dataclasses.replace(result, series=data, gpu_before=before)


def _sentence_words(state: Any, samples: Sequence[Any]) -> list[dict[str, Any] | None]:
    """``sentences`` as catalogue words, one by one (None: a sentence shown as written, an error)."""
    words = [state.gpu.sentence_words()]
    if state.cpu is not None:
        words.append(state.cpu.sentence_words())
    words.extend(None for _ in state.errors)
    gpu = sum(1 for sample in samples if sample.has_gpu_values())
    cpu = sum(1 for sample in samples if sample.probe_cpu_percent is not None)
    counts = {"count": len(samples), "gpu": gpu, "cpu": cpu}
    return [*words, {"id": "evidence.sample_counts", "params": counts}]


def _sentences(sentences: Sequence[str], samples: Sequence[Any]) -> tuple[str, ...]:
    """The sources' states in words, and how many samples each kind of reading has."""
    gpu = sum(1 for sample in samples if sample.has_gpu_values())
    cpu = sum(1 for sample in samples if sample.probe_cpu_percent is not None)
    counts = f"{len(samples)} samples: {gpu} with GPU readings, {cpu} with the probe's CPU %"
    return (*sentences, counts)
