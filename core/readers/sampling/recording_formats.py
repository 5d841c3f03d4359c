"""One parser per recording format (see core/readers/sampling/recordings.py for the formats).

Each returns ``(samples, problems)`` and never raises on bad input: a line it cannot read is
skipped and ``problems`` says which and why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from fallback_doctor.core.readers.sampling.recording_values import (
    DATE_OUTPUT,
    DMON_FIELDS,
    OTHER_QUERY_FIELDS,
    QUERY_FIELDS,
    TIME_OF_DAY,
    parse_date_output,
    parse_time,
    parse_value,
)
from fallback_doctor.core.readers.sampling.sample import GpuSample

TICK_WINDOW_S = 0.05
"""Rows of one nvidia-smi query lie within this many seconds of the tick's first row."""


# ---------------------------------------------------------------------------------------------
# nvidia-smi --query-gpu CSV


def parse_query_gpu_csv(
    body: str, *, columns: Sequence[str] | None = None
) -> tuple[list[GpuSample], list[str]]:
    """`nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` output.

    The header line, when present, names the columns (units in brackets are dropped); a
    repeated header mid-file is skipped. Without one, ``columns`` must name them.
    """
    problems: list[str] = []
    names: tuple[str, ...] | None = None
    rows: list[tuple[int, dict[str, object]]] = []
    for number, raw in enumerate(body.split("\n"), start=1):
        line = raw.strip().rstrip("\r").strip()
        if not line:
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if _looks_like_header(cells):
            header = tuple(re.sub(r"\s*\[.*?\]\s*$", "", cell).strip() for cell in cells)
            if names is not None and header != names:
                problems.append(f"line {number}: a different header, columns changed mid-file")
            names = header
            continue
        current = names or (tuple(columns) if columns else None)
        if current is None:
            problems.append(f"line {number}: no header and no column names: cannot read the row")
            continue
        if len(cells) != len(current):
            problems.append(f"line {number}: {len(cells)} values for {len(current)} columns, skipped")
            continue
        if cells[-1] == "":
            problems.append(f"line {number}: the last value is missing (a cut-off line), skipped")
            continue
        rows.append((number, _row_values(dict(zip(current, cells, strict=True)))))
    return _ticks_from_rows(rows, problems), problems


def _looks_like_header(cells: Sequence[str]) -> bool:
    known = 0
    for cell in cells:
        name = re.sub(r"\s*\[.*?\]\s*$", "", cell).strip()
        if name in QUERY_FIELDS or name in OTHER_QUERY_FIELDS:
            known += 1
        elif re.search(r"\d", name):
            return False
    return known > 0 and known * 2 >= len(cells)


def _row_values(row: dict[str, str]) -> dict[str, object]:
    values: dict[str, Any] = {}
    for name, text in row.items():
        target = QUERY_FIELDS.get(name)
        if target is None:
            continue
        if target == "timestamp":
            values["timestamp"] = parse_time(text)
        elif target == "gpu_index":
            number = parse_value(text)
            values["gpu_index"] = int(number) if number is not None else None
        else:
            values[target] = parse_value(text)
    if values.get("memory_total_mib") is None and "memory.free" in row:
        used, free = values.get("memory_used_mib"), parse_value(row["memory.free"])
        if used is not None and free is not None:
            values["memory_total_mib"] = used + free
    return values


def _ticks_from_rows(rows: list[tuple[int, dict[str, Any]]], problems: list[str]) -> list[GpuSample]:
    """Group rows into ticks (one nvidia-smi query) and build samples; rows without time are dropped."""
    samples: list[GpuSample] = []
    tick_time: float | None = None
    position = 0
    for number, values in rows:
        moment = values.pop("timestamp", None)
        if moment is None:
            problems.append(f"line {number}: no readable timestamp, skipped")
            continue
        index = values.get("gpu_index")
        new_tick = tick_time is None or abs(moment - tick_time) > TICK_WINDOW_S
        if (
            not new_tick
            and index is not None
            and any(
                sample.gpu_index == index and sample.timestamp == tick_time
                for sample in samples[len(samples) - position :]
            )
        ):
            new_tick = True
        if new_tick:
            tick_time = moment
            position = 0
        if index is None:
            values["gpu_index"] = position
        position += 1
        assert tick_time is not None
        samples.append(GpuSample(timestamp=tick_time, **values))
    return samples


