"""The GPU graph's data side (gui/plot.py draws it): readings from a series' cells, where its time starts,
which GPU's samples to draw, axis ends grown in steps and the grid's lines. No Qt here."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

SIDES = ("left", "bottom", "right", "top")
"""A plot's axes (pyqtgraph's names)."""


def step_up(value: float, floor: float) -> float:
    """An axis end for ``value``: at least ``floor``, grown in steps (1, 1.5, 2, 3, 5, 7.5 x 10^n)."""
    if not value > floor or math.isinf(value):
        return floor
    power = 10.0 ** math.floor(math.log10(value))
    return next(s * power for s in (1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0) if s * power >= value)


def grid_lines(x_end: float, y_end: float) -> tuple[list[float], list[float]]:
    """Pairs of points: a vertical line per time tick, a horizontal one per value tick."""
    xs: list[float] = []
    ys: list[float] = []
    for vertical, end in ((True, x_end), (False, y_end)):
        step = tick_step(end)
        for index in range(1, int(end / step + 1e-9) + 1):
            at = index * step
            xs += [at, at] if vertical else [0.0, x_end]
            ys += [0.0, y_end] if vertical else [at, at]
    return xs, ys


def tick_step(span: float) -> float:
    """About five ticks over ``span``: 1, 2 or 5 times a power of ten."""
    raw = max(span, 1e-9) / 5
    power = 10.0 ** math.floor(math.log10(raw))
    return next(s * power for s in (1.0, 2.0, 5.0, 10.0) if s * power >= raw)


def series_start(
    samples: list[dict[str, Any]], marks: list[dict[str, Any]], _interval: object = None
) -> float | None:
    """Where a series' time axis starts: its earliest sample or phase mark (epoch seconds)."""
    stamps = [cell_number(item.get("timestamp")) for item in [*samples, *marks]]
    known = [stamp for stamp in stamps if stamp is not None]
    return min(known) if known else None


def one_gpu(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The samples of the GPU the probe used (the most process memory; else the lowest index)."""
    indices = {s.get("gpu_index") for s in samples if s.get("gpu_index") is not None}
    if len(indices) <= 1:
        return samples
    used = {
        i: max(
            (or_zero(reading(s.get("process_memory_mib"))) for s in samples if s.get("gpu_index") == i),
            default=0.0,
        )
        for i in indices
    }
    chosen = max(sorted(indices, key=str), key=lambda i: used[i])
    return [s for s in samples if s.get("gpu_index") in (None, chosen)]


def cell_number(value: object) -> float | None:
    """A finite number from a sample's cell (a float, an int or its text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def reading(cell: object) -> float:
    """A reading, or NaN for "not available" (a gap, never a zero)."""
    found = cell_number(cell)
    return math.nan if found is None else found


def or_zero(value: float) -> float:
    return 0.0 if value != value else value


def has_gpu(sample: Mapping[str, object]) -> bool:
    return any(
        cell_number(sample.get(k)) is not None
        for k in ("utilization_percent", "memory_used_mib", "process_memory_mib")
    )


def status_sentence(status: Mapping[str, object]) -> str:
    label = {"nvml": "NVML", "replay": "replay"}.get(
        str(status.get("source")), str(status.get("source") or "")
    )
    reason = status.get("reason") or status.get("state") or ""
    return f"{label}: {reason}" if label else str(reason)
