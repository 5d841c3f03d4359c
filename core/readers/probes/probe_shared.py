"""What both test-inference probe children do the same way: ANSI stripping, node placements from
ONNX Runtime's VERBOSE lines, latency statistics.

The standard library only, Python 3.8 or newer: the Python probe child imports it from beside
itself (run by the application's interpreter, by path; run_python_probe copies both files into
its work folder), the C-API child's parts (capi_probe/) import it from their parent folder.
"""

from __future__ import annotations

from typing import Any

_PLACEMENT_MARKERS = ("All nodes placed on [", "Node(s) placed on [")


def strip_ansi(text: str) -> str:
    """Remove the colour codes ONNX Runtime puts around its log lines."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\x1b" and i + 1 < len(text) and text[i + 1] == "[":
            j = i + 2
            while j < len(text) and (text[j].isdigit() or text[j] == ";"):
                j += 1
            i = j + 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def count_placements(text: str) -> dict[str, int]:
    """Nodes per provider from ONNX Runtime's VERBOSE "Node placements" lines (summed over graphs)."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        for marker in _PLACEMENT_MARKERS:
            at = line.find(marker)
            if at < 0:
                continue
            provider, _, tail = line[at + len(marker) :].partition("]")
            number = tail.rsplit(":", 1)[-1].strip()
            if number.isdigit():
                counts[provider] = counts.get(provider, 0) + int(number)
    return counts


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = fraction * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def latency(times_s: list[float], warmup: int, batch: int | None) -> dict[str, Any]:
    """LatencyStats from the timed runs (milliseconds), with throughput."""
    ms = sorted(t * 1000.0 for t in times_s)
    mean = sum(ms) / len(ms)
    per_s = 1000.0 / mean if mean > 0 else 0.0
    return {
        "runs": len(ms),
        "warmup": warmup,
        "p50_ms": percentile(ms, 0.50),
        "p95_ms": percentile(ms, 0.95),
        "p99_ms": percentile(ms, 0.99),
        "mean_ms": mean,
        "min_ms": ms[0],
        "max_ms": ms[-1],
        "batches_per_s": per_s,
        "items_per_s": per_s * batch if batch else None,
    }
