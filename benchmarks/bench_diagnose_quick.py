"""Median wall time of `fallback-doctor diagnose --quick` beside ONNX Runtime's own print_debug_info.

Usage: python benchmarks/bench_diagnose_quick.py [--python PATH] [--runs N]

Both run as fresh processes, as a technician would run them, interleaved; the target
interpreter must have onnxruntime installed for the comparison command to work. Measure with
bytecode compiled (as a normal install has it): `python -m compileall -q core cli package`, and
without PYTHONDONTWRITEBYTECODE, or every import of ours is compiled from source each time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _time(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    """Print the median and spread of both commands."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--python", default=sys.executable, help="the application's interpreter")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    ours_argv = [
        sys.executable,
        "-m",
        "fallback_doctor",
        "diagnose",
        "--quick",
        "--json",
        "--python",
        args.python,
    ]
    theirs_argv = [args.python, "-c", "import onnxruntime; onnxruntime.print_debug_info()"]
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.runs):  # interleaved, so a busy moment of the machine hits both alike
        ours += _time(ours_argv, 1)
        theirs += _time(theirs_argv, 1)
    for name, times in (
        ("fallback-doctor diagnose --quick", ours),
        ("python -c 'import onnxruntime; onnxruntime.print_debug_info()'", theirs),
    ):
        print(
            f"{name}: median {statistics.median(times) * 1000:.0f} ms "
            f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, n={len(times)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
