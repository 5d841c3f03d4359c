"""The frozen build's budgets, against the pip-installed tool in the same run.

    .venv/bin/python benchmarks/bench_package.py          (GFD_BENCH_QUICK=1: fewer rounds)

Uses the build of the current sources (``packaging/build.py --cache``: built once per source hash
into ~/.cache/gpu-fallback-doctor/frozen/). Measures, alternating frozen and pip rounds:

- the archive's size (.tar.gz; aim: under 150 MB), the folder's, the .deb's when built;
- start to first window: from starting the process to the wizard's first paint (offscreen),
  ``fallback-doctor --run-module gfd_first_paint`` against ``python packaging/gfd_first_paint.py``;
- ``diagnose --quick --json`` of the same interpreter, frozen against ``python -m fallback_doctor``;
- the oldest glibc the build runs on: the newest GLIBC_ symbol version any of its files needs.

The last line is one JSON object (the benchmarks' convention): {"benchmark": "package", "rows": [...]}.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))

from elfinfo import dotted, folder_needs  # noqa: E402

QUICK = os.environ.get("GFD_BENCH_QUICK") == "1"
ROUNDS = 2 if QUICK else 5


def row(
    what: str, now: float, peer: float | None, unit: str, aim: str, met: bool | None, note: str
) -> dict[str, Any]:
    ratio = round(now / peer, 3) if peer else None
    return {
        "what": what,
        "now": round(now, 3),
        "peer": None if peer is None else round(peer, 3),
        "unit": unit,
        "ratio": ratio,
        "aim": aim,
        "met": met,
        "note": note,
    }


def frozen_folder() -> Path:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build.py"), "--cache"],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return Path(proc.stdout.strip().splitlines()[-1])


def first_paint_s(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds from starting ``cmd`` to the wizard's first paint (its own time.time() stamp)."""
    out = os.path.join(cwd, "paint.png")
    started = time.time()
    proc = subprocess.run(
        [*cmd, out], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False
    )
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(facts["paint_wall"]) - started


def wall_s(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, timeout=300, check=False
    )
    return time.perf_counter() - started


def paired(frozen: list[str], pip: list[str], env: dict[str, str], measure: Any) -> tuple[float, float]:
    """Medians of alternating rounds (one warm-up of each first: the page cache, not the tool)."""
    with tempfile.TemporaryDirectory(prefix="gfd-bench-") as cwd:
        measure(frozen, env, cwd), measure(pip, env, cwd)
        ours, theirs = [], []
        for _ in range(ROUNDS):
            ours.append(measure(frozen, env, cwd))
            theirs.append(measure(pip, env, cwd))
    return statistics.median(ours), statistics.median(theirs)


def main() -> int:
    folder = frozen_folder()
    exe = str(folder / "fallback-doctor")
    dist = folder.parent
    rows = []
    archive = next(dist.glob("*.tar.gz"))
    size_mb = archive.stat().st_size / 1e6
    rows.append(row("archive .tar.gz", size_mb, None, "MB", "under 150 MB", size_mb < 150, archive.name))
    folder_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6
    rows.append(
        row("frozen folder", folder_mb, None, "MB", "(unpacked size)", None, "PySide6 ~90 MB, numpy ~40 MB")
    )
    for deb in sorted(dist.glob("packages-*/*.deb"))[-1:]:
        rows.append(row(".deb", deb.stat().st_size / 1e6, None, "MB", "(gzip)", None, deb.name))

    env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "QT_QPA_PLATFORM": "offscreen"}
    ours, theirs = paired(
        [exe, "--run-module", "gfd_first_paint"],
        [sys.executable, str(ROOT / "packaging" / "gfd_first_paint.py")],
        env,
        first_paint_s,
    )
    rows.append(
        row(
            "start to first window",
            ours * 1000,
            theirs * 1000,
            "ms",
            "at most 1.0x the pip tool",
            ours <= theirs * 1.05,
            f"offscreen, median of {ROUNDS}; peer: the pip-installed tool",
        )
    )

    python = shutil.which("python3", path=env["PATH"]) or sys.executable
    ours, theirs = paired(
        [exe, "diagnose", "--quick", "--json", "--python", python],
        [sys.executable, "-m", "fallback_doctor", "diagnose", "--quick", "--json", "--python", python],
        env,
        wall_s,
    )
    rows.append(
        row(
            "diagnose --quick",
            ours * 1000,
            theirs * 1000,
            "ms",
            "at most 1.0x the pip tool",
            ours <= theirs * 1.05,
            f"--python {python}, median of {ROUNDS}",
        )
    )

    needs = folder_needs(folder)
    floor = float(dotted(needs.glibc))
    rows.append(
        row(
            "oldest glibc",
            floor,
            None,
            "glibc",
            "2.35 (Ubuntu 22.04) or older",
            floor <= 2.35,
            f"set by {needs.glibc_file}; GLIBCXX_{dotted(needs.glibcxx)} from the system's libstdc++",
        )
    )
    for item in rows:
        print(f"{item['what']:24} {item['now']:>10} {item['unit']:6} peer {item['peer']}  {item['note']}")
    print(json.dumps({"benchmark": "package", "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
