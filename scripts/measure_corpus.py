"""Measure the log diagnosis on the development corpus (../shared/corpus/dev.jsonl).

Prints top-1 cause accuracy, top-1 layer accuracy and top-3 cause accuracy (the corpus's
``other`` counts as ``unknown``), per cause code too, and the cases where the top cause
differs. ``--json`` prints the same as one JSON object.

``no_failure`` (a log that looks alarming while the GPU worked) is right on all three measures
when the top cause is ``unknown`` or has a confidence under 0.5: a warning that does not stop
the GPU provider must not be reported as a confident failure.

    .venv/bin/python scripts/measure_corpus.py [PATH] [--json] [--per-cause]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from fallback_doctor.core.causes import layer_of
from fallback_doctor.core.logs.diagnose_log import LogDiagnosis, explain_text

NO_FAILURE = "no_failure"
CONFIDENT = 0.5
"""A top cause at or above this confidence on a ``no_failure`` log is crying wolf."""


def _default_corpus() -> Path:
    """``shared/corpus/dev.jsonl`` in the nearest folder above this checkout that has it."""
    here = Path(__file__).resolve().parent
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "corpus" / "dev.jsonl"
        if candidate.is_file():
            return candidate
    return here.parent.parent / "shared" / "corpus" / "dev.jsonl"


def score(expected: str, diagnosis: LogDiagnosis) -> tuple[bool, bool, bool]:
    """(top-1 cause, top-1 layer, top-3 cause) hits for one case."""
    ranked = [candidate.cause for candidate in diagnosis.causes]
    if expected == NO_FAILURE:
        calm = diagnosis.top.cause == "unknown" or diagnosis.top.confidence < CONFIDENT
        return calm, calm, calm
    return (
        ranked[0] == expected,
        diagnosis.top.layer == str(layer_of(expected)),
        expected in ranked[:3],
    )


def measure(path: Path) -> dict[str, Any]:
    """Run the diagnosis over every corpus entry and count the hits, overall and per cause."""
    totals = Counter[str]()
    per_cause: dict[str, Counter[str]] = {}
    confusion: Counter[tuple[str, str]] = Counter()
    misses: list[dict[str, Any]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        entry = json.loads(raw)
        expected = "unknown" if entry["category"] == "other" else entry["category"]
        diagnosis = explain_text(entry["log"], source=entry["id"])
        top1, layer1, top3 = score(expected, diagnosis)
        row = per_cause.setdefault(expected, Counter())
        for counter in (totals, row):
            counter["entries"] += 1
            counter["top1_cause"] += top1
            counter["top1_layer"] += layer1
            counter["top3_cause"] += top3
        if not top1:
            got = f"{diagnosis.top.cause} ({diagnosis.top.confidence:.2f})"
            confusion[(expected, diagnosis.top.cause)] += 1
            ranked = [f"{c.cause} {c.confidence:.2f}" for c in diagnosis.causes[:3]]
            misses.append({"id": entry["id"], "expected": expected, "got": got, "ranked": ranked})
    total = totals["entries"]

    def share(count: int) -> float:
        return round(count / total, 4) if total else 0.0

    return {
        "corpus": str(path),
        "entries": total,
        "top1_cause": share(totals["top1_cause"]),
        "top1_layer": share(totals["top1_layer"]),
        "top3_cause": share(totals["top3_cause"]),
        "counts": {key: totals[key] for key in ("top1_cause", "top1_layer", "top3_cause")},
        "per_cause": {cause: dict(counts) for cause, counts in sorted(per_cause.items())},
        "confusion": [
            {"expected": expected, "got": got, "count": count}
            for (expected, got), count in confusion.most_common()
        ],
        "misses": misses,
    }


def _print_text(result: dict[str, Any], per_cause: bool) -> None:
    counts = result["counts"]
    n = result["entries"]
    print(f"corpus: {result['corpus']} ({n} entries)")
    print(f"top-1 cause: {result['top1_cause']:.1%} ({counts['top1_cause']}/{n})")
    print(f"top-1 layer: {result['top1_layer']:.1%} ({counts['top1_layer']}/{n})")
    print(f"top-3 cause: {result['top3_cause']:.1%} ({counts['top3_cause']}/{n})")
    if per_cause:
        print("per cause (top-1 cause / top-1 layer / top-3 cause of n):")
        for cause, row in result["per_cause"].items():
            print(
                f"  {cause}: {row.get('top1_cause', 0)} / {row.get('top1_layer', 0)} / "
                f"{row.get('top3_cause', 0)} of {row['entries']}"
            )
    if result["misses"]:
        print("misses:")
        for miss in result["misses"]:
            print(f"  {miss['id']}: expected {miss['expected']}, ranked {', '.join(miss['ranked'])}")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure, print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--per-cause", action="store_true", help="print the measures per cause code")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus or _default_corpus()
    if not corpus.is_file():
        print(f"measure_corpus: {corpus}: no such file", file=sys.stderr)
        return 2
    result = measure(corpus)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_text(result, args.per_cause)
    return 0


if __name__ == "__main__":
    sys.exit(main())
