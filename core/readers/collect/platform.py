"""Collect the operating system facts (what `uname -a` and /etc/os-release say)."""

from __future__ import annotations

import platform
from pathlib import Path

from fallback_doctor.core.model.facts.platform import PlatformFacts
from fallback_doctor.core.platform.files import read_regular_text


def collect_platform(root: str = "/") -> PlatformFacts:
    """The OS, kernel release and architecture. By hand: `uname -srm; cat /etc/os-release`."""
    uname = platform.uname()
    return PlatformFacts(
        system=uname.system,
        release=uname.release,
        machine=uname.machine,
        os_name=_os_pretty_name(Path(root)) if uname.system == "Linux" else _windows_name(uname),
    )


def _os_pretty_name(root: Path) -> str | None:
    for candidate in (root / "etc/os-release", root / "usr/lib/os-release"):
        try:
            text = read_regular_text(candidate, 64 * 1024)
        except OSError:
            continue
        return parse_os_release(text).get("PRETTY_NAME")
    return None


def parse_os_release(text: str) -> dict[str, str]:
    """Parse os-release(5) text: KEY=value lines, values optionally quoted."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def _windows_name(uname: platform.uname_result) -> str | None:
    if uname.system != "Windows":
        return None
    return f"Windows {uname.release} ({uname.version})"
