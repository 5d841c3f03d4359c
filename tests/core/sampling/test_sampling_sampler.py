"""The sampler: ticks, phase marks, PID changes, the no-NVML state, serialisation, the ring buffer.

No timed assertions: ticks are taken with ``sample_once`` on a fake clock, or the thread runs
a replay at one tick per read until it finishes by itself, and the tests count samples/marks.
The replayed GPU values are recordings published by others (tests/data/gpu_series), not
measured on this machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fallback_doctor.core.readers.sampling.recordings import Recording, load_recording
from fallback_doctor.core.readers.sampling.ring import RingBuffer
from fallback_doctor.core.readers.sampling.sample import GpuSample, SourceStatus
from fallback_doctor.core.readers.sampling.sampler import (
    PHASE_SESSION_CREATION,
    PHASE_TIMED_RUNS,
    PHASE_WARM_UP,
    Sampler,
    SamplingSeries,
)
from fallback_doctor.core.readers.sampling.sources import NvmlSource, PsutilCpuSource, ReplaySource
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parents[2] / "data" / "gpu_series"


def real_recording(name: str) -> Recording:
    (path,) = DATA.glob(f"{name}-*.txt")
    return load_recording(path)


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


# --- without NVML (this machine) ----------------------------------------------------------------


def test_without_nvml_every_tick_is_a_gap_with_the_reason_never_a_zero() -> None:
    clock = FakeClock()
    sampler = Sampler(NvmlSource(), PsutilCpuSource(), clock=clock, pid=os.getpid())
    state = sampler.open()
    assert not state.gpu_readings_available
    assert state.gpu.sentence().startswith("NVML: the NVIDIA driver's library")
    for _ in range(3):
        sampler.sample_once()
        clock.now += 0.1
    series = sampler.stop()
    assert len(series.samples) == 3
    assert all(not sample.has_gpu_values() and sample.gpu_index is None for sample in series.samples)
    assert series.samples[0].probe_cpu_percent is None  # psutil priming
    assert series.samples[1].probe_cpu_percent is not None  # this process's own CPU, really measured
    assert series.recorded_here and series.gpu_status.code == "library_not_found"
    assert series.to_csv().splitlines()[1].split(",")[2] == ""  # utilization: an empty cell, not 0


def test_the_thread_runs_and_stops_without_nvml() -> None:
    sampler = Sampler(NvmlSource(), interval_s=0.001)
    sampler.start()
    taken = threading.Event()
    while not taken.is_set():
        if sampler.state().samples_taken >= 3:
            taken.set()
    series = sampler.stop()
    assert not sampler.state().running
    assert len(series.samples) >= 3 and series.gpu_status.code == "library_not_found"


# --- replay through the thread ------------------------------------------------------------------


def test_a_replayed_recording_runs_through_the_thread_to_its_end_with_phase_marks() -> None:
    recorded = real_recording("02")  # an RTX 4090 going from idle to busy: published by others
    sampler = Sampler(ReplaySource(recorded, speed=None), interval_s=0.0005)
    sampler.mark_phase(PHASE_SESSION_CREATION)
    sampler.start()
    assert sampler.join(timeout=60)
    series = sampler.stop()
    assert [s.utilization_percent for s in series.samples] == [
        s.utilization_percent for s in recorded.samples
    ]
    assert series.recorded_here is False and "not measured here" in series.provenance
    assert series.gpu_status.state == "finished"
    assert series.phase_of(0) == PHASE_SESSION_CREATION and series.phase_of(39) == PHASE_SESSION_CREATION


def test_marks_split_the_series_by_sample_sequence() -> None:
    clock = FakeClock()
    recorded = real_recording("03")
    sampler = Sampler(ReplaySource(recorded, speed=None), clock=clock)
    sampler.mark_phase(PHASE_SESSION_CREATION)
    for _ in range(5):
        sampler.sample_once()
        clock.now += 0.1
    sampler.mark_phase(PHASE_WARM_UP, detail="3 runs")
    for _ in range(5):
        sampler.sample_once()
        clock.now += 0.1
    sampler.mark_phase(PHASE_TIMED_RUNS)
    sampler.sample_once()
    series = sampler.snapshot()
    assert [series.phase_of(i) for i in (0, 4, 5, 9, 10)] == [
        PHASE_SESSION_CREATION,
        PHASE_SESSION_CREATION,
        PHASE_WARM_UP,
        PHASE_WARM_UP,
        PHASE_TIMED_RUNS,
    ]
    assert [name for name, _, _ in series.phases()] == [
        PHASE_SESSION_CREATION,
        PHASE_WARM_UP,
        PHASE_TIMED_RUNS,
    ]
    assert series.phases()[0][2] == pytest.approx(1000.5)
    assert series.marks[1].detail == "3 runs"
    assert series.samples[0].timestamp == 1000.0  # restamped onto the sampler's clock


def test_four_gpus_give_four_samples_per_tick() -> None:
    sampler = Sampler(ReplaySource(real_recording("05"), speed=None), clock=FakeClock())
    batch = sampler.sample_once()
    assert [s.gpu_index for s in batch] == [0, 1, 2, 3]
    series = sampler.snapshot()
    assert len(series.for_gpu(2)) == 1 and series.for_gpu(2)[0].memory_used_mib == 10911.0


# --- PID changes ------------------------------------------------------------------------------------


@pytest.fixture
def two_children() -> Iterator[tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]]:
    first = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    second = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield first, second
    for child in (first, second):
        child.kill()
        child.wait()


def test_set_pid_follows_a_new_probe_process(
    two_children: tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]],
) -> None:
    first, second = two_children
    clock = FakeClock()
    sampler = Sampler(
        ReplaySource(real_recording("06"), speed=None), PsutilCpuSource(), clock=clock, pid=first.pid
    )
    sampler.sample_once()
    sampler.sample_once()
    sampler.set_pid(second.pid)
    sampler.sample_once()
    sampler.sample_once()
    pids = [s.pid for s in sampler.snapshot().samples]
    cpu = [s.probe_cpu_percent for s in sampler.snapshot().samples]
    assert pids == [first.pid, first.pid, second.pid, second.pid]
    assert cpu[0] is None and cpu[1] is not None and cpu[2] is None and cpu[3] is not None
    assert sampler.state().pid == second.pid


# --- robustness -------------------------------------------------------------------------------------


class BrokenSource:
    """A source whose read raises: the sampler must keep going and say so."""

    name = "nvml"

    def open(self) -> SourceStatus:
        return SourceStatus("nvml", "ok")

    def read(self, now: float, pid: int | None) -> tuple[GpuSample, ...]:
        raise RuntimeError("driver exploded")

    def status(self) -> SourceStatus:
        return SourceStatus("nvml", "ok")

    def close(self) -> None:
        pass


def test_a_raising_source_does_not_kill_the_sampler() -> None:
    sampler = Sampler(BrokenSource(), clock=FakeClock())
    sampler.sample_once()
    sampler.sample_once()
    state = sampler.state()
    assert state.samples_taken == 2
    assert state.errors == ("could not read the GPU source: RuntimeError: driver exploded",)


def test_a_small_ring_drops_the_oldest_and_the_series_says_where_it_starts() -> None:
    sampler = Sampler(ReplaySource(real_recording("09"), speed=None), capacity=5, clock=FakeClock())
    sampler.mark_phase(PHASE_TIMED_RUNS)
    for _ in range(8):
        sampler.sample_once()
    series = sampler.snapshot()
    assert len(series.samples) == 5 and series.first_sequence == 3 and series.dropped == 3
    assert series.phase_of(0) == PHASE_TIMED_RUNS
    assert series.samples[0].utilization_percent == real_recording("09").samples[3].utilization_percent
    items, following = sampler.since(6)
    assert len(items) == 2 and following == 8


# --- serialisation ----------------------------------------------------------------------------------


def test_series_round_trips_through_json_and_csv() -> None:
    clock = FakeClock()
    sampler = Sampler(ReplaySource(real_recording("06"), speed=None), clock=clock)
    sampler.mark_phase(PHASE_SESSION_CREATION)
    for step in range(6):
        if step == 3:
            sampler.mark_phase(PHASE_WARM_UP)
        sampler.sample_once()
        clock.now += 0.1
    series = sampler.stop()
    again = SamplingSeries.from_dict(json.loads(json.dumps(series.to_dict())))
    assert again == series
    from_csv = SamplingSeries.from_csv(series.to_csv(), provenance=series.provenance)
    assert from_csv.samples == series.samples
    assert [(m.name, m.sequence) for m in from_csv.marks] == [(PHASE_SESSION_CREATION, 0), (PHASE_WARM_UP, 3)]
    assert from_csv.interval_s == pytest.approx(0.1)


finite = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
maybe = st.one_of(st.none(), finite)
samples_strategy = st.builds(
    GpuSample,
    timestamp=finite,
    gpu_index=st.one_of(st.none(), st.integers(0, 7)),
    utilization_percent=maybe,
    memory_used_mib=maybe,
    process_memory_mib=maybe,
    temperature_c=maybe,
    probe_cpu_percent=maybe,
    pid=st.one_of(st.none(), st.integers(1, 2**22)),
)


@settings(max_examples=60, deadline=None)
@given(samples=st.lists(samples_strategy, max_size=20))
def test_csv_round_trip_keeps_none_as_none(samples: list[GpuSample]) -> None:
    series = SamplingSeries(tuple(samples), (), SourceStatus("nvml", "ok"), None, 0.1)
    again, phases = SamplingSeries.samples_from_csv(series.to_csv())
    assert again == tuple(samples) and all(phase is None for phase in phases)


# --- ring buffer ------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(capacity=st.integers(1, 10), items=st.lists(st.integers(), max_size=40), start=st.integers(0, 45))
def test_ring_keeps_the_newest_and_since_matches_a_list_model(
    capacity: int, items: list[int], start: int
) -> None:
    ring: RingBuffer[int] = RingBuffer(capacity)
    for item in items:
        ring.append(item)
    assert ring.snapshot() == tuple(items[-capacity:]) if items else ring.snapshot() == ()
    assert ring.dropped == max(0, len(items) - capacity) and ring.appended == len(items)
    held_from = len(items) - len(ring)
    got, following = ring.since(start)
    assert following == len(items)
    assert got == tuple(items[max(start, held_from) :])


def test_ring_with_a_writer_thread_and_a_reader_loses_nothing_it_holds() -> None:
    ring: RingBuffer[int] = RingBuffer(100_000)
    done = threading.Event()

    def write() -> None:
        for number in range(20_000):
            ring.append(number)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen: list[int] = []
    sequence = 0
    while not done.is_set() or sequence < 20_000:
        items, sequence = ring.since(sequence)
        seen.extend(items)
    writer.join()
    assert seen == list(range(20_000))
    with pytest.raises(ValueError, match="capacity"):
        RingBuffer(0)


def test_a_mark_placed_later_at_a_past_time_lands_before_the_right_sample() -> None:
    """The probe's progress messages may be read after the fact, with their own wall-clock time."""
    clock = FakeClock()
    sampler = Sampler(ReplaySource(real_recording("01"), speed=None), clock=clock)
    for _ in range(10):
        sampler.sample_once()
        clock.now += 0.1
    sampler.mark_phase(PHASE_WARM_UP, at=1000.35)
    sampler.mark_phase(PHASE_SESSION_CREATION, at=1000.05)
    series = sampler.snapshot()
    assert [m.name for m in series.marks] == [PHASE_SESSION_CREATION, PHASE_WARM_UP]
    assert [series.phase_of(i) for i in (0, 1, 3, 4, 9)] == [
        None,
        PHASE_SESSION_CREATION,
        PHASE_SESSION_CREATION,
        PHASE_WARM_UP,
        PHASE_WARM_UP,
    ]
