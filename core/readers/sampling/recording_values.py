"""Reading one printed value of a GPU recording: numbers with units, times, the column names.

Shared by the recording parsers (core/readers/sampling/recording_formats.py): "[N/A]", "-" and ""
read ``None``, never 0; printed times carry no zone and are read as UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

# --query-gpu field names (nvidia-smi --help-query-gpu) -> GpuSample fields.
QUERY_FIELDS: dict[str, str] = {
    "timestamp": "timestamp",
    "index": "gpu_index",
    "utilization.gpu": "utilization_percent",
    "utilization.memory": "memory_activity_percent",
    "memory.used": "memory_used_mib",
    "memory.total": "memory_total_mib",
    "temperature.gpu": "temperature_c",
    "clocks.sm": "sm_clock_mhz",
    "clocks.current.sm": "sm_clock_mhz",
    "power.draw": "power_w",
    "power.draw.instant": "power_w",
    "power.draw.average": "power_w",
}
# Names nvidia-smi also accepts and prints, read but not kept.
OTHER_QUERY_FIELDS = (
    "name",
    "gpu_name",
    "pstate",
    "memory.free",
    "memory.reserved",
    "uuid",
    "gpu_uuid",
    "pci.bus_id",
    "driver_version",
    "fan.speed",
    "clocks.mem",
    "clocks.gr",
    "power.limit",
    "temperature.memory",
    "count",
)

# dmon column names -> GpuSample fields (nvidia-smi dmon -s pucvmet; "pclk" is the SM clock).
DMON_FIELDS: dict[str, str] = {
    "gpu": "gpu_index",
    "idx": "gpu_index",
    "sm": "utilization_percent",
    "mem": "memory_activity_percent",
    "gtemp": "temperature_c",
    "pclk": "sm_clock_mhz",
    "pwr": "power_w",
    "fb": "memory_used_mib",
}

NO_VALUE = {"", "-", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "[gpu is lost]"}
VALUE = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(%|mib|mb|w|mhz|c|°c|ºc|gib)?\s*$", re.IGNORECASE)
SMI_TIME = re.compile(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?")
TIME_OF_DAY = re.compile(r"^\s*(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?\s*$")
MONTHS = {
    name: index
    for index, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
    )
}
DATE_OUTPUT = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})"
    r"(?:\s+(AM|PM))?(?:\s+[A-Z]{2,5})?\s+(\d{4})"
)
QUERY_ARGUMENT = re.compile(r"--query-gpu[= ]([A-Za-z0-9_.,]+)")
KNOWN_NAME = re.compile(
    r"(?<![\w.])("
    + "|".join(
        re.escape(name) for name in sorted((*QUERY_FIELDS, *OTHER_QUERY_FIELDS), key=len, reverse=True)
    )
    + r")(?![\w.])"
)


def query_fields_in(text: str) -> tuple[str, ...]:
    """The `--query-gpu` fields named in a command line (or a description of one), in order."""
    argument = QUERY_ARGUMENT.search(text)
    if argument:
        return tuple(name.strip() for name in argument.group(1).split(",") if name.strip())
    return tuple(match.group(1) for match in KNOWN_NAME.finditer(text))


def parse_value(text: str) -> float | None:
    """One printed value without its unit; ``None`` for "[N/A]", "-", "" and anything unreadable."""
    cleaned = text.strip()
    if cleaned.lower() in NO_VALUE:
        return None
    match = VALUE.match(cleaned)
    if not match:
        return None
    value = float(match.group(1))
    if (match.group(2) or "").lower() == "gib":
        value *= 1024
    return value


def parse_time(text: str) -> float | None:
    """nvidia-smi's "2026/02/25 10:04:37.416" (or "2024-10-31 15:33:14") as epoch seconds (UTC)."""
    match = SMI_TIME.search(text)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction = float("0." + match.group(7)) if match.group(7) else 0.0
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    return moment.timestamp() + fraction


def parse_date_output(text: str) -> float | None:
    """`date` / nvidia-smi table time ("Sun May  4 04:27:32 AM EDT 2025") as epoch seconds (UTC)."""
    match = DATE_OUTPUT.search(text)
    if not match:
        return None
    month_name, day, hour, minute, second, half, year = match.groups()
    month = MONTHS.get(month_name.lower())
    hour_value = int(hour)
    if half == "PM" and hour_value < 12:
        hour_value += 12
    elif half == "AM" and hour_value == 12:
        hour_value = 0
    if month is None:
        return None
    try:
        moment = datetime(int(year), month, int(day), hour_value, int(minute), int(second), tzinfo=UTC)
    except ValueError:
        return None
    return moment.timestamp()
