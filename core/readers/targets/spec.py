"""What the user asked to diagnose (the command line or the wizard's start page)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TargetKind(StrEnum):
    """The built-in kinds' names; every kind, a plug-in's too, is in core/readers/targets/registry.py."""

    AUTO = "auto"
    BAREUN = "bareun"
    PYTHON = "python"
    LOG = "log"
    NATIVE = "native"
    """Any native application's own library folder (--lib-dir, or the --pid process's maps)."""


@dataclass(frozen=True)
class TargetSpec:
    """The target as given; resolving it (finding Bareun, reading its config) is a collector's job."""

    kind: str = TargetKind.AUTO
    """A registered profile's kind, or "auto"."""
    python: str | None = None
    """--python: the application's interpreter."""
    bareun_root: str | None = None
    """--bareun-root: the Bareun installation (else BAREUN_ROOT, /opt/bareun, /bareun, …)."""
    config: str | None = None
    """--config: the application's configuration file (for Bareun: <root>/config/bareun.json)."""
    logs: tuple[str, ...] = ()
    """--log: log files to read (may be empty: the profile's own log location is used)."""
    log_text: str | None = None
    """Log text pasted into the wizard (no file)."""
    pid: int | None = None
    """--pid: the running server's process."""
    lib_dir: str | None = None
    """--lib-dir: a native application's ONNX Runtime folder (libonnxruntime.so / onnxruntime.dll)."""
    app: str | None = None
    """The native application's kind ("node", "dotnet", "java", "rust", "c"); None: recognised."""
