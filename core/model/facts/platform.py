"""Facts about the machine: OS, kernel, architecture."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlatformFacts:
    """The operating system as the tool sees it."""

    system: str
    release: str
    machine: str
    os_name: str | None
    """PRETTY_NAME from /etc/os-release, or the Windows product name."""