# ---------------------------------------------------------------------------------------------
# nvidia-smi dmon


def parse_dmon(body: str, *, interval_s: float = 1.0) -> tuple[list[GpuSample], list[str]]:
    """`nvidia-smi dmon` output: ``#`` header lines name the columns, "-" means no value.

    With ``-o DT`` the Date (YYYYMMDD) and Time columns give the time; otherwise a tick starts
    whenever a GPU index repeats, ``interval_s`` after the previous one, counted from 0.
    """
    problems: list[str] = []
    names: list[str] | None = None
    samples: list[GpuSample] = []
    tick = -1
    seen: set[int | None] = set()
    tick_time = 0.0
    for number, raw in enumerate(body.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            words = line.lstrip("#").split()
            if words and words[0].lower() in ("gpu", "idx", "date", "time") and not _units_line(words):
                names = [word.lower() for word in words]
            continue
        if names is None:
            problems.append(f"line {number}: a row before any dmon header, skipped")
            continue
        cells = line.split()
        if len(cells) != len(names):
            problems.append(f"line {number}: {len(cells)} values for {len(names)} columns, skipped")
            continue
        row = dict(zip(names, cells, strict=True))
        values: dict[str, Any] = {}
        for name, text in row.items():
            target = DMON_FIELDS.get(name)
            if target is None:
                continue
            number_value = parse_value(text)
            if target == "gpu_index":
                values[target] = int(number_value) if number_value is not None else None
            else:
                values[target] = number_value
        printed = _dmon_time(row)
        index = values.get("gpu_index")
        if printed is not None:
            if tick < 0 or printed != tick_time:
                tick += 1
                tick_time = printed
        elif tick < 0 or index in seen:
            tick += 1
            tick_time = tick * interval_s
            seen = set()
        seen.add(index)
        samples.append(GpuSample(timestamp=tick_time, **values))
    return samples, problems


def _units_line(words: Sequence[str]) -> bool:
    return words[0].lower() == "idx" and len(words) > 1 and not any(w.isalpha() and len(w) > 4 for w in words)


def _dmon_time(row: dict[str, str]) -> float | None:
    date, clock = row.get("date"), row.get("time")
    if clock is None:
        return None
    match = TIME_OF_DAY.match(clock)
    if not match:
        return None
    seconds = int(match.group(1)) * 3600 + int(match.group(2)) * 60 + int(match.group(3))
    if date and re.fullmatch(r"\d{8}", date):
        try:
            day = datetime(int(date[:4]), int(date[4:6]), int(date[6:]), tzinfo=UTC)
        except ValueError:
            return float(seconds)
        return day.timestamp() + seconds
    return float(seconds)


def dmon_has_time(body: str) -> bool:
    for line in body.splitlines():
        if line.strip().startswith("#"):
            words = [word.lower() for word in line.lstrip("# ").split()]
            if "time" in words:
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Full nvidia-smi tables

_PROCESS_ROW = re.compile(
    r"^\|\s+(\d+)\s+(?:(\S+)\s+(\S+)\s+)?(\d+)\s+([CGM+]+)\s+(.+?)\s+(\d+|N/A)\s*(?:MiB)?\s*\|\s*$"
)
_GPU_NAME_ROW = re.compile(r"^\|\s+(\d+)\s+\S.*\|.*\|.*\|\s*$")


def parse_smi_tables(body: str, *, pid: int | None = None) -> tuple[list[GpuSample], list[str]]:
    """`nvidia-smi` tables printed one after another (a `while true; nvidia-smi; sleep 5` loop).

    Per GPU: utilization, memory used/total, temperature, power. With ``pid``, that process's
    memory (its rows in the process table) becomes ``process_memory_mib`` (0 when not listed)
    and every other process's ``other_processes_memory_mib``.
    """
    problems: list[str] = []
    samples: list[GpuSample] = []
    blocks = _smi_blocks(body)
    for start_line, lines in blocks:
        moment = None
        for line in lines[:3]:
            moment = parse_date_output(line) or parse_time(line)
            if moment is not None:
                break
        if moment is None:
            problems.append(f"line {start_line}: a table without a readable time, skipped")
            continue
        gpus: dict[int, dict[str, Any]] = {}
        processes: list[tuple[int, int, float | None]] = []
        in_processes = False
        for offset, line in enumerate(lines):
            if "Processes:" in line:
                in_processes = True
                continue
            if in_processes:
                match = _PROCESS_ROW.match(line.rstrip())
                if match:
                    memory = parse_value(match.group(7))
                    processes.append((int(match.group(1)), int(match.group(4)), memory))
                continue
            name_row = _GPU_NAME_ROW.match(line.rstrip())
            if name_row and offset + 1 < len(lines):
                values = _smi_gpu_values(lines[offset + 1])
                if values is not None:
                    gpus[int(name_row.group(1))] = values
        if not gpus:
            problems.append(f"line {start_line}: no GPU row found in this table, skipped")
            continue
        for index, values in sorted(gpus.items()):
            if pid is not None and all(memory is not None for _, _, memory in processes):
                own = sum((m or 0.0 for gpu, owner, m in processes if gpu == index and owner == pid), 0.0)
                other = sum((m or 0.0 for gpu, owner, m in processes if gpu == index and owner != pid), 0.0)
                values["process_memory_mib"] = own
                values["other_processes_memory_mib"] = other
                values["pid"] = pid
            samples.append(GpuSample(timestamp=moment, gpu_index=index, **values))
    return samples, problems


def _smi_blocks(body: str) -> list[tuple[int, list[str]]]:
    """Split at each table's first line (its own time line, or a ``====`` separator before it)."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 1
    lines = body.replace("\r", "").split("\n")
    for number, line in enumerate(lines, start=1):
        starts_block = line.startswith("====") or (
            DATE_OUTPUT.match(line.strip()) is not None and not (current and current[-1].startswith("===="))
        )
        if starts_block and any("NVIDIA-SMI" in seen for seen in current):
            blocks.append((start, current))
            current, start = [], number
        current.append(line)
    if any("NVIDIA-SMI" in seen for seen in current):
        blocks.append((start, current))
    return blocks


def _smi_gpu_values(line: str) -> dict[str, Any] | None:
    """The second row of a GPU: "| 33%   31C    P8   31W /  260W |   1MiB /  49152MiB |   0%   Default |"."""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if len(cells) < 3 or "MiB" not in cells[1]:
        return None
    values: dict[str, object] = {}
    first = cells[0].split()
    temperature = next((word for word in first if re.fullmatch(r"\d+C", word)), None)
    values["temperature_c"] = parse_value(temperature[:-1]) if temperature else None
    power = re.search(r"(\d+(?:\.\d+)?|N/A)\s*W?\s*/", cells[0])
    values["power_w"] = parse_value(power.group(1)) if power else None
    memory = re.match(r"(\d+|N/A)\s*MiB\s*/\s*(\d+)\s*MiB", cells[1])
    values["memory_used_mib"] = parse_value(memory.group(1)) if memory else None
    values["memory_total_mib"] = parse_value(memory.group(2)) if memory else None
    utilization = re.match(r"(\d+%|N/A)", cells[2])
    values["utilization_percent"] = parse_value(utilization.group(1)) if utilization else None
    return values


# ---------------------------------------------------------------------------------------------
# GPUtil monitor blocks and time-line + CSV rows

_BLOCK_TIME = re.compile(r"^=+\s*(.+?)\s*=+\s*$")
_GPU_LOAD = re.compile(r"^GPU Load:\s*([\d.]+)\s*%")
_GPU_MEMORY = re.compile(r"^GPU Memory:\s*([\d.]+)\s*MB\s*/\s*([\d.]+)\s*MB")
_GPU_TEMPERATURE = re.compile(r"^GPU Temperature:\s*([\d.]+)")


def parse_gputil_blocks(body: str) -> tuple[list[GpuSample], list[str]]:
    """``=== 2024-10-31 15:33:14 ===`` blocks with GPUtil's "GPU Load", "GPU Memory", "GPU Temperature".

    GPUtil prints nvidia-smi's MiB figures labelled "MB"; they are kept as MiB. A "CPU Usage"
    line is not read: such monitors often create a new psutil.Process per reading, whose first
    cpu_percent() is always 0.0, so it is not a measurement of the probe.
    """
    problems: list[str] = []
    samples: list[GpuSample] = []
    current: dict[str, Any] | None = None
    start = 0

    def flush() -> None:
        if current is None:
            return
        if current.get("timestamp") is None:
            problems.append(f"line {start}: a block without a readable time, skipped")
        elif len(current) > 1:
            samples.append(GpuSample(gpu_index=0, **current))
        else:
            problems.append(f"line {start}: a block without GPU lines, skipped")

    for number, raw in enumerate(body.split("\n"), start=1):
        line = raw.strip()
        header = _BLOCK_TIME.match(line)
        if header:
            flush()
            current, start = {"timestamp": parse_time(header.group(1))}, number
            continue
        if current is None:
            continue
        if match := _GPU_LOAD.match(line):
            current["utilization_percent"] = float(match.group(1))
        elif match := _GPU_MEMORY.match(line):
            current["memory_used_mib"] = float(match.group(1))
            current["memory_total_mib"] = float(match.group(2))
        elif match := _GPU_TEMPERATURE.match(line):
            current["temperature_c"] = float(match.group(1))
    flush()
    return samples, problems


def parse_time_csv(body: str, *, columns: Sequence[str]) -> tuple[list[GpuSample], list[str]]:
    """An ``HH:MM:SS`` line, then one CSV row of `--query-gpu` values named by ``columns``.

    Times of day count from 1970-01-01 and roll over to the next day when they go backwards.
    """
    problems: list[str] = []
    if not columns:
        return [], ["no column names for the CSV rows (pass columns=...)"]
    rows: list[tuple[int, dict[str, object]]] = []
    day_offset = 0.0
    last: float | None = None
    moment: float | None = None
    for number, raw in enumerate(body.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        clock = TIME_OF_DAY.match(line)
        if clock:
            seconds: float = int(clock.group(1)) * 3600 + int(clock.group(2)) * 60 + int(clock.group(3))
            if clock.group(4):
                seconds += float("0." + clock.group(4))
            if last is not None and seconds + day_offset < last - 1:
                day_offset += 86400.0
            moment = seconds + day_offset
            last = moment
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if moment is None:
            problems.append(f"line {number}: a row before any time line, skipped")
            continue
        if len(cells) != len(columns):
            problems.append(f"line {number}: {len(cells)} values for {len(columns)} columns, skipped")
            continue
        values = _row_values(dict(zip(columns, cells, strict=True)))
        values["timestamp"] = moment
        rows.append((number, values))
        moment = None
    return _ticks_from_rows(rows, problems), problems


def with_pid(samples: Sequence[GpuSample], pid: int | None) -> tuple[GpuSample, ...]:
    """The same samples stamped with ``pid`` (a replay standing in for a probe)."""
    return tuple(replace(sample, pid=pid) for sample in samples)
