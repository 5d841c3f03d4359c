"""One timestamped reading of one GPU (and of the probe's CPU use), and the status of a source.

Public API:

- ``GpuSample``: a frozen, NA-aware reading. Every measured field is ``None`` where the source
  could not tell (no NVML, a query the GPU does not support, a recording without that column);
  ``None`` is never replaced by 0, so a graph shows a gap, not an idle GPU.
- ``SAMPLE_FIELDS``: the field names in a stable order (the columns of samples.csv).
- ``SourceStatus``: what a source can do right now, as a value: ``state`` ("ok", "unavailable",
  "finished", "not_started", "error"), a machine ``code`` (NVML's status words such as
  "library_not_found", or "process_gone", "replay_finished" …), a ``reason`` for people and
  ``notes`` (fields that are not available and why). ``sentence()`` gives one line, for
  example "NVML: the NVIDIA driver's library (libnvidia-ml.so.1 / nvml.dll) is not installed:
  no NVIDIA driver".

Units: MiB for memory (as nvidia-smi prints), percent for utilization (GPU: 0-100; probe CPU:
percent of one core, as ``top`` prints it, so 400 means four busy cores), degrees Celsius,
MHz, watts. ``timestamp`` is seconds since the Unix epoch on the sampler's clock (recordings:
their printed wall-clock time read as UTC, since they do not name a zone).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

SOURCE_OK = "ok"
SOURCE_UNAVAILABLE = "unavailable"
SOURCE_FINISHED = "finished"
SOURCE_NOT_STARTED = "not_started"
SOURCE_ERROR = "error"


@dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU at one instant; ``None`` wherever the source could not tell.

    By hand, the same readings: `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,
    memory.used,memory.total,temperature.gpu,clocks.sm,power.draw --format=csv -lms 100`,
    `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` (per process) and
    `top -p PID` (the probe's CPU %).
    """

    timestamp: float
    gpu_index: int | None = None
    utilization_percent: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    process_memory_mib: float | None = None
    """GPU memory held by the probe's PID on this GPU (0.0 when NVML lists it nowhere here)."""
    other_processes_memory_mib: float | None = None
    """GPU memory held by every other process NVML lists on this GPU (the server itself …)."""
    temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    power_w: float | None = None
    memory_activity_percent: float | None = None
    """utilization.memory: the share of time the memory controller was busy (not memory used)."""
    probe_cpu_percent: float | None = None
    pid: int | None = None
    """The probe PID this sample was taken for (None when no PID was set)."""

    def has_gpu_values(self) -> bool:
        """Whether any GPU reading is present (False for a gap: NVML unavailable, a dash row)."""
        return any(
            value is not None
            for value in (
                self.utilization_percent,
                self.memory_used_mib,
                self.process_memory_mib,
                self.temperature_c,
                self.sm_clock_mhz,
                self.power_w,
                self.memory_activity_percent,
            )
        )

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (``None`` stays ``None``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuSample:
        """The inverse of ``to_dict``; unknown keys are ignored, missing ones read ``None``."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            raw = data.get(field.name)
            if field.name == "timestamp":
                values["timestamp"] = float(raw) if raw is not None else math.nan
            elif field.name in ("gpu_index", "pid"):
                values[field.name] = int(raw) if raw is not None else None
            else:
                values[field.name] = float(raw) if raw is not None else None
        return cls(**values)


SAMPLE_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(GpuSample))


@dataclass(frozen=True)
class SourceStatus:
    """What a sample source can do now, as a value (never an exception, never zeros)."""

    source: str
    """"nvml", "psutil", "replay", "none"."""
    state: str
    code: str | None = None
    reason: str | None = None
    notes: tuple[str, ...] = ()
    """Partial availability: "temperature: not supported on this GPU", …"""
    reason_words: dict[str, Any] | None = None
    """``reason`` as catalogue words ``{id, params}`` where core said it so (a replay's provenance),
    shown in the reader's language; None: ``reason`` is shown as written."""

    @property
    def available(self) -> bool:
        """Whether the source delivers readings now."""
        return self.state == SOURCE_OK

    def sentence(self) -> str:
        """One line for people: "NVML: <reason>", or "NVML: read throughout the probe"."""
        label = _SOURCE_LABELS.get(self.source, self.source)
        if self.reason:
            return f"{label}: {self.reason}"
        return f"{label}: {_STATE_WORDS.get(self.state, self.state)}"

    def sentence_words(self) -> dict[str, object] | None:
        """:meth:`sentence` as catalogue words ``{id, params}`` where the reason was said by id
        (shown in the reader's language); None: the sentence is shown as written."""
        reason = self.reason_words
        if reason is None and not self.reason and self.state in _STATE_WORDS:
            reason = {"id": f"evidence.source_state.{self.state}", "params": {}}
        if reason is None:
            return None
        source: object = _SOURCE_LABELS.get(self.source, self.source)
        if self.source in ("replay", "psutil", "none"):
            source = {"id": f"evidence.source_name.{self.source}", "params": {}}
        return {"id": "evidence.status_sentence", "params": {"source": source, "reason": reason}}

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SourceStatus:
        """The inverse of ``to_dict``."""
        return cls(
            source=str(data.get("source", "none")),
            state=str(data.get("state", SOURCE_ERROR)),
            code=data.get("code"),
            reason=data.get("reason"),
            notes=tuple(str(note) for note in data.get("notes", ())),
            reason_words=data.get("reason_words") if isinstance(data.get("reason_words"), dict) else None,
        )


_SOURCE_LABELS = {
    "nvml": "NVML",
    "psutil": "the probe's CPU use (psutil)",
    "replay": "replay",
    "none": "no source",
}
_STATE_WORDS = {
    SOURCE_OK: "read throughout the probe",
    SOURCE_UNAVAILABLE: "not available",
    SOURCE_FINISHED: "finished",
    SOURCE_NOT_STARTED: "not started",
    SOURCE_ERROR: "failed",
}


def sentence_words_of(status: object) -> dict[str, object] | None:
    """The sentence words of a status as the document holds it (a dict), or of a live status."""
    if isinstance(status, SourceStatus):
        return status.sentence_words()
    return SourceStatus.from_dict(status).sentence_words() if isinstance(status, dict) else None
