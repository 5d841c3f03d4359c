"""Facts about the running server process, read-only (/proc, systemd, docker, NVML)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessFacts:
    """What the running server really has: its loaded libraries and its own environment."""

    pid: int
    executable: str | None
    mapped_libraries: tuple[str, ...]
    """GPU-stack and ONNX Runtime libraries mapped in /proc/PID/maps."""
    environment: dict[str, str]
    """The allowlisted variables of the process's own environment (not the technician's shell)."""
