"""Wall time of one `fallback-doctor check` beside `diagnose --quick` on the same running server.

Usage: python benchmarks/bench_check.py [--runs N]   (GFD_BENCH_QUICK=1: fewer rounds)

The server is real: tests/fleet/ort_server.py in the scenario environment of onnxruntime-gpu
1.23.2 with every CUDA 12 wheel on its library path (built once by tests/scenarios; it maps the
CUDA provider). Both commands run as fresh processes, as Nagios or a technician runs them,
alternating, so a busy moment of the machine hits both alike. The check must stay well below the
static diagnosis (aim: at most half of it): it runs every minute on production servers.
The last line is one JSON object (the benchmark convention of docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fleet"))


def _once(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    """Start the server, time both commands alternately, print the medians and the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    default_runs = 5 if os.environ.get("GFD_BENCH_QUICK") else 15
    parser.add_argument("--runs", type=int, default=default_runs)
    args = parser.parse_args()
    from servers import ort_server

    tool = [sys.executable, "-m", "fallback_doctor"]
    with tempfile.TemporaryDirectory() as folder, ort_server("s9_cuda12_full_stack", Path(folder)) as server:
        target = ["--pid", str(server.pid), "--log", str(server.log)]
        check = [*tool, "check", *target]
        diagnose = [*tool, "diagnose", "--quick", "--json", *target]
        ours: list[float] = []
        peer: list[float] = []
        for _ in range(args.runs):
            ours.append(_once(check))
            peer.append(_once(diagnose))
    now, then = statistics.median(ours) * 1000, statistics.median(peer) * 1000
    for name, times in (("check", ours), ("diagnose --quick", peer)):
        print(f"fallback-doctor {name}: median {statistics.median(times) * 1000:.0f} ms "
              f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, n={len(times)})")  # fmt: skip
    row = {
        "what": "fallback-doctor check on a running server vs diagnose --quick on it",
        "now": round(now, 1),
        "peer": round(then, 1),
        "unit": "ms",
        "ratio": round(now / then, 3),
        "aim": "at most 0.5x",
        "met": now / then <= 0.5,
        "note": f"median of {args.runs} fresh processes each, alternating; the server maps the CUDA provider",
    }
    print(json.dumps({"benchmark": "check", "rows": [row]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
