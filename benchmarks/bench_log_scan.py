"""Benchmark: the whole-file log scan against ``grep -E`` on the same file, and its peak memory.

Writes a real (not sparse) log as a long-running server leaves it: the start-up with the
provider failure at its head, then one ordinary request line repeated. Then, in alternating
rounds, times the command a user would type to find the failure,
``grep -c -i -E 'ExecutionProvider|Failed to load|LoadLibrary|CUDA failure|cudnn|cublas'``, and
``core/readers/logs/scan.scan_file`` and the whole ``explain_file`` (what ``explain-log`` runs) on the
same file (page cache warm for all); the ratios are against that grep, in the same run.
``GFD_BENCH_MIB`` sets the file's size (1024: the 1 GiB run). Peak memory is measured in a
fresh child process per input (``VmHWM``: the whole process, interpreter and imports
included), for the scan, for the whole ``explain_file``, and for the worst inputs of issue 10:
8 MiB of short lines, a gzip bomb (inflating far past the cap), a sparse 2 GB file. The CPU
time of each (``process_time``, all threads; grep's from ``RUSAGE_CHILDREN``) is reported
beside the wall time: on a machine shared with other work the wall times say more about the
others than about the scan.

    .venv/bin/python benchmarks/bench_log_scan.py      (GFD_BENCH_QUICK=1: smaller, fewer rounds)

The last line printed is one JSON object (the benchmarks' convention, docs/performance.md).
"""

from __future__ import annotations

import json
import os
import resource
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
SIZE = int(os.environ.get("GFD_BENCH_MIB") or (128 if QUICK else 512)) * 1024 * 1024
ROUNDS = 2 if QUICK else 4

HEAD = (
    "Use config file: /opt/bareun/config/bareun.json\n"
    "2026-01-04 10:00:01.100 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 TryGetProviderInfo_CUDA] "
    "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
    "libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
)
BODY = "2026-01-04 10:00:02.117 INFO [worker-3] request served in 41 ms path=/v1/analyze status=200\n"
USER_GREP = "ExecutionProvider|Failed to load|LoadLibrary|CUDA failure|cudnn|cublas"
"""What a user greps a log for when the GPU provider did not load."""

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
    block = (BODY * 4096).encode()
    with path.open("wb") as handle:
        handle.write(HEAD.encode())
        written = len(HEAD)
        while written < size:
            handle.write(block)
            written += len(block)


def time_grep(path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the user's grep on ``path``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(["grep", "-c", "-i", "-E", USER_GREP, str(path)], capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def time_scan(path: Path) -> tuple[float, float]:
    """(wall, CPU of all threads) seconds of the whole-file scan."""
    from fallback_doctor.core.readers.logs.scan import scan_file

    started, cpu = time.perf_counter(), time.process_time()
    scan_file(path)
    return time.perf_counter() - started, time.process_time() - cpu


def time_explain(path: Path) -> tuple[float, float]:
    """(wall, CPU of all threads) seconds of what ``explain-log`` runs on one file."""
    from fallback_doctor.core.readers.logs.diagnose_log import explain_file

    started, cpu = time.perf_counter(), time.process_time()
    explain_file(path)
    return time.perf_counter() - started, time.process_time() - cpu


CHILD = """
import sys, time
from fallback_doctor.core.readers.logs.diagnose_log import explain_file
from fallback_doctor.core.readers.logs.lines import LogReadError
from fallback_doctor.core.readers.logs.scan import scan_file
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
        time_grep(log)  # page cache warm
        time_scan(log)
        time_explain(log)
        times: dict[str, list[tuple[float, float]]] = {"grep": [], "scan": [], "explain": []}
        for _ in range(ROUNDS):
            times["grep"].append(time_grep(log))
            times["scan"].append(time_scan(log))
            times["explain"].append(time_explain(log))
        grep_s = statistics.median(wall for wall, _ in times["grep"])
        grep_cpu = statistics.median(cpu for _, cpu in times["grep"])
        mib = log.stat().st_size / 1024 / 1024
        for what, words in (
            ("scan", "whole-file scan (scan_file)"),
            ("explain", "explain_file (explain-log)"),
        ):
            took = statistics.median(wall for wall, _ in times[what])
            cpu = statistics.median(cpu for _, cpu in times[what])
            rows.append(
                row(
                    f"{words} of a {mib:.0f} MiB log (peer: grep -c -i -E '{USER_GREP}')",
                    round(took * 1000, 1),
                    round(grep_s * 1000, 1),
                    unit="ms",
                    aim="at most 1.5x",
                    met=took / grep_s <= 1.5,
                    note=f"median of {ROUNDS} alternating rounds; {mib / took:.0f} vs {mib / grep_s:.0f} "
                    f"MiB/s; CPU {cpu * 1000:.0f} vs {grep_cpu * 1000:.0f} ms "
                    f"({cpu / max(grep_cpu, 1e-6):.2f}x)",
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
