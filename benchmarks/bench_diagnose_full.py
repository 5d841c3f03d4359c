"""The full `fallback-doctor diagnose` (with the test inference) on real broken stacks.

    .venv/bin/python benchmarks/bench_diagnose_full.py [--runs N]

One row per scenario stack (tests/scenarios/scenario_stacks.py; those not built here are
listed as not measured): the median wall time of ``diagnose --json --python <stack>`` as a
fresh process, with the scenario's loader path. The aim (issue 17) is at most 3 s on every
stack with the same evidence; there is no peer (nothing else runs this test). The test
inference's phases of the last run are printed (the probe's own ``phases``). The last line is
the result line (benchmarks/_common.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "scenarios"))

from _common import bench_environment, result_line, rounds, row

AIM_S = 3.0
SCENARIOS = ("s3_no_cuda", "s1_cpu_only", "s5b_cudnn_not_on_path")


def _inference(document: dict[str, Any]) -> dict[str, Any]:
    top = document.get("inference")
    if isinstance(top, dict):
        return top
    return (document.get("environment") or {}).get("inference") or {}


def _phases(document: dict[str, Any]) -> list[str]:
    inference = _inference(document)
    result = inference.get("gpu_retry") or inference.get("result") or {}
    return [
        f"{phase['name']} {phase['end_s'] - phase['start_s']:.2f} s"
        for phase in result.get("phases") or ()
        if isinstance(phase, dict) and "start_s" in phase and "end_s" in phase
    ]


def measure(scenario_id: str, runs: int) -> dict[str, Any]:
    """One row: the median of ``runs`` full diagnoses on the scenario's stack."""
    import scenario_runs  # type: ignore[import-not-found]

    scenario = scenario_runs.SCENARIOS[scenario_id]
    stack = scenario.stack_obj()
    what = f"full diagnose on {scenario_id} ({scenario.title})"
    if not stack.python_exe.exists():
        return row(what, None, unit="s", note="stack not built here (scripts/prepare_test_stacks.py)")
    env = {**bench_environment(), **scenario.env()}
    argv = [sys.executable, "-m", "fallback_doctor", "diagnose", "--json", "--python", str(stack.python_exe)]
    times: list[float] = []
    document: dict[str, Any] = {}
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
        times.append(time.perf_counter() - started)
        try:
            document = json.loads(done.stdout)
        except ValueError:
            document = {}
    now = statistics.median(times)
    print(f"{what}: {now:.2f} s (min {min(times):.2f}, max {max(times):.2f}, n={runs})")
    print("  phases of the last run:", "; ".join(_phases(document)) or "none reported")
    return row(
        what,
        round(now, 2),
        unit="s",
        aim=f"at most {AIM_S:.0f} s",
        met=now <= AIM_S,
        note=f"median of {runs}; inference verdict {_inference(document).get('verdict')}",
    )


def main() -> int:
    """Measure every scenario and print the result line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=rounds(3, 1))
    args = parser.parse_args()
    rows = [measure(scenario, args.runs) for scenario in SCENARIOS]
    print(result_line("diagnose_full", rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
