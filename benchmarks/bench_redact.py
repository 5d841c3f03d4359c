"""Benchmark: bundle redaction throughput on real logs (not a test).

The corpus: every real log of /work/shared/corpus/dev.jsonl (or tests/data/logs when that is not
here), repeated to ``--size`` MiB, with an identity or secret planted every ``--every`` lines
(user, host, IPv4, password). Timed: :meth:`Redactor.learn` then :meth:`Redactor.redact`, the way
an export runs them, best of ``--repeat``. Peers measured in the same run: one ``re.sub`` of an
IPv4 pattern over the same text (a floor no redaction beats), and, with ``--baseline-ref REF``,
the self-contained redact.py of that git commit (the implementation before this one).

    .venv/bin/python benchmarks/bench_redact.py [--size 8] [--every 50] [--baseline-ref 1a8adcd]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path("/work/shared/corpus/dev.jsonl")


def corpus_lines() -> list[str]:
    """Real log lines: the corpus's logs, else the test logs."""
    lines: list[str] = []
    if CORPUS.is_file():
        for row in CORPUS.read_text(encoding="utf-8").splitlines():
            log = json.loads(row).get("log") or ""
            lines.extend(line for line in log.splitlines() if line.strip())
    if not lines:
        for path in sorted((ROOT / "tests" / "data" / "logs").glob("*.log")):
            lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


def make_text(size_mib: float, every: int) -> str:
    """``size_mib`` MiB of real lines with a plant every ``every`` lines."""
    base = corpus_lines()
    plants = [
        "2025-11-08 19:02:18 started by alicekim on gpu-node-17 (10.20.30.{n})",
        "2025-11-08 19:02:19 loading /home/alicekim/models/m{n}.onnx password=hunter{n}",
        "2025-11-08 19:02:20 request from 192.168.{n}.7 user=bob{n} token: tok{n}abcdef",
    ]
    out: list[str] = []
    total = 0
    index = 0
    while total < size_mib * 1024 * 1024:
        line = base[index % len(base)]
        if every and index % every == 0:
            line = plants[(index // every) % len(plants)].format(n=index % 250)
        out.append(line)
        total += len(line) + 1
        index += 1
    return "\n".join(out) + "\n"


def time_redactor(module: Any, text: str, repeat: int) -> tuple[float, int]:
    """Best seconds for learn + redact, and the number of redactions."""
    best = float("inf")
    count = 0
    for _ in range(repeat):
        redactor = module.Redactor(use_local_identity=False)
        started = time.perf_counter()
        redactor.learn(text)
        result = redactor.redact(text)
        best = min(best, time.perf_counter() - started)
        count = len(result.redactions)
    return best, count


def time_floor(text: str, repeat: int) -> float:
    pattern = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        pattern.sub("ip", text)
        best = min(best, time.perf_counter() - started)
    return best


def load_baseline(ref: str) -> Any:
    """redact.py of git commit ``ref`` as a module (it must be the self-contained one)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:core/redaction/redact.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="bench-redact-"))
    path = folder / "redact_baseline.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("redact_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["redact_baseline"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("GFD_BENCH_QUICK") == "1"
    parser.add_argument("--size", type=float, default=2.0 if quick else 8.0, help="MiB of text (default 8)")
    parser.add_argument("--every", type=int, default=50, help="a plant every N lines (0: none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-ref", help="also time core/redaction/redact.py of this git commit")
    args = parser.parse_args(argv)
    from fallback_doctor.core.redaction import redact

    text = make_text(args.size, args.every)
    mib = len(text.encode("utf-8")) / (1024 * 1024)
    seconds, count = time_redactor(redact, text, args.repeat)
    floor = time_floor(text, args.repeat)
    print(f"text: {mib:.1f} MiB, {text.count(chr(10))} lines, a plant every {args.every} lines")
    print(f"redaction (learn + redact): {seconds:.2f} s = {mib / seconds:.1f} MiB/s, {count} redactions")
    print(f"peer, one re.sub of an IPv4 pattern: {floor:.3f} s = {mib / floor:.1f} MiB/s")
    print(f"ratio redaction / one regex pass: {seconds / floor:.1f}x")
    rows = [
        {
            "what": "bundle redaction (learn + redact) of real logs",
            "now": round(mib / seconds, 2),
            "peer": round(mib / floor, 2),
            "unit": "MiB/s",
            "ratio": round(floor / seconds, 3),
            "aim": "at least 20 MiB/s",
            "met": mib / seconds >= 20,
            "note": f"peer: one re.sub of an IPv4 pattern over the same {mib:.0f} MiB; {count} redactions",
        }
    ]
    if args.baseline_ref:
        baseline = load_baseline(args.baseline_ref)
        old_seconds, old_count = time_redactor(baseline, text, 1)
        print(
            f"baseline {args.baseline_ref}: {old_seconds:.2f} s = {mib / old_seconds:.2f} MiB/s, "
            f"{old_count} redactions; speed-up {old_seconds / seconds:.1f}x"
        )
        rows.append(
            {
                "what": f"bundle redaction, against the redactor of {args.baseline_ref}",
                "now": round(mib / seconds, 2),
                "peer": round(mib / old_seconds, 2),
                "unit": "MiB/s",
                "ratio": round(old_seconds / seconds, 2),
                "aim": "faster",
                "met": seconds < old_seconds,
                "note": "the baseline also replaced ordinary words learned as hosts ('provider')",
            }
        )
    print(json.dumps({"benchmark": "redact", "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
