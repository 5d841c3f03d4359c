"""Measure the log diagnosis on the development corpus (../shared/corpus/dev.jsonl and dev-2.jsonl).

Prints top-1 cause, top-1 layer and top-3 cause accuracy (the corpus's ``other`` counts as
``unknown``), per cause code and per outcome (the text names the cause / leaves several open /
does not say / shows no failure), the confident (>= 0.5) wrong first causes, the benign logs
reported as failures, and the cases where the top cause differs. ``--json`` prints the same as
one JSON object.

``no_failure`` (a log that looks alarming while the GPU worked) is right on all three measures
when the top cause is ``unknown`` or has a confidence under 0.5: a warning that does not stop
the GPU provider must not be reported as a confident failure.

    .venv/bin/python scripts/measure_corpus.py [PATH ...] [--json] [--per-cause]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from fallback_doctor.core.model.causes import layer_of
from fallback_doctor.core.readers.logs.diagnose_log import LogDiagnosis, explain_text

NO_FAILURE = "no_failure"
CONFIDENT = 0.5
"""A top cause at or above this confidence is a confident answer (on a ``no_failure`` log: crying wolf)."""
CORPUS_FILES = ("dev.jsonl", "dev-2.jsonl")
MEASURES = ("top1_cause", "top1_layer", "top3_cause")


def _default_corpus() -> list[Path]:
    """``shared/corpus/dev.jsonl`` and ``dev-2.jsonl`` in the nearest folder above this checkout."""
    here = Path(__file__).resolve().parent
    for folder in (here, *here.parents):
        corpus = folder / "shared" / "corpus"
        if (corpus / CORPUS_FILES[0]).is_file():
            return [corpus / name for name in CORPUS_FILES if (corpus / name).is_file()]
    return [here.parent.parent / "shared" / "corpus" / name for name in CORPUS_FILES]


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


def read_entries(paths: list[Path]) -> list[dict[str, Any]]:
    """Every corpus entry of the files, in order."""
    entries = []
    for path in paths:
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                entries.append(json.loads(raw))
    return entries


def _count(counters: list[Counter[str]], hits: tuple[bool, bool, bool]) -> None:
    for counter in counters:
        counter["entries"] += 1
        for name, hit in zip(MEASURES, hits, strict=True):
            counter[name] += hit


def measure(paths: list[Path]) -> dict[str, Any]:
    """Run the diagnosis over every corpus entry and count the hits, overall, per cause and per outcome."""
    totals = Counter[str]()
    per_cause: dict[str, Counter[str]] = {}
    per_outcome: dict[str, Counter[str]] = {}
    misses: list[dict[str, Any]] = []
    confident_wrong: list[str] = []
    benign_flagged: list[str] = []
    for entry in read_entries(paths):
        expected = "unknown" if entry["category"] == "other" else entry["category"]
        diagnosis = explain_text(entry["log"], source=entry["id"])
        hits = score(expected, diagnosis)
        outcome = getattr(diagnosis, "outcome", "-")
        _count(
            [totals, per_cause.setdefault(expected, Counter()), per_outcome.setdefault(outcome, Counter())],
            hits,
        )
        top = diagnosis.top
        confident = top.cause != "unknown" and top.confidence >= CONFIDENT
        if expected == NO_FAILURE and confident:
            benign_flagged.append(entry["id"])
        elif confident and top.cause != expected:
            confident_wrong.append(entry["id"])
        if not hits[0]:
            ranked = [f"{c.cause} {c.confidence:.2f}" for c in diagnosis.causes[:3]]
            misses.append({"id": entry["id"], "expected": expected, "outcome": outcome, "ranked": ranked})
    total = totals["entries"]
    return {
        "corpus": [str(path) for path in paths],
        "entries": total,
        **{name: round(totals[name] / total, 4) if total else 0.0 for name in MEASURES},
        "counts": {name: totals[name] for name in MEASURES},
        "confident_wrong": confident_wrong,
        "benign_flagged": benign_flagged,
        "per_cause": {cause: dict(counts) for cause, counts in sorted(per_cause.items())},
        "per_outcome": {outcome: dict(counts) for outcome, counts in sorted(per_outcome.items())},
        "misses": misses,
    }


def _row(row: dict[str, int]) -> str:
    return " / ".join(str(row.get(name, 0)) for name in MEASURES) + f" of {row['entries']}"


def _print_text(result: dict[str, Any], per_cause: bool) -> None:
    counts = result["counts"]
    n = result["entries"]
    print(f"corpus: {', '.join(result['corpus'])} ({n} entries)")
    for name, words in zip(MEASURES, ("top-1 cause", "top-1 layer", "top-3 cause"), strict=True):
        print(f"{words}: {result[name]:.1%} ({counts[name]}/{n})")
    print(f"confident (>= {CONFIDENT}) wrong first cause: {len(result['confident_wrong'])} of {n}")
    print(f"benign logs reported as failures: {len(result['benign_flagged'])}")
    print("per outcome (top-1 cause / top-1 layer / top-3 cause of n):")
    for outcome, row in result["per_outcome"].items():
        print(f"  {outcome}: {_row(row)}")
    if per_cause:
        print("per cause (top-1 cause / top-1 layer / top-3 cause of n):")
        for cause, row in result["per_cause"].items():
            print(f"  {cause}: {_row(row)}")
    if result["misses"]:
        print("misses:")
        for miss in result["misses"]:
            ranked = ", ".join(miss["ranked"])
            print(f"  {miss['id']}: expected {miss['expected']}, {miss['outcome']}, ranked {ranked}")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, measure, print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "corpus", nargs="*", type=Path, help="corpus files (default: dev.jsonl and dev-2.jsonl)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--per-cause", action="store_true", help="print the measures per cause code")
    args = parser.parse_args(argv)
    paths: list[Path] = args.corpus or _default_corpus()
    for path in paths:
        if not path.is_file():
            print(f"measure_corpus: {path}: no such file", file=sys.stderr)
            return 2
    result = measure(paths)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_text(result, args.per_cause)
    return 0


if __name__ == "__main__":
    sys.exit(main())
