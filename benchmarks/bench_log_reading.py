"""Benchmark: reading a multi-gigabyte log costs about what a small one does (not a test).

Writes a sparse log of ``--size`` bytes (default 2 GB: a hole, then real ONNX Runtime lines
at the end) and a small log with the same ending into a temporary directory, then times
``read_tail`` and the whole ``explain_file`` on both, and prints the figures.

    .venv/bin/python benchmarks/bench_log_reading.py [--size 2G] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import result_line, row
from fallback_doctor.core.readers.logs.diagnose_log import explain_file
from fallback_doctor.core.readers.logs.reader import read_tail

TAIL = (
    "2024-08-22 10:38:50.000000000 [I:onnxruntime:, inference_session.cc:1 Initialize] start\n"
    "2024-08-22 10:38:52.670883465 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 "
    "TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1637 "
    "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : "
    "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: "
    "cannot open shared object file: No such file or directory\n"
)
FILLER = "2024-08-22 10:38:51.000000000 [I:onnxruntime:, app.cc:1 Run] request served in 12 ms\n"


def _size(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _write(path: Path, size: int) -> None:
    """A log of at least 12 MiB: a sparse hole up to ``size``, then 12 MiB of real lines."""
    body = (FILLER * (12 * 1024 * 1024 // len(FILLER))).encode()
    tail = body + TAIL.encode()
    with path.open("wb") as handle:
        if size > len(tail):
            handle.seek(size - len(tail) - 1)
            handle.write(b"\n")
        handle.write(tail)


def _time(function: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Write the logs, time them, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2G", help="size of the big log (e.g. 2G, 500M)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "big.log"
        small = Path(folder) / "small.log"
        _write(big, _size(args.size))
        _write(small, 0)
        times: dict[str, float] = {}
        for name, path in (("small", small), ("big", big)):
            size = os.path.getsize(path)
            read = _time(lambda p=path: read_tail(p), args.repeat)
            diagnose = _time(lambda p=path: explain_file(p), args.repeat)
            times[name] = diagnose
            top = explain_file(path).top
            print(
                f"{name:5} {size / 1024**2:10.1f} MiB  read_tail {read * 1000:8.1f} ms  "
                f"explain_file {diagnose * 1000:8.1f} ms  top cause: {top.cause}"
            )
        big_mib = os.path.getsize(big) / 1024**2
        print(
            result_line(
                "log_reading",
                [
                    row(
                        f"explain_file on a sparse {big_mib:.0f} MiB log vs the same ending alone (peer)",
                        round(times["big"] * 1000, 1),
                        round(times["small"] * 1000, 1),
                        aim="at most 1.5x (the cost follows the data, not the file's size)",
                        met=times["big"] <= 1.5 * times["small"],
                        note=f"best of {args.repeat}; the scan skips the sparse file's hole",
                    )
                ],
            )
        )


if __name__ == "__main__":
    main()
