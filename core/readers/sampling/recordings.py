"""Pure parsers for recorded GPU series, each recording kept with where it came from.

The formats people actually record (tests/data/gpu_series/ holds published examples):

- ``query-gpu-csv``: `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l 1`, with
  or without the header line and the units ("0 %", "95830 MiB", "[N/A]", "[Not Supported]");
  without a header the columns come from the command (``--query-gpu=`` in the recording's
  ``# command:`` line) or from ``columns``.
- ``dmon``: `nvidia-smi dmon [-s pucm] [-o DT]` (``#`` header lines, "-" for no value).
- ``smi-table``: the full `nvidia-smi` table printed in a loop (``==== date ====`` separators),
  with the per-process table (memory by PID).
- ``gputil-blocks``: ``=== date ===`` blocks with "GPU Load: 2.0%", "GPU Memory: 121.0MB /
  6144.0MB", "GPU Temperature: 45.0°C" (GPUtil-based monitors).
- ``time-csv``: an ``HH:MM:SS`` line followed by one CSV row of query-gpu values (columns from
  ``columns`` or named in the ``# command:`` line).

A recording file (the corpus layout) starts with five header lines ``# source:``, ``# gpu:``,
``# workload:``, ``# command:``, ``# note:``; the recording follows byte for byte. Files without
that header parse too (``RecordingInfo`` fields are then ``None``).

Public API:

- ``Recording`` (samples, format, info, problems, timestamps_inferred, recorded_here=False;
  ``ticks()``, ``gpu_indices()``, ``duration_s()``, ``provenance()``) and ``RecordingInfo``.
- ``parse_recording(text, *, columns=None, pid=None, interval_s=None) -> Recording``: header,
  format detection and the matching parser; never raises on bad input (``problems`` lists
  skipped lines and why).
- ``load_recording(path, **same) -> Recording`` (reads bytes, decodes UTF-8 with replacement).
- ``split_header(text) -> (RecordingInfo, body)``, ``detect_format(body) -> str | None``.
- One parser per format: ``parse_query_gpu_csv``, ``parse_dmon``, ``parse_smi_tables``,
  ``parse_gputil_blocks``, ``parse_time_csv``; each returns ``(samples, problems)``.
- ``query_fields_in(text)``: the `--query-gpu` field names a command line names, in order.
- ``parse_value(text) -> float | None``: one value ("12 %", "[N/A]", "-", "31W" …).

Conventions: values are read as printed; "N/A", "[Not Supported]", "-", "" read ``None``,
never 0. Rows printed by one nvidia-smi query (all GPUs within a few milliseconds) form one
tick and share its first row's time; without an index column, a GPU's index is its position
in the tick (nvidia-smi lists GPUs in index order). Printed times carry no zone and are read
as UTC; a time of day without a date counts from 1970-01-01 and rolls over at midnight; with no
time at all (dmon without ``-o T``) ticks are ``interval_s`` apart (dmon's default 1 s) and
``timestamps_inferred`` says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fallback_doctor.core.platform.files import read_regular_file
from fallback_doctor.core.readers.sampling.recording_formats import (
    TICK_WINDOW_S,
    dmon_has_time,
    parse_dmon,
    parse_gputil_blocks,
    parse_query_gpu_csv,
    parse_smi_tables,
    parse_time_csv,
    with_pid,
)
from fallback_doctor.core.readers.sampling.recording_values import (
    TIME_OF_DAY,
    parse_date_output,
    parse_time,
    parse_value,
    query_fields_in,
)
from fallback_doctor.core.readers.sampling.sample import GpuSample

# The parsers and value readers are imported from here by their callers and tests.
__all__ = [
    "FORMATS",
    "FORMAT_DMON",
    "FORMAT_GPUTIL",
    "FORMAT_QUERY_CSV",
    "FORMAT_SMI_TABLE",
    "FORMAT_TIME_CSV",
    "HEADER_KEYS",
    "TICK_WINDOW_S",
    "Recording",
    "RecordingInfo",
    "detect_format",
    "group_ticks",
    "load_recording",
    "parse_date_output",
    "parse_dmon",
    "parse_gputil_blocks",
    "parse_query_gpu_csv",
    "parse_recording",
    "parse_smi_tables",
    "parse_time",
    "parse_time_csv",
    "parse_value",
    "query_fields_in",
    "split_header",
    "with_pid",
]

FORMAT_QUERY_CSV = "query-gpu-csv"
FORMAT_DMON = "dmon"
FORMAT_SMI_TABLE = "smi-table"
FORMAT_GPUTIL = "gputil-blocks"
FORMAT_TIME_CSV = "time-csv"
FORMATS = (FORMAT_QUERY_CSV, FORMAT_DMON, FORMAT_SMI_TABLE, FORMAT_GPUTIL, FORMAT_TIME_CSV)

HEADER_KEYS = ("source", "gpu", "workload", "command", "note")


@dataclass(frozen=True)
class RecordingInfo:
    """The five-line header of a recording file: where it was published and what it shows."""

    source: str | None = None
    gpu: str | None = None
    workload: str | None = None
    command: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """A JSON-ready dict."""
        return {key: getattr(self, key) for key in HEADER_KEYS}


@dataclass(frozen=True)
class Recording:
    """A parsed recording: samples oldest first, its format and its provenance."""

    samples: tuple[GpuSample, ...]
    format: str | None
    info: RecordingInfo = field(default_factory=RecordingInfo)
    problems: tuple[str, ...] = ()
    timestamps_inferred: bool = False
    recorded_here: bool = False
    """False for every recording parsed from a file: it was measured elsewhere, not on this machine."""

    def ticks(self) -> tuple[tuple[GpuSample, ...], ...]:
        """The samples grouped by instant (one group per nvidia-smi query, all GPUs)."""
        return group_ticks(self.samples)

    def gpu_indices(self) -> tuple[int | None, ...]:
        """The GPU indices present, in first-seen order."""
        seen: dict[int | None, None] = {}
        for sample in self.samples:
            seen.setdefault(sample.gpu_index, None)
        return tuple(seen)

    def duration_s(self) -> float:
        """Seconds from the first to the last sample (0 for fewer than two)."""
        if len(self.samples) < 2:
            return 0.0
        return self.samples[-1].timestamp - self.samples[0].timestamp

    def provenance_words(self) -> dict[str, Any]:
        """:meth:`provenance` as catalogue words ``{id, params}``, shown in the reader's language."""
        return provenance_words(self.recorded_here, self.info.source)

    def provenance(self) -> str:
        """One line: "recorded elsewhere and replayed: <source>" (or "recorded on this machine")."""
        if self.recorded_here:
            return "recorded on this machine"
        return (
            f"recorded elsewhere and replayed, not measured here: {self.info.source or 'source not stated'}"
        )


