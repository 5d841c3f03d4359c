"""Facts about PyTorch in the target environment: its CUDA build and bundled libraries."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.model.facts.python_env import Distribution


@dataclass(frozen=True)
class TorchFacts:
    """PyTorch, read from its files (not imported)."""

    version: str
    cuda_build: str | None
    """The CUDA version torch was built with ("12.8"), None for a CPU build."""
    lib_dir: str | None
    bundled_libraries: tuple[str, ...]
    """CUDA/cuDNN library file names inside torch/lib (Windows wheels bundle them)."""
    package_dir: str | None = None
    hip_build: str | None = None
    """The ROCm (HIP) version of a ROCm build, None otherwise."""
    cudnn_major: int | None = None
    """The cuDNN major torch gets: from the libraries it bundles, else the nvidia-cudnn wheel."""
    cudnn_source: str | None = None
    """Where cudnn_major comes from: "torch/lib (cudnn64_9.dll)", "nvidia-cudnn-cu12 9.1.0.70"."""
    nvidia_requirements: tuple[str, ...] = ()
    """torch's Requires-Dist entries for nvidia-* wheels, as its METADATA states them."""
    nvidia_distributions: tuple[Distribution, ...] = ()
    """The nvidia-* wheels installed in the same environment (torch's CUDA libraries on Linux)."""

    @property
    def cuda_major(self) -> int | None:
        """The CUDA major of the build ("12.8" -> 12), None for a CPU or ROCm build."""
        if not self.cuda_build:
            return None
        head = self.cuda_build.split(".", 1)[0]
        return int(head) if head.isdigit() else None
