"""The checks and outputs of scripts/gpu-check.sh (run by the tool's own interpreter).

    python scripts/gpu_check.py pins                       the pinned wheels (scenario_stacks.py)
    python scripts/gpu_check.py record OUT SECONDS         NVML series as `--query-gpu` CSV
    python scripts/gpu_check.py expect CASE REPORT.json    PASS/FAIL lines for one case
    python scripts/gpu_check.py recording OUT SERIES CASE  a recording file with the five headers
    python scripts/gpu_check.py write-doc OUT.md RESULTS   docs/gpu-run.md from the results

Every expectation is a line ``PASS|FAIL <case> <what>: <evidence>`` appended to a results
file; the shell script's exit status is 1 when any line is FAIL. Nothing here fakes a GPU:
with the fake driver libraries (GPU_CHECK_FAKE=1) the GPU expectations fail, as they must.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CUDA = "CUDAExecutionProvider"

#: case -> (title, the cause that must be among the findings, whether the GPU must be proven)
CASES: dict[str, tuple[str, str | None, bool]] = {
    "working": ("working CUDA 13 stack (onnxruntime-gpu + NVIDIA CUDA 13 / cuDNN 9 wheels)", None, True),
    "app_model": (
        "the application's own model (--model: the convolutional encoder, --dim batch=16 --dim seq=128)",
        None,
        True,
    ),
    "pid_running": ("a running GPU application, diagnosed by its process id (--pid)", None, True),
    "cudnn_hidden": (
        "cuDNN hidden from the loader (its folder not on LD_LIBRARY_PATH)",
        "cudnn_missing",
        False,
    ),
    "no_visible_gpu": ("CUDA_VISIBLE_DEVICES=-1", "no_gpu_visible", False),
    "other_major": (
        "CUDA libraries of another major (a CUDA 12 build with the CUDA 13 wheels)",
        "cuda_major_mismatch",
        False,
    ),
}


def pins() -> int:
    """Print the pinned requirement sets, one per line: ``working`` then ``other_major``."""
    sys.path.insert(0, str(ROOT / "tests" / "scenarios"))
    import scenario_stacks as stacks  # type: ignore[import-not-found]

    working = (stacks.ORT_GPU_CUDA13, *stacks.ORT_1_31_DEPS, *stacks.CUDA13_WHEELS, *stacks.CUDNN_CUDA13)
    other = (stacks.ORT_GPU_CUDA12, *stacks.ORT_1_23_DEPS, *stacks.CUDA13_WHEELS)
    # The probe reads the GPU memory it holds through NVML when nvidia-ml-py is there.
    print(" ".join((*working, "nvidia-ml-py")))
    print(" ".join(other))
    return 0


# --- the NVML series ----------------------------------------------------------------------------


def record(out: str, seconds: float) -> int:
    """Sample every GPU through the tool's NvmlSource at 10 Hz until SIGTERM or ``seconds``.

    Written as `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,
    memory.total --format=csv -lms 100` prints it, so the recording parsers read it back.
    """
    from fallback_doctor.core.readers.sampling.sources import NvmlSource

    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    source = NvmlSource()
    status = source.open()
    names = _gpu_names()
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n")
        if not status.available:
            handle.write(f"# NVML unavailable: {status.sentence()}\n")
            return 0
        end = time.monotonic() + seconds
        while not stop[0] and time.monotonic() < end:
            now = time.time()
            stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
            for sample in source.read(now, None):
                index = sample.gpu_index if sample.gpu_index is not None else 0
                handle.write(
                    f"{stamp}, {index}, {names.get(index, '?')}, {_value(sample.utilization_percent, '%')}, "
                    f"{_value(sample.memory_used_mib, 'MiB')}, {_value(sample.memory_total_mib, 'MiB')}\n"
                )
            handle.flush()
            time.sleep(0.1)
    source.close()
    return 0


def _value(value: float | None, unit: str) -> str:
    return "[N/A]" if value is None else f"{value:.0f} {unit}"


def _gpu_names() -> dict[int, str]:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return {
                index: str(pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index)))
                for index in range(pynvml.nvmlDeviceGetCount())
            }
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - names are decoration; the samples say what NVML could read
        return {}


def series_peak(path: str) -> float | None:
    """The highest GPU utilization in a recording (None when it holds no reading)."""
    from fallback_doctor.core.readers.sampling.recordings import load_recording

    values = [
        s.utilization_percent for s in load_recording(path).samples if s.utilization_percent is not None
    ]
    return max(values) if values else None


# --- expectations -------------------------------------------------------------------------------


def inference_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The test inference of a report: ``inference`` (schema 2) or ``environment.inference`` (1)."""
    top = doc.get("inference")
    if isinstance(top, dict):
        return top
    return (doc.get("environment") or {}).get("inference") or {}