RECORDING_LIMIT = 64 * 1024 * 1024
"""Most bytes of a recording read (an hour at 10 Hz is a few MiB)."""


def group_ticks(samples: Sequence[GpuSample]) -> tuple[tuple[GpuSample, ...], ...]:
    """Consecutive samples with the same timestamp form one tick."""
    ticks: list[tuple[GpuSample, ...]] = []
    current: list[GpuSample] = []
    for sample in samples:
        if current and sample.timestamp != current[0].timestamp:
            ticks.append(tuple(current))
            current = []
        current.append(sample)
    if current:
        ticks.append(tuple(current))
    return tuple(ticks)


# ---------------------------------------------------------------------------------------------
# Entry points


def load_recording(
    path: str | Path,
    *,
    columns: Sequence[str] | None = None,
    pid: int | None = None,
    interval_s: float | None = None,
) -> Recording:
    """Read and parse one recording file (see ``parse_recording``)."""
    text = read_regular_file(path, RECORDING_LIMIT).decode("utf-8", errors="replace")
    return parse_recording(text, columns=columns, pid=pid, interval_s=interval_s)


def parse_recording(
    text: str,
    *,
    columns: Sequence[str] | None = None,
    pid: int | None = None,
    interval_s: float | None = None,
) -> Recording:
    """Split off the header, detect the format and parse the samples; never raises.

    ``columns``: the `--query-gpu` fields of a headerless CSV or a time-csv recording (default:
    those named in the ``# command:`` line). ``pid``: for nvidia-smi tables, the process whose
    memory becomes ``process_memory_mib``. ``interval_s``: the tick spacing where the recording
    prints no time (dmon without ``-o T``; default 1 s).
    """
    info, body = split_header(text)
    kind = detect_format(body)
    if kind is None:
        return Recording((), None, info, ("no known recording format recognised",))
    wanted = tuple(columns) if columns else query_fields_in(info.command or "")
    inferred = False
    if kind == FORMAT_QUERY_CSV:
        samples, problems = parse_query_gpu_csv(body, columns=wanted or None)
    elif kind == FORMAT_DMON:
        samples, problems = parse_dmon(body, interval_s=interval_s or 1.0)
        inferred = not dmon_has_time(body)
    elif kind == FORMAT_SMI_TABLE:
        samples, problems = parse_smi_tables(body, pid=pid)
    elif kind == FORMAT_GPUTIL:
        samples, problems = parse_gputil_blocks(body)
    else:
        samples, problems = parse_time_csv(body, columns=wanted)
    return Recording(tuple(samples), kind, info, tuple(problems), timestamps_inferred=inferred)


