"""Benchmark: what one sampler tick costs (not a test).

Measures ``Sampler.sample_once`` per tick with
- the replay source (a real published recording, tests/data/gpu_series/05: four GPUs per tick),
  with and without the psutil CPU source following this process;
- NVML where a driver is present (every GPU, this process's PID for the per-process memory);
  without one, prints why NVML cannot be measured here;
and the thread's own pacing: how many ticks a 10 Hz sampler takes in ``--seconds`` and how many
it missed. The replayed values were recorded elsewhere, not on this machine.

    .venv/bin/python benchmarks/bench_sampler.py [--ticks 20000] [--seconds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from fallback_doctor.core.readers.sampling.recordings import load_recording
from fallback_doctor.core.readers.sampling.sampler import Sampler
from fallback_doctor.core.readers.sampling.sources import (
    NvmlSource,
    PsutilCpuSource,
    ReplaySource,
    SampleSource,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import result_line, rounds, row

TICK_BUDGET_US = 1000.0
"""One per cent of the 100 ms tick: the sampler must cost nothing the graph could show."""

RECORDING = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "data"
    / "gpu_series"
    / "05-4x-rtx4090-llamacpp-loaded-zero-util.txt"
)


def per_tick(source: SampleSource, ticks: int, *, with_cpu: bool) -> tuple[float, int]:
    """Median microseconds per tick over batches of 100 ticks, and samples per tick."""
    sampler = Sampler(
        source,
        PsutilCpuSource() if with_cpu else None,
        capacity=max(ticks * 4, 1),
        pid=os.getpid(),
        stop_when_finished=False,
    )
    sampler.open()
    batches: list[float] = []
    for _ in range(max(ticks // 100, 1)):
        start = time.perf_counter()
        for _ in range(100):
            sampler.sample_once()
        batches.append((time.perf_counter() - start) / 100)
    samples = sampler.state().samples_taken
    sampler.stop()
    return statistics.median(batches) * 1e6, samples // max(ticks // 100 * 100, 1)


def pacing(seconds: float) -> tuple[int, int]:
    """Ticks taken and missed by a 10 Hz thread on the replay source in ``seconds``."""
    sampler = Sampler(
        ReplaySource(load_recording(RECORDING), speed=1.0, loop=True), PsutilCpuSource(), pid=os.getpid()
    )
    sampler.start()
    time.sleep(seconds)
    sampler.stop()
    state = sampler.state()
    return state.samples_taken // 4, state.missed_ticks


def main() -> None:
    """Print the figures, then the result line (benchmarks/_common.py)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ticks", type=int, default=rounds(20_000, 5_000))
    parser.add_argument("--seconds", type=float, default=2.0)
    options = parser.parse_args()
    recording = load_recording(RECORDING)
    rows = []
    for with_cpu in (False, True):
        micro, per = per_tick(
            ReplaySource(recording, speed=None, loop=True), options.ticks, with_cpu=with_cpu
        )
        label = "replay (4 GPUs)" + (" + psutil" if with_cpu else "")
        print(f"{label:32s} {micro:8.1f} µs per tick ({per} samples per tick)")
        rows.append(
            row(
                f"sampler tick, {label} (recorded data replayed, not this machine's)",
                round(micro, 1),
                unit="µs",
                aim=f"at most {TICK_BUDGET_US:.0f} µs (1% of the 100 ms tick)",
                met=micro <= TICK_BUDGET_US,
            )
        )
    nvml = NvmlSource()
    status = nvml.open()
    nvml.close()
    if status.available:
        micro, per = per_tick(NvmlSource(), min(options.ticks, 2000), with_cpu=True)
        print(f"{'NVML + psutil':32s} {micro:8.1f} µs per tick ({per} samples per tick)")
        rows.append(
            row("sampler tick, NVML + psutil", round(micro, 1), unit="µs", met=micro <= TICK_BUDGET_US)
        )
    else:
        print(f"NVML not measured here: {status.sentence()}")
        rows.append(
            row("sampler tick, NVML + psutil", None, unit="µs", note=f"not measured: {status.sentence()}")
        )
    taken, missed = pacing(options.seconds)
    print(f"10 Hz thread for {options.seconds:g} s: {taken} ticks, {missed} missed")
    rows.append(
        row(
            f"10 Hz sampler thread, ticks missed in {options.seconds:g} s",
            float(missed),
            unit="ticks",
            aim="0",
            met=missed == 0,
            note=f"{taken} taken",
        )
    )
    print(result_line("sampler", rows))


if __name__ == "__main__":
    main()