def _cpu_session(inference: dict[str, Any]) -> dict[str, Any]:
    baseline = inference.get("cpu_baseline")
    if isinstance(baseline, dict):
        return baseline.get("session") or {}
    return (inference.get("result") or {}).get("cpu") or {}


def _as_is_gpu(inference: dict[str, Any]) -> dict[str, Any]:
    retry = inference.get("gpu_retry")
    result = retry if isinstance(retry, dict) else inference.get("result") or {}
    for strategy in result.get("strategies") or ():
        if strategy.get("name") == "as_is":
            return strategy.get("gpu") or {}
    return {}


def _p50(session: dict[str, Any]) -> float | None:
    latency = session.get("latency") or {}
    value = latency.get("p50_ms")
    return float(value) if isinstance(value, int | float) else None


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def cudnn_found_elsewhere(doc: dict[str, Any]) -> str | None:
    """Where the loader found cuDNN outside NVIDIA's wheel folder (a system cuDNN, as on the H200
    machine of the first GPU run: /lib/x86_64-linux-gnu/libcudnn.so.9), or None."""
    environment = doc.get("environment") or {}
    for report in (environment.get("libraries") or {}).get("reports") or ():
        for item in report.get("resolutions") or ():
            name, path = str(item.get("name") or ""), item.get("path")
            if name.startswith("libcudnn.so") and path and "/nvidia/cudnn/" not in str(path):
                return str(path)
    return None


def _cudnn_not_hideable(
    doc: dict[str, Any], inference: dict[str, Any], where: str
) -> list[tuple[bool, str, str]]:
    """Hiding the wheel's folder cannot hide a system cuDNN: then the tool must say it is found
    there, and the test inference must agree (it ran on the GPU)."""
    causes = [finding.get("cause") for finding in doc.get("findings") or ()]
    nodes = _as_is_gpu(inference).get("nodes_per_provider") or {}
    return [
        (
            "cudnn_missing" not in causes,
            f"cuDNN could not be hidden (the system's loader finds {where}): no cudnn_missing finding",
            f"causes {causes}",
        ),
        (
            inference.get("verdict") == "gpu_active" and int(nodes.get(CUDA, 0)) > 0,
            "the test inference agrees: it ran on the GPU",
            f"inference verdict {inference.get('verdict')}, nodes {nodes or 'unknown'}",
        ),
    ]


def expectations(case: str, doc: dict[str, Any], series: str | None = None) -> list[tuple[bool, str, str]]:
    """(passed, what, evidence) for one case's report."""
    title, cause, gpu_expected = CASES[case]
    del title
    if case == "cudnn_hidden" and (where := cudnn_found_elsewhere(doc)) is not None:
        return _cudnn_not_hideable(doc, inference_of(doc), where)
    inference = inference_of(doc)
    gpu = _as_is_gpu(inference)
    cpu = _cpu_session(inference)
    causes = [finding.get("cause") for finding in doc.get("findings") or ()]
    nodes = gpu.get("nodes_per_provider") or {}
    checks: list[tuple[bool, str, str]] = []
    if gpu_expected:
        checks.append(
            (doc.get("verdict") == "gpu_verified", "verdict gpu_verified", f"verdict {doc.get('verdict')}")
        )
        checks.append(
            (int(nodes.get(CUDA, 0)) > 0, "nodes on the CUDA provider", f"nodes {nodes or 'unknown'}")
        )
        memory = (gpu.get("gpu_memory") or {}).get("probe_bytes")
        checks.append(
            (isinstance(memory, int) and memory > 0, "GPU memory held by the probe", f"probe_bytes {memory}")
        )
        cpu_ms, gpu_ms = _p50(cpu), _p50(gpu)
        faster = cpu_ms is not None and gpu_ms is not None and gpu_ms * 5 <= cpu_ms
        checks.append(
            (
                faster,
                "GPU at least 5x faster than the CPU baseline on the test model (a 4-block BERT-shaped "
                "encoder, batch 16x128; BERT-base itself: ~480 ms on 8 CPU cores vs ~12 ms on a T4)",
                f"CPU p50 {_ms(cpu_ms)}, GPU p50 {_ms(gpu_ms)}",
            )
        )
        if series is not None:
            peak = series_peak(series)
            checks.append(
                (peak is not None and peak > 0, "NVML shows the GPU busy", f"peak utilization {peak}")
            )
        if case == "pid_running":
            target = doc.get("target") or {}
            checks.append(
                (
                    bool(target.get("pid")) and bool(target.get("python")),
                    "the report describes the running process and its own interpreter",
                    f"target pid {target.get('pid')}, python {target.get('python')}",
                )
            )
    else:
        checks.append((cause in causes, f"finding {cause}", f"causes {causes}"))
        fell_back = inference.get("verdict") in ("fell_back_to_cpu", "failed") and not inference.get(
            "gpu_verified"
        )
        checks.append(
            (
                fell_back,
                "a real fallback (the test inference did not run on the GPU)",
                f"inference verdict {inference.get('verdict')}, nodes {nodes or 'unknown'}",
            )
        )
        checks.append(
            (doc.get("verdict") != "gpu_verified", "not gpu_verified", f"verdict {doc.get('verdict')}")
        )
    return checks