def split_header(text: str) -> tuple[RecordingInfo, str]:
    """The five ``# key: value`` header lines (when all five are there) and the rest, untouched.

    The recording itself may start with ``#`` lines (dmon) or an empty line, so the header is
    exactly the first five lines, and only when they carry the five keys in order.
    """
    lines = text.split("\n")
    values: dict[str, str] = {}
    for key, line in zip(HEADER_KEYS, lines[:5], strict=False):
        prefix = f"# {key}:"
        if not line.startswith(prefix):
            return RecordingInfo(), text
        values[key] = line[len(prefix) :].strip().rstrip("\r")
    if len(values) < len(HEADER_KEYS):
        return RecordingInfo(), text
    return RecordingInfo(**values), "\n".join(lines[5:])


def detect_format(body: str) -> str | None:
    """Which of ``FORMATS`` a recording body is in, from its first meaningful lines."""
    head = body[:20000]
    if "NVIDIA-SMI" in head and "Memory-Usage" in head:
        return FORMAT_SMI_TABLE
    if re.search(r"^GPU Load:\s*[\d.]+%", head, re.MULTILINE):
        return FORMAT_GPUTIL
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    if not lines:
        return None
    first = lines[0]
    if first.startswith("#"):
        names = first.lstrip("#").split()
        if names and names[0].lower() in ("gpu", "idx", "date", "time"):
            return FORMAT_DMON
        return None
    if TIME_OF_DAY.match(first) and len(lines) > 1 and "," in lines[1]:
        return FORMAT_TIME_CSV
    if "," in first:
        return FORMAT_QUERY_CSV
    return None


def provenance_words(recorded_here: bool, source: str | None = None) -> dict[str, Any]:
    """Where GPU readings come from, as catalogue words ``{id, params}`` (the labels
    ``evidence.provenance.*``): recorded here, or replayed (from ``source`` when it is named)."""
    if recorded_here:
        return {"id": "evidence.provenance.here", "params": {}}
    if source is None:
        return {"id": "evidence.provenance.replayed", "params": {}}
    named: object = source or {"id": "evidence.provenance.source_not_stated", "params": {}}
    return {"id": "evidence.provenance.replayed_from", "params": {"source": named}}
