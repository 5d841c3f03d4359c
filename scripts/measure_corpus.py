"""Measure the log diagnosis on the development corpus (../shared/corpus/dev.jsonl).

Prints top-1 cause accuracy, top-1 layer accuracy and top-3 cause accuracy (the corpus's
``other`` counts as ``unknown``), and the cases where the top cause differs. ``--json`` prints
the same as one JSON object.

    .venv/bin/python scripts/measure_corpus.py [PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from fallback_doctor.core.causes import layer_of
from fallback_doctor.core.logs.diagnose_log import explain_text

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "dev.jsonl"


def measure(path: Path) -> dict[str, Any]:
    """Run the diagnosis over every corpus entry and count the hits."""
    total = top1 = top3 = layer1 = 0
    confusion: Counter[tuple[str, str]] = Counter()
    misses: list[dict[str, Any]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        entry = json.loads(raw)
        expected = "unknown" if entry["category"] == "other" else entry["category"]
        diagnosis = explain_text(entry["log"], source=entry["id"])
        ranked = [candidate.cause for candidate in diagnosis.causes]
        total += 1
        top1 += ranked[0] == expected
        top3 += expected in ranked[:3]
        layer1 += diagnosis.top.layer == str(layer_of(expected))
        if ranked[0] != expected:
            confusion[(expected, ranked[0])] += 1
            misses.append({"id": entry["id"], "expected": expected, "ranked": ranked[:3]})

    def share(count: int) -> float:
        return round(count / total, 4) if total else 0.0

    return {
        "corpus": str(path),
        "entries": total,
        "top1_cause": share(top1),
        "top1_layer": share(layer1),
        "top3_cause": share(top3),
        "counts": {"top1_cause": top1, "top1_layer": layer1, "top3_cause": top3},
        "confusion": [
            {"expected": expected, "got": got, "count": count}
            for (expected, got), count in confusion.most_common()
        ],
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"measure_corpus: {args.corpus}: no such file", file=sys.stderr)
        return 2
    result = measure(args.corpus)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    counts = result["counts"]
    n = result["entries"]
    print(f"corpus: {result['corpus']} ({n} entries)")
    print(f"top-1 cause: {result['top1_cause']:.1%} ({counts['top1_cause']}/{n})")
    print(f"top-1 layer: {result['top1_layer']:.1%} ({counts['top1_layer']}/{n})")
    print(f"top-3 cause: {result['top3_cause']:.1%} ({counts['top3_cause']}/{n})")
    if result["confusion"]:
        print("confusion (expected -> got):")
        for row in result["confusion"]:
            print(f"  {row['expected']} -> {row['got']}: {row['count']}")
        print("misses:")
        for miss in result["misses"]:
            print(f"  {miss['id']}: expected {miss['expected']}, ranked {', '.join(miss['ranked'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
