"""Recording parsers on real published recordings (tests/data/gpu_series) and on Hypothesis input.

None of these recordings was made on this machine or by this project: each was published by
its author (see tests/data/gpu_series/README.md); they stand in for a GPU this machine lacks.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from fallback_doctor.core.readers.sampling.recordings import (
    FORMAT_DMON,
    FORMAT_GPUTIL,
    FORMAT_QUERY_CSV,
    FORMAT_SMI_TABLE,
    FORMAT_TIME_CSV,
    detect_format,
    load_recording,
    parse_dmon,
    parse_gputil_blocks,
    parse_query_gpu_csv,
    parse_recording,
    parse_smi_tables,
    parse_time,
    parse_time_csv,
    parse_value,
    query_fields_in,
    split_header,
)
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parents[2] / "data" / "gpu_series"


def recording(name: str, **options: object) -> object:
    (path,) = DATA.glob(f"{name}-*.txt")
    return load_recording(path, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "kind", "count", "gpus"),
    [
        ("01", FORMAT_QUERY_CSV, 104, (0,)),
        ("02", FORMAT_QUERY_CSV, 40, (0,)),
        ("03", FORMAT_QUERY_CSV, 65, (0,)),
        ("04", FORMAT_GPUTIL, 68, (0,)),
        ("05", FORMAT_QUERY_CSV, 97 * 4, (0, 1, 2, 3)),
        ("06", FORMAT_QUERY_CSV, 107, (0,)),
        ("07", FORMAT_SMI_TABLE, 15, (0,)),
        ("08", FORMAT_TIME_CSV, 139, (0,)),
        ("09", FORMAT_QUERY_CSV, 17, (0,)),
        ("10", FORMAT_QUERY_CSV, 10, (0,)),
        ("11", FORMAT_DMON, 27, (0,)),
    ],
)
def test_every_published_recording_parses_to_the_sample_count_its_note_states(
    name: str, kind: str, count: int, gpus: tuple[int, ...]
) -> None:
    parsed = recording(name)
    assert parsed.format == kind  # type: ignore[attr-defined]
    assert len(parsed.samples) == count  # type: ignore[attr-defined]
    assert parsed.gpu_indices() == gpus  # type: ignore[attr-defined]
    assert parsed.info.source.startswith("https://github.com/")  # type: ignore[attr-defined]
    assert parsed.recorded_here is False  # type: ignore[attr-defined]
    assert "not measured here" in parsed.provenance()  # type: ignore[attr-defined]


def test_h100_csv_keeps_units_out_and_skips_the_cut_off_last_line() -> None:
    parsed = recording("01")
    first, last = parsed.samples[0], parsed.samples[-1]  # type: ignore[attr-defined]
    assert (first.utilization_percent, first.memory_used_mib, first.memory_total_mib) == (0.0, 1.0, 95830.0)
    assert last.memory_used_mib == 90098.0 and last.utilization_percent == 99.0
    assert parsed.problems == ("line 106: the last value is missing (a cut-off line), skipped",)  # type: ignore[attr-defined]
    # What the note says: memory held at 90 GB with 0 % stretches between bursts.
    held = [s for s in parsed.samples if s.memory_used_mib == 90098.0]  # type: ignore[attr-defined]
    assert any(s.utilization_percent == 0.0 for s in held) and any(
        s.utilization_percent == 99.0 for s in held
    )


def test_headerless_four_gpu_csv_takes_columns_from_the_command_and_groups_ticks() -> None:
    parsed = recording("05")
    ticks = parsed.ticks()  # type: ignore[attr-defined]
    assert len(ticks) == 97 and all(len(tick) == 4 for tick in ticks)
    assert [s.memory_used_mib for s in ticks[0]] == [11409.0, 10851.0, 10911.0, 13325.0]
    assert {s.utilization_percent for s in parsed.samples} == {0.0}  # type: ignore[attr-defined]


def test_temperature_and_power_columns_are_read() -> None:
    assert recording("06").samples[0].temperature_c == 27.0  # type: ignore[attr-defined]
    assert recording("02").samples[0].power_w == 33.09  # type: ignore[attr-defined]


def test_gputil_blocks_keep_the_cpu_line_out() -> None:
    parsed = recording("04")
    assert all(s.probe_cpu_percent is None for s in parsed.samples)  # type: ignore[attr-defined]
    busy = [s for s in parsed.samples if s.utilization_percent and s.utilization_percent >= 98]  # type: ignore[attr-defined]
    assert busy and all(s.memory_used_mib and s.memory_used_mib > 5900 for s in busy)


def test_smi_tables_give_the_process_memory_of_a_chosen_pid() -> None:
    parsed = recording("07", pid=2798548)
    memory = [s.process_memory_mib for s in parsed.samples]  # type: ignore[attr-defined]
    assert memory[0] == 0.0 and 10.0 in memory and memory.count(488.0) == 8 and memory[-1] == 0.0
    assert recording("07").samples[6].process_memory_mib is None  # type: ignore[attr-defined]


def test_time_of_day_rows_take_columns_named_in_the_header() -> None:
    parsed = recording("08")
    first = parsed.samples[0]  # type: ignore[attr-defined]
    assert (first.memory_used_mib, first.memory_total_mib, first.utilization_percent) == (1623.0, 4096.0, 6.0)


def test_dmon_dashes_read_none_never_zero() -> None:
    parsed = recording("11")
    assert parsed.timestamps_inferred  # type: ignore[attr-defined]
    assert parsed.samples[0].utilization_percent == 0.0  # type: ignore[attr-defined]
    assert all(not s.has_gpu_values() for s in parsed.samples[1:])  # type: ignore[attr-defined]


def test_values_and_times() -> None:
    assert parse_value("95830 MiB") == 95830.0
    assert parse_value(" 12 %") == 12.0
    assert (
        parse_value("[N/A]") is None and parse_value("[Not Supported]") is None and parse_value("-") is None
    )
    assert parse_value("garbage") is None
    assert parse_time("2020/11/12 13:48:11.412") == pytest.approx(1605188891.412)
    assert query_fields_in("nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv") == (
        "timestamp",
        "utilization.gpu",
    )


def test_a_file_without_the_five_line_header_still_parses() -> None:
    text = "index, timestamp, utilization.gpu [%]\n0, 2020/11/12 13:48:11.412, 99 %\n"
    info, body = split_header(text)
    assert info.source is None and body == text
    assert parse_recording(text).samples[0].utilization_percent == 99.0


# --- Hypothesis -------------------------------------------------------------------------------

percent = st.one_of(st.none(), st.integers(0, 100))
mib = st.one_of(st.none(), st.integers(0, 200_000))
row = st.tuples(percent, mib, mib)


def _stamp(second: int) -> str:
    return f"2024/01/01 00:{second // 60 % 60:02d}:{second % 60:02d}.{second % 1000:03d}"


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=20), units=st.booleans(), header=st.booleans())
def test_query_csv_round_trip(
    rows: list[tuple[int | None, int | None, int | None]], units: bool, header: bool
) -> None:
    columns = ("timestamp", "utilization.gpu", "memory.used", "memory.total")
    lines = []
    if header:
        lines.append(
            "timestamp, utilization.gpu [%], memory.used [MiB], memory.total [MiB]"
            if units
            else "timestamp, utilization.gpu, memory.used, memory.total"
        )
    for second, (util, used, total) in enumerate(rows):

        def show(value: int | None, unit: str) -> str:
            if value is None:
                return "[N/A]"
            return f"{value} {unit}" if units else str(value)

        lines.append(f"{_stamp(second)}, {show(util, '%')}, {show(used, 'MiB')}, {show(total, 'MiB')}")
    samples, problems = parse_query_gpu_csv("\n".join(lines) + "\n", columns=None if header else columns)
    assert problems == []
    assert [(s.utilization_percent, s.memory_used_mib, s.memory_total_mib) for s in samples] == [
        tuple(None if v is None else float(v) for v in r) for r in rows
    ]


@settings(max_examples=60, deadline=None)
@given(ticks=st.lists(st.lists(st.tuples(percent, percent), min_size=1, max_size=4), min_size=1, max_size=10))
def test_dmon_round_trip_groups_ticks_by_repeating_index(
    ticks: list[list[tuple[int | None, int | None]]],
) -> None:
    lines = ["# gpu     sm    mem", "# Idx      %      %"]
    for tick in ticks:
        for index, (sm, mem) in enumerate(tick):
            lines.append(f"    {index}  {'-' if sm is None else sm}  {'-' if mem is None else mem}")
    samples, problems = parse_dmon("\n".join(lines))
    assert problems == []
    assert len({s.timestamp for s in samples}) == len(ticks)
    flat = [pair for tick in ticks for pair in tick]
    assert [(s.utilization_percent, s.memory_activity_percent) for s in samples] == [
        tuple(None if v is None else float(v) for v in pair) for pair in flat
    ]


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.tuples(st.integers(0, 86399), st.integers(0, 100)), min_size=1, max_size=15))
def test_time_csv_rolls_over_midnight_and_never_goes_backwards(values: list[tuple[int, int]]) -> None:
    lines = []
    for second, util in values:
        lines.append(f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}")
        lines.append(f"100, {util}\r")
    samples, problems = parse_time_csv("\n".join(lines), columns=("memory.used", "utilization.gpu"))
    assert not problems
    times = [s.timestamp for s in samples]
    assert all(later >= earlier - 1 for earlier, later in itertools.pairwise(times))


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400))
def test_any_text_parses_without_raising(text: str) -> None:
    parsed = parse_recording(text)
    assert parsed.format is None or parsed.format == detect_format(split_header(text)[1])
    for sample in parsed.samples:
        assert sample.utilization_percent is None or sample.utilization_percent >= 0


@settings(max_examples=40, deadline=None)
@given(
    blocks=st.lists(st.tuples(st.integers(0, 100), st.integers(0, 6144), st.integers(20, 95)), max_size=10)
)
def test_gputil_blocks_round_trip(blocks: list[tuple[int, int, int]]) -> None:
    lines = [""]
    for minute, (load, used, temperature) in enumerate(blocks):
        lines += [
            f"=== 2024-10-31 15:{minute:02d}:14 ===",
            f"GPU Load: {load}.0%",
            f"GPU Memory: {used}.0MB / 6144.0MB ({used * 100 // 6144}.0%)",
            f"GPU Temperature: {temperature}.0°C",
            "CPU Usage: 0.0%",
            "",
        ]
    samples, problems = parse_gputil_blocks("\n".join(lines))
    assert not problems
    assert [(s.utilization_percent, s.memory_used_mib, s.temperature_c) for s in samples] == [
        (float(load), float(used), float(temperature)) for load, used, temperature in blocks
    ]
    assert all(s.probe_cpu_percent is None for s in samples)


@settings(max_examples=40, deadline=None)
@given(
    util=st.integers(0, 100),
    used=st.integers(0, 49152),
    temperature=st.integers(20, 95),
    owner=st.integers(1, 10**7),
)
def test_smi_table_rows_round_trip(util: int, used: int, temperature: int, owner: int) -> None:
    table = "\n".join(
        [
            "Sun May  4 04:32:38 2025",
            "+-----------------------------------------------------------------------------------------+",
            "| NVIDIA-SMI 565.57.01              Driver Version: 565.57.01      CUDA Version: 12.7     |",
            "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
            "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
            "|   0  Quadro RTX 8000                On  |   00000000:1D:00.0 Off |                  Off |",
            f"| 33%   {temperature}C    P0     82W /  260W |   {used}MiB /  49152MiB |   {util}%   Default |",
            "| Processes:                                                                              |",
            f"|    0   N/A  N/A   {owner}      C   python                                        {used}MiB |",
        ]
    )
    samples, problems = parse_smi_tables(table + "\n" + table, pid=owner)
    assert not problems and len(samples) == 2
    sample = samples[0]
    assert (sample.utilization_percent, sample.memory_used_mib, sample.temperature_c, sample.power_w) == (
        float(util),
        float(used),
        float(temperature),
        82.0,
    )
    assert sample.process_memory_mib == float(used) and sample.other_processes_memory_mib == 0.0


@pytest.mark.parametrize(("name", "busy"), [("12", True), ("13", False)])
def test_this_projects_h200_recordings_parse_and_say_where_they_come_from(name: str, busy: bool) -> None:
    """The two series scripts/gpu-check.sh recorded on an H200 (docs/gpu-run.md, 2026-12-04): the
    working stack's test inference, and the same stack with CUDA_VISIBLE_DEVICES=-1. Replayed here;
    the GPU they describe is not on this machine."""
    parsed = recording(name)
    assert parsed.format == FORMAT_QUERY_CSV  # type: ignore[attr-defined]
    assert parsed.gpu_indices() == (0,)  # type: ignore[attr-defined]
    assert "NVIDIA H200" in parsed.info.gpu  # type: ignore[attr-defined]
    assert "not measured here" in parsed.provenance() and "gpu-check.sh" in parsed.provenance()  # type: ignore[attr-defined]
    samples = parsed.samples  # type: ignore[attr-defined]
    assert len(samples) >= 30 and all(s.memory_total_mib == 143771 for s in samples)
    used = [s.memory_used_mib for s in samples]
    peak = max(s.utilization_percent for s in samples)
    if busy:  # the probe's CUDA session held memory and the GPU worked, briefly
        assert peak > 0 and max(used) - min(used) > 500
    else:  # CUDA_VISIBLE_DEVICES=-1: nothing of ours on the GPU
        assert peak == 0 and max(used) - min(used) < 50
