"""Facts about the target application: its profile, configuration and libPath."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetFacts:
    """The resolved target: which application, where its files are, what its configuration says."""

    kind: str
    """"bareun", "python" or "log"."""
    root: str | None
    """The installation directory (Bareun: BAREUN_ROOT), None for a Python or log target."""
    config_path: str | None
    log_paths: tuple[str, ...]
    lib_path: str | None
    """The application's own ONNX Runtime directory (Bareun's libPath), None where it has none."""
    requested_provider: str | None
    """What the configuration asks for: "cuda", "tensorrt", "cpu", … None when unknown."""
