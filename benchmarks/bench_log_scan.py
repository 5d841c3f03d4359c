"""Benchmark: the whole-file log scan against ``grep -E`` on the same file, and its peak memory.

Writes a real (not sparse) log with the start-up and the provider failure at its head and
ordinary lines after it, then, in alternating rounds, times ``grep -E -i -c`` with the scan's
own keywords (the same literals, as one alternation) and ``core/logs/scan.scan_file`` on the
same file (page cache warm for both). Peak memory is measured in a fresh child process per
input (``VmHWM``: the whole process, interpreter and imports included), for the scan, for the
whole ``explain_file``, and for the worst inputs of issue 10: 8 MiB of short lines, a gzip bomb
(inflating far past the cap), a sparse 2 GB file.

    .venv/bin/python benchmarks/bench_log_scan.py      (GFD_BENCH_QUICK=1: smaller, fewer rounds)

The last line printed is one JSON object (the benchmarks' convention, docs/performance.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

QUICK = os.environ.get("GFD_BENCH_QUICK") == "1"
SIZE = (128 if QUICK else 512) * 1024 * 1024
ROUNDS = 2 if QUICK else 4

HEAD = (
    "Use config file: /opt/bareun/config/bareun.json\n"
    "2026-01-04 10:00:01.100 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 TryGetProviderInfo_CUDA] "
    "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
    "libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
)
BODY = (
    "2026-01-04 10:00:02.{n:03d} INFO [worker-{w}] request {n} served in {ms} ms path=/v1/analyze\n",
    "2026-01-04 10:00:02.{n:03d} DEBUG [pool] connection {w} returned to the pool after {ms} ms\n",
    "2026-01-04 10:00:02.{n:03d} WARN [http] slow client {w}: {ms} ms to read the request body\n",
)

try:  # the shared helpers (benchmarks/_common.py), when present
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import result_line, row  # type: ignore[import-not-found]
except ImportError:

    def row(
        what: str, now: float, peer: float | None, unit: str, aim: str, met: bool | None, note: str = ""
    ) -> dict[str, Any]:
        ratio = None if peer in (None, 0) else round(now / peer, 3)  # type: ignore[operator]
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

    def result_line(name: str, rows: list[dict[str, Any]]) -> str:
        return json.dumps({"benchmark": name, "rows": rows})


def write_log(path: Path, size: int) -> None:
    lines = [BODY[i % 3].format(n=i % 1000, w=i % 17, ms=(i * 7) % 900) for i in range(3000)]
    block = "".join(lines).encode()
    with path.open("wb") as handle:
        handle.write(HEAD.encode())
        written = len(HEAD)
        while written < size:
            handle.write(block)
            written += len(block)


def grep_pattern() -> str:
    from fallback_doctor.core.logs.scan import scan_keywords

    startup, others = scan_keywords()
    return "|".join(re.escape(word.decode()) for word in (*startup, *others))


def time_grep(path: Path, pattern: str) -> float:
    started = time.perf_counter()
    subprocess.run(["grep", "-E", "-i", "-c", pattern, str(path)], capture_output=True, check=False)
    return time.perf_counter() - started


def time_scan(path: Path) -> float:
    from fallback_doctor.core.logs.scan import scan_file

    started = time.perf_counter()
    scan_file(path)
    return time.perf_counter() - started


CHILD = """
import sys, time
from fallback_doctor.core.logs.diagnose_log import explain_file
from fallback_doctor.core.logs.lines import LogReadError
from fallback_doctor.core.logs.scan import scan_file
what, path = sys.argv[1], sys.argv[2]
started = time.perf_counter()
try:
    result = scan_file(path).note if what == "scan" else explain_file(path).top.cause
except LogReadError as error:
    result = "refused: " + str(error)
seconds = time.perf_counter() - started
peak = 0.0
with open("/proc/self/status") as status:  # VmHWM: this process's own peak (ru_maxrss survives exec)
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
print(seconds, peak, result)
"""


def in_child(what: str, path: Path) -> tuple[float, float, str]:
    """(seconds, peak MiB of the whole child, what it found) for one input, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, what, str(path)], capture_output=True, text=True, check=False
    )
    seconds, peak, found = done.stdout.strip().split(" ", 2)
    return float(seconds), float(peak), found


def hostile_inputs(folder: Path) -> dict[str, Path]:
    short = folder / "short.log"
    short.write_bytes(b"x\n" * (4 * 1024 * 1024))
    bomb = folder / "bomb.log.1.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with bomb.open("wb") as handle:
        handle.write(compressor.compress(HEAD.encode()))
        zeros = b"\0" * (16 * 1024 * 1024)
        for _ in range(8 if QUICK else 640):  # 128 MiB or 10 GiB inflated
            handle.write(compressor.compress(zeros))
        handle.write(compressor.flush())
    sparse = folder / "sparse.log"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 1024 * 1024 * 1024)
    return {
        "8 MiB of 'x\\n' lines": short,
        f"gzip bomb ({bomb.stat().st_size / 1e6:.1f} MB)": bomb,
        "sparse 2 GB": sparse,
    }


def main() -> None:
    if shutil.which("grep") is None:
        print(
            result_line(
                "log_scan",
                [row("whole-file scan vs grep -E", None, None, aim="at most 1.5x", note="no grep here")],
            )
        )
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-log-scan-") as folder:
        log = Path(folder) / "server.log"
        write_log(log, SIZE)
        pattern = grep_pattern()
        time_grep(log, pattern)  # page cache warm
        time_scan(log)
        grep_times: list[float] = []
        scan_times: list[float] = []
        for _ in range(ROUNDS):
            grep_times.append(time_grep(log, pattern))
            scan_times.append(time_scan(log))
        grep_s, scan_s = statistics.median(grep_times), statistics.median(scan_times)
        mib = log.stat().st_size / 1024 / 1024
        ratio = scan_s / grep_s
        rows.append(
            row(
                f"whole-file scan of a {mib:.0f} MiB log (grep -E -i, same keywords: peer)",
                round(scan_s * 1000, 1),
                round(grep_s * 1000, 1),
                unit="ms",
                aim="at most 1.5x",
                met=ratio <= 1.5,
                note=f"median of {ROUNDS} alternating rounds; {mib / scan_s:.0f} vs {mib / grep_s:.0f} MiB/s",
            )
        )
        for what in ("scan", "explain"):
            seconds, peak, found = in_child(what, log)
            label = "scan_file" if what == "scan" else "explain_file (scan and diagnosis)"
            rows.append(
                row(
                    f"peak memory, {label}, {mib:.0f} MiB log",
                    round(peak, 1),
                    None,
                    unit="MiB",
                    aim="under 200 MiB",
                    met=peak < 200,
                    note=f"{seconds:.2f} s; {found[:80]}",
                )
            )
        for name, path in hostile_inputs(Path(folder)).items():
            seconds, peak, found = in_child("explain", path)
            rows.append(
                row(
                    f"explain_file on {name}",
                    round(seconds * 1000, 1),
                    None,
                    unit="ms",
                    aim="under 5 s, under 300 MiB",
                    met=seconds < 5 and peak < 300,
                    note=f"peak {peak:.0f} MiB; {found[:80]}",
                )
            )
    for item in rows:
        print(
            f"{item['what']}: {item['now']} {item['unit']}"
            + (f" (peer {item['peer']}, ratio {item['ratio']})" if item["peer"] else "")
            + f" — {item['note']}"
        )
    print(result_line("log_scan", rows))


if __name__ == "__main__":
    main()
