"""Facts about PyTorch in the target environment: its CUDA build and bundled libraries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TorchFacts:
    """PyTorch, read from its files (not imported)."""

    version: str
    cuda_build: str | None
    """The CUDA version torch was built with ("12.8"), None for a CPU build."""
    lib_dir: str | None
    bundled_libraries: tuple[str, ...]
    """CUDA/cuDNN library file names inside torch/lib (Windows wheels bundle them)."""
