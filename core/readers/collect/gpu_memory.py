"""Whether a process holds GPU memory, by NVML's process lists (its pid in every namespace we see).

By hand: ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fallback_doctor.core.model.facts.process import GpuMemoryUse
from fallback_doctor.core.readers.collect.proc_files import parse_cgroup

PROC = "/proc"


def ns_pids(pid: int, proc: str = PROC) -> tuple[int, ...]:
    """The process's pid in each pid namespace we can see (``NSpid:`` of /proc/PID/status)."""
    try:
        text = Path(proc, str(pid), "status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (pid,)
    for line in text.splitlines():
        if line.startswith("NSpid:"):
            found = tuple(int(item) for item in line.split()[1:] if item.isdigit())
            return found or (pid,)
    return (pid,)


def gpu_memory_of(pids: Iterable[int]) -> GpuMemoryUse:
    """Whether any of ``pids`` is in NVML's compute (or graphics) process list, and how much it holds.

    By hand: ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
    """
    wanted = set(pids)
    try:
        import pynvml
    except ImportError as error:
        why = f"nvidia-ml-py is not installed in the tool's environment ({error})"
        return GpuMemoryUse("unknown", reason=why, reason_words=_said("pynvml_missing", error=str(error)))
    try:
        pynvml.nvmlInit()
    except Exception as error:  # noqa: BLE001 - NVML's failure is the fact
        from fallback_doctor.core.readers.knowledge.nvml_errors import NVML_ERRORS, describe_nvml_error

        code = getattr(error, "value", None)
        known = code if isinstance(code, int) and code in NVML_ERRORS else None
        meaning = describe_nvml_error(code if isinstance(code, int) else None, str(error))
        said_meaning: Any = (
            {"id": f"evidence.nvml.{meaning.status}", "params": {}} if known else meaning.meaning
        )
        return GpuMemoryUse(
            "unknown",
            reason=f"NVML could not start: {meaning.meaning} ({error})",
            reason_words=_said("nvml_not_started", meaning=said_meaning, error=str(error)),
        )
    try:
        used = 0
        seen_any = False
        indices: list[int] = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            entries: list[Any] = []
            for query in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                function = getattr(pynvml, query, None)
                if function is None:
                    continue
                try:
                    entries.extend(function(handle))
                except Exception:  # noqa: BLE001 - one list failing leaves the other
                    continue
            for entry in entries:
                if int(getattr(entry, "pid", -1)) in wanted:
                    seen_any = True
                    if index not in indices:
                        indices.append(index)
                    memory = getattr(entry, "usedGpuMemory", None)
                    if isinstance(memory, int) and memory >= 0:
                        used += memory
        if not seen_any:
            note = _namespace_note()
            return GpuMemoryUse("none", reason=note, reason_words=_said("in_container") if note else None)
        return GpuMemoryUse("holds", used_mib=used // (1024 * 1024), gpu_indices=tuple(indices))
    except Exception as error:  # noqa: BLE001
        why = f"NVML could not list the GPU processes: {error}"
        return GpuMemoryUse("unknown", reason=why, reason_words=_said("not_listed", error=str(error)))
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down a library that failed is harmless
            pass


def _said(key: str, **params: Any) -> dict[str, Any]:
    """The reason as catalogue words (``evidence.gpu_memory.<key>``), as the document holds them."""
    return {"id": f"evidence.gpu_memory.{key}", "params": params}


def _namespace_note() -> str | None:
    """A caveat when we run in a container: NVML may list host pids we cannot match."""
    unit, container = parse_cgroup(_cgroup_text() or "")
    del unit
    if container is not None or os.path.exists("/.dockerenv"):
        return "this tool runs in a container: NVML may report host process ids, which cannot be matched here"
    return None


def _cgroup_text() -> str | None:
    try:
        with open(f"{PROC}/self/cgroup", "rb") as handle:
            return handle.read(1024 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
