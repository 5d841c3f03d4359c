"""`fallback-doctor diagnose --quick --json` beside ONNX Runtime's own print_debug_info, paired.

    .venv/bin/python benchmarks/bench_diagnose_quick.py [--runs N] [--python PATH]

Two rows: the tool's own environment (the interpreter running this script, installed as
``make wizard`` installs it), and an application's environment with onnxruntime-gpu and the
NVIDIA wheels (the scenario stack gpu13-full from tests/scenarios/scenario_stacks.py, or
``--python``). Each pair runs as fresh processes, alternating which goes first, after one
warm-up each; both sides get their bytecode compiled into a private PYTHONPYCACHEPREFIX (as an
installed package has it; nothing is written into the application's environment). The figure
is the ratio of the medians; the aim is at most 1.0x. The last line is the result line
(benchmarks/_common.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import app_python, bench_environment, paired, peer_argv, result_line, rounds, row, slower_rounds

AIM = 1.0


def ours_argv(python: str) -> list[str]:
    """The quick diagnosis as a technician runs it (``python -m fallback_doctor`` = the command)."""
    return [sys.executable, "-m", "fallback_doctor", "diagnose", "--quick", "--json", "--python", python]


def measure(what: str, python: str, runs: int) -> dict[str, object]:
    """One paired row: ours against print_debug_info under ``python``."""
    ours, theirs = paired(ours_argv(python), peer_argv(python), bench_environment(), runs)
    now = round(statistics.median(ours) * 1000, 1)
    peer = round(statistics.median(theirs) * 1000, 1)
    ratio = now / peer
    print(
        f"{what}: {now:.0f} ms vs {peer:.0f} ms ({ratio:.2f}x; slower in {slower_rounds(ours, theirs)} of "
        f"{runs} rounds; ours min {min(ours) * 1000:.0f} max {max(ours) * 1000:.0f})"
    )
    return row(
        what,
        now,
        peer,
        aim=f"at most {AIM:.1f}x",
        met=ratio <= AIM,
        note=f"median of {runs} paired rounds; slower in {slower_rounds(ours, theirs)} of {runs}",
    )


def main() -> int:
    """Measure both rows and print the result line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=rounds(21, 7))
    parser.add_argument("--python", help="an application interpreter (default: scenario gpu13-full)")
    args = parser.parse_args()
    rows = [
        measure(
            "diagnose --quick --json vs print_debug_info(), the tool's own environment",
            sys.executable,
            args.runs,
        )
    ]
    application = args.python or (str(app_python()) if app_python() else None)
    if application:
        rows.append(
            measure(
                "the same with --python an application environment (onnxruntime-gpu + NVIDIA wheels)",
                application,
                args.runs,
            )
        )
    else:
        rows.append(
            row(
                "the same with --python an application environment",
                None,
                note="no application environment here (scripts/prepare_test_stacks.py builds gpu13-full)",
            )
        )
    print(result_line("diagnose_quick", rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