def expect(case: str, report: str, results: str, series: str | None = None) -> int:
    """Append the case's PASS/FAIL lines to ``results``; exit status 1 when one failed."""
    try:
        doc = json.loads(Path(report).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        lines = [f"FAIL {case} a readable report: {error}"]
    else:
        lines = [
            f"{'PASS' if ok else 'FAIL'} {case} {what}: {evidence}"
            for ok, what, evidence in expectations(case, doc, series)
        ]
    with open(results, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(line.startswith("PASS") for line in lines) else 1


# --- outputs ------------------------------------------------------------------------------------


def recording(out: str, series: str, case: str, gpu: str, mode: str) -> int:
    """The series with the five header lines of tests/data/gpu_series (recorded here, dated)."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = Path(series).read_text(encoding="utf-8")
    header = [
        f"# source: recorded by this project's scripts/gpu-check.sh on {when} ({mode})",
        f"# gpu: {gpu}",
        f"# workload: fallback-doctor diagnose test inference (a 4-block BERT-shaped encoder, batch 16x128), "
        f"case {case}: {CASES[case][0]}",
        "# command: python scripts/gpu_check.py record (the tool's NvmlSource at 10 Hz, printed as "
        "nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,memory.total "
        "--format=csv -lms 100)",
        "# note: recorded on the machine that ran the check, not published elsewhere",
    ]
    Path(out).write_text("\n".join(header) + "\n" + body, encoding="utf-8")
    return 0


def write_doc(out: str, results: str, info: str) -> int:
    """docs/gpu-run.md: where and when, every expectation with its evidence, the verdict."""
    lines = Path(results).read_text(encoding="utf-8").splitlines() if Path(results).exists() else []
    facts = json.loads(Path(info).read_text(encoding="utf-8")) if Path(info).exists() else {}
    failed = [line for line in lines if line.startswith("FAIL")]
    skipped = [line for line in lines if line.startswith("SKIP")]
    checked = len(lines) - len(skipped)
    text = [
        "# The GPU run (scripts/gpu-check.sh)",
        "",
        f"Run on {facts.get('date', '?')} on {facts.get('gpu', '?')} (driver {facts.get('driver', '?')}), "
        f"mode: {facts.get('mode', '?')}, {facts.get('seconds', '?')} s in all.",
        "",
        "| result | case | expectation: evidence |",
        "|---|---|---|",
    ]
    for line in lines:
        verdict, case, rest = [*line.split(" ", 2), "", ""][:3]
        text.append(f"| {verdict} | {case} | {rest.replace('|', '/')} |")
    text += [
        "",
        f"{checked - len(failed)} of {checked} expectations held."
        + (" Failed: " + "; ".join(failed) if failed else "")
        + (f" Not run: {len(skipped)} case(s), each with its reason above." if skipped else ""),
        "",
        "Recordings: " + ", ".join(facts.get("recordings", []))
        if facts.get("recordings")
        else "Recordings: none",
        "",
    ]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("\n".join(text), encoding="utf-8")
    return 0


def main(argv: list[str]) -> int:
    """Dispatch the subcommands named in the module's docstring."""
    if not argv:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "pins":
        return pins()
    if command == "record":
        return record(rest[0], float(rest[1]))
    if command == "expect":
        return expect(rest[0], rest[1], rest[2], rest[3] if len(rest) > 3 else None)
    if command == "recording":
        return recording(*rest[:5])
    if command == "write-doc":
        return write_doc(rest[0], rest[1], rest[2])
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
