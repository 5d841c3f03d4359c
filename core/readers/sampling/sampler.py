"""A sampler thread: GPU and probe-CPU readings at a steady rate into a ring buffer, with phase marks.

Public API:

- ``Sampler(gpu_source, cpu_source=None, *, interval_s=0.1, capacity=36000, pid=None,
  clock=time.time, stop_when_finished=True)``:
  ``open() -> SamplerState`` (opens the sources; ``start`` does it too), ``start()``,
  ``stop(timeout=5.0) -> SamplingSeries``, ``join(timeout) -> bool`` (waits for a sampler that
  ends by itself: a replay that finished), ``sample_once(now=None)`` (one tick on the caller's
  thread: tests and benchmarks), ``mark_phase(name, detail=None, at=None) -> PhaseMark``,
  ``set_pid(pid)`` (the probe's PID; it may change, the sources follow it), ``state()``,
  ``snapshot() -> SamplingSeries``, ``since(sequence) -> (samples, next_sequence)`` (what a GUI
  timer has not drawn yet). A context manager: ``with Sampler(...) as sampler:`` starts and stops.
- ``SamplerState``: running, the GPU and CPU ``SourceStatus`` (why there are no GPU readings:
  "NVML: the NVIDIA driver's library (libnvidia-ml.so.1 / nvml.dll) is not installed: no
  NVIDIA driver"), counters; ``sentences()`` and ``gpu_readings_available``.
- ``SamplingSeries``: the result (samples, marks, statuses, provenance, counters);
  ``to_dict()`` / ``from_dict()`` (JSON for the report and the bundle), ``to_csv()`` /
  ``from_csv()`` (samples.csv: one row per sample, empty cell = not available, a ``phase``
  column), ``phase_of(position)``, ``for_gpu(index)``, ``phases()``.
- ``PhaseMark`` and the standard phase names ``PHASE_SESSION_CREATION``, ``PHASE_WARM_UP``,
  ``PHASE_TIMED_RUNS``, ``PHASE_DONE`` (any other name may be used too).

Every tick writes at least one sample: one per GPU the source read, or, when the GPU source
cannot read (no NVML), one sample whose GPU fields are ``None`` (a gap on a graph, never a
flat zero line) carrying the probe's CPU %. A tick that falls behind schedule is skipped and
counted (``missed_ticks``), never bunched up. A source that raises unexpectedly does not kill
the thread: the error text goes into ``SamplerState.errors``.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from fallback_doctor.core.readers.sampling.recordings import provenance_words
from fallback_doctor.core.readers.sampling.ring import RingBuffer
from fallback_doctor.core.readers.sampling.sample import (
    SAMPLE_FIELDS,
    SOURCE_FINISHED,
    SOURCE_NOT_STARTED,
    GpuSample,
    SourceStatus,
)
from fallback_doctor.core.readers.sampling.sources import CpuSource, SampleSource

P = ParamSpec("P")
T = TypeVar("T")

PHASE_SESSION_CREATION = "session_creation"
PHASE_WARM_UP = "warm_up"
PHASE_TIMED_RUNS = "timed_runs"
PHASE_DONE = "done"

DEFAULT_INTERVAL_S = 0.1
DEFAULT_CAPACITY = 36_000
"""An hour at 10 Hz for one GPU."""

CSV_COLUMNS: tuple[str, ...] = (*SAMPLE_FIELDS, "phase")


@dataclass(frozen=True)
class PhaseMark:
    """A phase of the probe starts: at ``timestamp``, before the sample numbered ``sequence``."""

    name: str
    timestamp: float
    sequence: int
    detail: str | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "timestamp": self.timestamp,
            "sequence": self.sequence,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PhaseMark:
        """The inverse of ``to_dict``."""
        return cls(str(data["name"]), float(data["timestamp"]), int(data["sequence"]), data.get("detail"))


@dataclass(frozen=True)
class SamplerState:
    """Where the sampler stands, for a status line beside the graph."""

    running: bool
    gpu: SourceStatus
    cpu: SourceStatus | None
    samples_taken: int
    dropped: int
    missed_ticks: int
    interval_s: float
    pid: int | None
    errors: tuple[str, ...] = ()

    @property
    def gpu_readings_available(self) -> bool:
        """Whether GPU readings are coming in (False: draw no GPU line, show ``gpu.sentence()``)."""
        return self.gpu.available

    def sentences(self) -> tuple[str, ...]:
        """One line per source, then any errors."""
        lines = [self.gpu.sentence()]
        if self.cpu is not None:
            lines.append(self.cpu.sentence())
        lines.extend(self.errors)
        return tuple(lines)


@dataclass(frozen=True)
class SamplingSeries:
    """The samples and phase marks of one sampling run, with where they come from."""

    samples: tuple[GpuSample, ...]
    marks: tuple[PhaseMark, ...]
    gpu_status: SourceStatus
    cpu_status: SourceStatus | None
    interval_s: float
    first_sequence: int = 0
    """The sequence number of ``samples[0]`` (older samples fell out of the ring buffer)."""
    dropped: int = 0
    missed_ticks: int = 0
    source: str = "nvml"
    provenance: str = "recorded on this machine"
    provenance_words: dict[str, Any] | None = None
    """``provenance`` as catalogue words ``{id, params}`` (shown in the reader's language); None:
    ``provenance`` is shown as written."""
    recorded_here: bool = True
    errors: tuple[str, ...] = field(default_factory=tuple)

    def phase_of(self, position: int) -> str | None:
        """The phase ``samples[position]`` belongs to (the latest mark at or before it)."""
        sequence = self.first_sequence + position
        current: str | None = None
        for mark in self.marks:
            if mark.sequence <= sequence:
                current = mark.name
            else:
                break
        return current

    def phases(self) -> tuple[tuple[str, float, float | None], ...]:
        """(name, start, end) per mark, by timestamp; the last phase's end is None."""
        ordered = sorted(self.marks, key=lambda mark: (mark.sequence, mark.timestamp))
        result: list[tuple[str, float, float | None]] = []
        for position, mark in enumerate(ordered):
            end = ordered[position + 1].timestamp if position + 1 < len(ordered) else None
            result.append((mark.name, mark.timestamp, end))
        return tuple(result)

    def for_gpu(self, index: int | None) -> tuple[GpuSample, ...]:
        """The samples of one GPU (``None``: the gap samples of a tick without GPU readings)."""
        return tuple(sample for sample in self.samples if sample.gpu_index == index)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (report, bundle)."""
        return {
            "format": "gpu-fallback-doctor/samples/1",
            "source": self.source,
            "provenance": self.provenance,
            "provenance_words": self.provenance_words,
            "recorded_here": self.recorded_here,
            "interval_s": self.interval_s,
            "first_sequence": self.first_sequence,
            "dropped": self.dropped,
            "missed_ticks": self.missed_ticks,
            "gpu_status": self.gpu_status.to_dict(),
            "cpu_status": self.cpu_status.to_dict() if self.cpu_status is not None else None,
            "errors": list(self.errors),
            "marks": [mark.to_dict() for mark in self.marks],
            "samples": [sample.to_dict() for sample in self.samples],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SamplingSeries:
        """The inverse of ``to_dict`` (a bundle opened on another machine)."""
        cpu = data.get("cpu_status")
        return cls(
            samples=tuple(GpuSample.from_dict(item) for item in data.get("samples", ())),
            marks=tuple(PhaseMark.from_dict(item) for item in data.get("marks", ())),
            gpu_status=SourceStatus.from_dict(data.get("gpu_status") or {}),
            cpu_status=SourceStatus.from_dict(cpu) if cpu else None,
            interval_s=float(data.get("interval_s", DEFAULT_INTERVAL_S)),
            first_sequence=int(data.get("first_sequence", 0)),
            dropped=int(data.get("dropped", 0)),
            missed_ticks=int(data.get("missed_ticks", 0)),
            source=str(data.get("source", "nvml")),
            provenance=str(data.get("provenance", "")),
            provenance_words=data.get("provenance_words")
            if isinstance(data.get("provenance_words"), dict)
            else None,
            recorded_here=bool(data.get("recorded_here", False)),
            errors=tuple(str(item) for item in data.get("errors", ())),
        )

    def to_csv(self) -> str:
        """samples.csv: a header of ``CSV_COLUMNS``, one row per sample; empty cell = not available."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for position, sample in enumerate(self.samples):
            row = [_cell(getattr(sample, name)) for name in SAMPLE_FIELDS]
            row.append(self.phase_of(position) or "")
            writer.writerow(row)
        return buffer.getvalue()

    @classmethod
    def samples_from_csv(cls, text: str) -> tuple[tuple[GpuSample, ...], tuple[str | None, ...]]:
        """The samples of a samples.csv and each row's phase (unknown columns are ignored)."""
        # newline="": csv's own line handling, so a lone CR (a file from another system) is a line
        # end, not "new-line character seen in unquoted field" (found by the 10,000-example run).
        reader = csv.DictReader(io.StringIO(text, newline=""))
        samples: list[GpuSample] = []
        phases: list[str | None] = []
        try:
            for row in reader:
                values = {name: (row.get(name) or None) for name in SAMPLE_FIELDS}
                samples.append(GpuSample.from_dict(values))
                phases.append(row.get("phase") or None)
        except csv.Error as error:
            raise ValueError(f"samples.csv line {reader.line_num}: {error}") from None
        return tuple(samples), tuple(phases)

    @classmethod
    def from_csv(cls, text: str, *, provenance: str, recorded_here: bool = False) -> SamplingSeries:
        """A series from samples.csv alone: marks rebuilt where the phase column changes.

        The statuses are not in the CSV: they read "unknown" (prefer ``from_dict`` of the JSON).
        """
        samples, phases = cls.samples_from_csv(text)
        marks: list[PhaseMark] = []
        previous: str | None = None
        for position, (sample, phase) in enumerate(zip(samples, phases, strict=True)):
            if phase is not None and phase != previous:
                marks.append(PhaseMark(phase, sample.timestamp, position))
            previous = phase
        unknown = SourceStatus("replay", "finished", "from_csv", "statuses are not kept in samples.csv")
        intervals = sorted(
            {b.timestamp - a.timestamp for a, b in itertools.pairwise(samples) if b.timestamp > a.timestamp}
        )
        return cls(
            samples=samples,
            marks=tuple(marks),
            gpu_status=unknown,
            cpu_status=None,
            interval_s=intervals[len(intervals) // 2] if intervals else DEFAULT_INTERVAL_S,
            source="replay",
            provenance=provenance,
            recorded_here=recorded_here,
        )


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return str(value)


class Sampler:
    """Reads a GPU source and an optional CPU source every ``interval_s`` on its own thread."""

    def __init__(
        self,
        gpu_source: SampleSource,
        cpu_source: CpuSource | None = None,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        capacity: int = DEFAULT_CAPACITY,
        pid: int | None = None,
        clock: Callable[[], float] = time.time,
        stop_when_finished: bool = True,
    ) -> None:
        """``clock`` stamps the samples and marks (epoch seconds); the pacing uses time.monotonic.

        ``stop_when_finished``: the thread ends by itself once the GPU source is finished (a
        replay that reached its end).
        """
        if not interval_s > 0:
            raise ValueError(f"interval_s must be positive, not {interval_s}")
        self._gpu = gpu_source
        self._cpu = cpu_source
        self._interval = float(interval_s)
        self._ring: RingBuffer[GpuSample] = RingBuffer(capacity)
        self._marks: list[PhaseMark] = []
        self._lock = threading.Lock()
        self._pid = pid
        self._clock = clock
        self._stop_when_finished = stop_when_finished
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._opened = False
        self._missed = 0
        self._errors: list[str] = []

    # -- control ---------------------------------------------------------------------------

    def open(self) -> SamplerState:
        """Open the sources (idempotent); the state says what they can do."""
        with self._lock:
            if not self._opened:
                self._opened = True
                self._guard("open the GPU source", self._gpu.open)
                if self._cpu is not None:
                    self._guard("open the CPU source", self._cpu.open)
        return self.state()

    def start(self) -> None:
        """Start the thread (opens the sources first). Starting twice is an error."""
        if self._thread is not None:
            raise RuntimeError("this sampler was already started")
        self.open()
        self._thread = threading.Thread(target=self._run, name="gpu-sampler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> SamplingSeries:
        """Stop the thread, close the sources, and return the series."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.close()
        return self.snapshot()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end by itself; True when it has ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def close(self) -> None:
        """Close the sources (idempotent; ``stop`` calls it)."""
        with self._lock:
            self._guard("close the GPU source", self._gpu.close)
            if self._cpu is not None:
                self._guard("close the CPU source", self._cpu.close)

    def __enter__(self) -> Sampler:
        """Start sampling."""
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        """Stop sampling."""
        self.stop()

    def set_pid(self, pid: int | None) -> None:
        """Follow another probe process from the next tick on (None: stop reading per-process values)."""
        with self._lock:
            self._pid = pid

    def mark_phase(self, name: str, detail: str | None = None, at: float | None = None) -> PhaseMark:
        """Mark the start of a phase ("session_creation", "warm_up", "timed_runs" …) now or ``at``.

        ``at`` (a time on the sampler's clock, e.g. the probe's own wall-clock time of a
        progress message read later) places the mark before the first held sample taken at
        or after it; without ``at`` the mark goes before the next sample.
        """
        with self._lock:
            sequence = self._ring.appended
            if at is not None:
                held = self._ring.snapshot()
                first = sequence - len(held)
                later = [position for position, sample in enumerate(held) if sample.timestamp >= at]
                sequence = first + later[0] if later else sequence
            mark = PhaseMark(name, self._clock() if at is None else at, sequence, detail)
            self._marks.append(mark)
            self._marks.sort(key=lambda item: (item.sequence, item.timestamp))
            return mark

    # -- sampling --------------------------------------------------------------------------

    def sample_once(self, now: float | None = None) -> tuple[GpuSample, ...]:
        """Take one tick on the calling thread (the thread's loop does the same)."""
        if not self._opened:
            self.open()
        with self._lock:
            moment = self._clock() if now is None else now
            pid = self._pid
            gpu_samples = self._guard("read the GPU source", self._gpu.read, moment, pid) or ()
            cpu = self._guard("read the CPU source", self._cpu.read, moment, pid) if self._cpu else None
            if gpu_samples:
                if self._cpu is not None:
                    gpu_samples = tuple(_with_cpu(sample, cpu) for sample in gpu_samples)
                batch: tuple[GpuSample, ...] = tuple(gpu_samples)
            elif self._gpu.status().state == SOURCE_FINISHED:
                batch = ()
            else:
                batch = (GpuSample(timestamp=moment, probe_cpu_percent=cpu, pid=pid),)
            self._ring.extend(batch)
            return batch

    def _run(self) -> None:
        next_due = time.monotonic()
        while not self._stop_event.is_set():
            self.sample_once()
            if self._stop_when_finished and self._gpu.status().state == SOURCE_FINISHED:
                break
            next_due += self._interval
            late = time.monotonic() - next_due
            if late > 0:
                skipped = int(late // self._interval) + 1
                self._missed += skipped
                next_due += skipped * self._interval
            self._stop_event.wait(max(0.0, next_due - time.monotonic()))

    def _guard(self, what: str, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
        try:
            return function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - a broken source must not kill the sampler
            text = f"could not {what}: {type(error).__name__}: {error}"
            if text not in self._errors:
                self._errors.append(text)
            return None

    # -- reading ---------------------------------------------------------------------------

    def state(self) -> SamplerState:
        """Where the sampler stands now."""
        gpu_status = self._gpu.status() if self._opened else SourceStatus(self._gpu.name, SOURCE_NOT_STARTED)
        cpu_status = self._cpu.status() if self._cpu is not None else None
        return SamplerState(
            running=self._thread is not None and self._thread.is_alive(),
            gpu=gpu_status,
            cpu=cpu_status,
            samples_taken=self._ring.appended,
            dropped=self._ring.dropped,
            missed_ticks=self._missed,
            interval_s=self._interval,
            pid=self._pid,
            errors=tuple(self._errors),
        )

    def since(self, sequence: int) -> tuple[tuple[GpuSample, ...], int]:
        """Samples from ``sequence`` on, and the next sequence number (a GUI timer's increment)."""
        return self._ring.since(sequence)

    def marks(self) -> tuple[PhaseMark, ...]:
        """The phase marks so far."""
        with self._lock:
            return tuple(self._marks)

    def snapshot(self) -> SamplingSeries:
        """The samples held and every mark, with the sources' statuses and provenance."""
        with self._lock:
            samples = self._ring.snapshot()
            appended = self._ring.appended
            marks = tuple(self._marks)
        state = self.state()
        recorded_here = bool(getattr(self._gpu, "recorded_here", True))
        provenance = str(
            getattr(self._gpu, "provenance", None)
            or (
                "recorded on this machine"
                if recorded_here
                else "recorded elsewhere and replayed, not measured here"
            )
        )
        words = getattr(self._gpu, "provenance_words", None)
        if not getattr(self._gpu, "provenance", None):
            words = provenance_words(recorded_here)
        return SamplingSeries(
            samples=samples,
            marks=marks,
            gpu_status=state.gpu,
            cpu_status=state.cpu,
            interval_s=self._interval,
            first_sequence=appended - len(samples),
            dropped=state.dropped,
            missed_ticks=state.missed_ticks,
            source=self._gpu.name,
            provenance=provenance,
            provenance_words=words if isinstance(words, dict) else None,
            recorded_here=recorded_here,
            errors=state.errors,
        )


def _with_cpu(sample: GpuSample, cpu: float | None) -> GpuSample:
    return replace(sample, probe_cpu_percent=cpu)
