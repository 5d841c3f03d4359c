"""What every benchmark script shares: the result line, paired timing, the environment to time in.

The convention (docs/performance.md, "How the table is made"): a benchmark is a file
``benchmarks/bench_<name>.py`` that runs with no arguments and prints, as the LAST line of its
standard output, one JSON object made by ``result_line``::

    {"benchmark": "<name>", "rows": [{"what": ..., "now": ..., "peer": ..., "unit": ...,
      "ratio": ..., "aim": ..., "met": ...}, ...]}

``now`` is our figure, ``peer`` the figure of the thing we compare with, measured in the same
run (None where there is no peer), ``ratio`` now/peer, ``aim`` a sentence ("at most 1.0x"),
``met`` True/False (None when it cannot be judged here, e.g. no GPU). ``GFD_BENCH_QUICK=1`` in
the environment asks for fewer rounds (``rounds``). ``benchmarks/run_all.py`` runs every such
file as a fresh process and writes the table into docs/performance.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEER_CODE = "import onnxruntime; onnxruntime.print_debug_info()"


def rounds(full: int, quick: int) -> int:
    """How many rounds to run: ``quick`` when GFD_BENCH_QUICK=1 is set, else ``full``."""
    return quick if os.environ.get("GFD_BENCH_QUICK") == "1" else full


def row(
    what: str,
    now: float | None,
    peer: float | None = None,
    *,
    unit: str = "ms",
    aim: str = "",
    met: bool | None = None,
    note: str = "",
) -> dict[str, Any]:
    """One row of the table; the ratio is now/peer when both are there."""
    ratio = round(now / peer, 3) if now is not None and peer else None
    return {
        "what": what,
        "now": now,
        "peer": peer,
        "unit": unit,
        "ratio": ratio,
        "aim": aim,
        "met": met,
        "note": note,
    }


def result_line(name: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """The JSON object a benchmark prints as its last line."""
    return json.dumps({"benchmark": name, "rows": list(rows)}, ensure_ascii=False)


def bench_environment() -> dict[str, str]:
    """The environment both sides are timed in: bytecode written, into a private prefix.

    A normal install has its bytecode compiled; PYTHONDONTWRITEBYTECODE (set on some machines)
    would make every import of both sides compile from source each time. The prefix keeps the
    bytecode out of the application's environment (nothing is written into it).
    """
    from platformdirs import user_cache_dir

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(user_cache_dir("gpu-fallback-doctor")) / "bench-pycache")
    return env


def peer_argv(python: str) -> list[str]:
    """ONNX Runtime's own look at itself, under ``python``."""
    return [python, "-c", PEER_CODE]


def time_once(argv: Sequence[str], env: Mapping[str, str], timeout: float = 120.0) -> float:
    """Wall seconds of one fresh process (output thrown away)."""
    started = time.perf_counter()
    subprocess.run(
        list(argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        timeout=timeout,
        check=False,
    )
    return time.perf_counter() - started


def paired(
    ours: Sequence[str], theirs: Sequence[str], env: Mapping[str, str], runs: int
) -> tuple[list[float], list[float]]:
    """Both commands run alternately (the order flips each round), after one warm-up each.

    A busy moment of the machine then hits both alike; the ratio of medians is the figure.
    """
    time_once(ours, env)
    time_once(theirs, env)
    a: list[float] = []
    b: list[float] = []
    for index in range(runs):
        if index % 2:
            b.append(time_once(theirs, env))
            a.append(time_once(ours, env))
        else:
            a.append(time_once(ours, env))
            b.append(time_once(theirs, env))
    return a, b


def median_ms(values: Sequence[float]) -> float:
    """The median in milliseconds, rounded to 0.1 ms."""
    return round(statistics.median(values) * 1000, 1)


def slower_rounds(a: Sequence[float], b: Sequence[float]) -> int:
    """In how many paired rounds the first was slower than the second."""
    return sum(1 for x, y in zip(a, b, strict=True) if x > y)


def app_python() -> Path | None:
    """An application environment with onnxruntime-gpu and the NVIDIA wheels (scenario gpu13-full).

    Built by tests/scenarios/scenario_stacks.py (``python scripts/prepare_test_stacks.py``);
    None when it has not been built on this machine.
    """
    sys.path.insert(0, str(ROOT / "tests" / "scenarios"))
    try:
        from scenario_stacks import STACKS  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    python: Path = STACKS["gpu13-full"].python_exe
    return python if python.exists() else None
