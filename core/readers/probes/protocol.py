"""The probes' protocol: one JSON object per line on standard output, anything else is garbage.

A child flushes a line per step, so a crash still leaves the steps it finished; lines that
are not JSON objects (a library printing to stdout, a truncated last line) are kept apart
as evidence rather than breaking the reading.
"""

from __future__ import annotations

import json
from typing import Any


def json_lines(stdout: str, *, require: str | None = "event") -> tuple[list[dict[str, Any]], list[str]]:
    """The JSON-object lines of ``stdout`` (with the key ``require``, if given) and the other lines."""
    events: list[dict[str, object]] = []
    garbage: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            garbage.append(line)
            continue
        if isinstance(value, dict) and (require is None or require in value):
            events.append(value)
        else:
            garbage.append(line)
    return events, garbage
