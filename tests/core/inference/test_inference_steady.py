"""The timed runs stop once the median is known well enough (the `steady` rule of the probe child)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "core" / "readers" / "probes"))

from fallback_doctor.core.readers.probes.python_child.inputs import STEADY_MIN_RUNS, steady_enough


def test_a_quiet_machine_stops_at_the_minimum() -> None:
    times = [0.044 + 0.0002 * (i % 3) for i in range(STEADY_MIN_RUNS)]
    assert not steady_enough(times[:-1])
    assert steady_enough(times)


def test_a_noisy_machine_keeps_measuring() -> None:
    noisy = random.Random(7)
    times = [0.044 * noisy.uniform(0.6, 1.8) for _ in range(20)]
    assert not any(steady_enough(times[:count]) for count in range(1, 21))


def test_one_outlier_does_not_keep_it_going() -> None:
    times = [0.044, 0.0441, 0.0439, 0.2, 0.044, 0.0442]
    assert steady_enough(times)
