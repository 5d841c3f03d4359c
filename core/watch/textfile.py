"""The check's result as a node_exporter textfile (Prometheus text exposition format 0.0.4).

Written by hand (the format is a few lines; prometheus_client would be a dependency of every
install for that): ``# HELP`` and ``# TYPE`` per metric, label values escaped (backslash, double
quote, newline), and the file replaced atomically (a temporary file in the same folder, then a
rename), as node_exporter's textfile collector asks, so it never reads half a file.

Format: prometheus.io/docs/instrumenting/exposition_formats/ ; collector:
github.com/prometheus/node_exporter#textfile-collector.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from fallback_doctor.core.watch.check import WatchResult

PREFIX = "fallback_doctor"

_HELP = {
    "check_status": "Nagios state of the check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    "process_running": "1 when the server process was found and read.",
    "onnxruntime_loaded": "1 when the process has an ONNX Runtime library mapped.",
    "cuda_provider_loaded": "1 when the process has libonnxruntime_providers_cuda mapped.",
    "gpu_memory_used_bytes": "GPU memory the process holds according to NVML (absent when unknown).",
    "configured_provider_info": "The execution provider the configuration asks for (or unknown).",
    "first_cause_info": "The ranked first cause code (none when there is nothing to fix).",
    "mapped_library_info": "A CUDA runtime, cuBLAS or cuDNN library the process has mapped.",
    "check_duration_seconds": "How long the check took.",
    "check_timestamp_seconds": "When the check ran (Unix time).",
}


def escape_label(value: str) -> str:
    """A label value as the text format wants it: ``\\`` ``\"`` and newline escaped.

    The file is UTF-8: a lone surrogate (a ``--name`` whose bytes are not UTF-8) is written
    as its visible escape (``\\udcff``), the way core/views/escape.py shows it.
    """
    value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: dict[str, str]) -> str:
    return "{" + ",".join(f'{key}="{escape_label(value)}"' for key, value in pairs.items()) + "}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def render_textfile(result: WatchResult, target: str | None = None) -> str:
    """The metrics of one check; ``target`` labels them (default: the server's name)."""
    name = target or result.app
    base = {"target": name}
    process = result.process
    samples: dict[str, list[tuple[dict[str, str], float]]] = {key: [] for key in _HELP}
    samples["check_status"].append((base, float(result.state.value)))
    running = process is not None and process.error is None
    samples["process_running"].append((base, float(running)))
    examined = result.processes or ((process,) if process is not None else ())
    for each in examined if running else ():
        if not each.maps_read:
            continue
        per_process = {**base, "pid": str(each.pid)}
        samples["onnxruntime_loaded"].append((per_process, float(each.onnxruntime_mapped)))
        samples["cuda_provider_loaded"].append((per_process, float(each.cuda_provider_mapped)))
        memory = each.gpu_memory
        if memory.status in ("holds", "none"):
            used = (memory.used_mib or 0) if memory.status == "holds" else 0
            samples["gpu_memory_used_bytes"].append((per_process, float(used * 1024 * 1024)))
        for lib in each.mapped_libraries:
            if lib.family.lower() in ("cudart", "cublas", "cublaslt", "cudnn"):
                labels = {**per_process, "family": lib.family, "library": lib.name}
                samples["mapped_library_info"].append((labels, 1.0))
    provider = result.configured_provider or "unknown"
    samples["configured_provider_info"].append(({**base, "provider": provider}, 1.0))
    cause = result.first_cause
    cause_labels = {
        **base,
        "cause": cause.cause if cause else ("none" if result.state.value == 0 else result.code),
        "finding": cause.id if cause else result.code,
    }
    samples["first_cause_info"].append((cause_labels, 1.0))
    samples["check_duration_seconds"].append((base, round(result.duration_s, 6)))
    samples["check_timestamp_seconds"].append((base, round(result.checked_at, 3)))
    lines: list[str] = []
    for key, help_text in _HELP.items():
        if not samples[key]:
            continue
        metric = f"{PREFIX}_{key}"
        lines.append(f"# HELP {metric} {help_text}")
        lines.append(f"# TYPE {metric} gauge")
        seen: set[str] = set()
        for labels, value in samples[key]:
            rendered = _labels(labels)
            if rendered in seen:
                continue
            seen.add(rendered)
            lines.append(f"{metric}{rendered} {_number(value)}")
    return "\n".join(lines) + "\n"


def write_textfile(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temporary file beside it, fsync, rename; mode 0644)."""
    destination = Path(path)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{destination.name}.", suffix=".tmp", dir=destination.parent
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
