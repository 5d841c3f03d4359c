"""Facts about the ONNX Runtime package(s) in the target environment, read from their files."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.facts.python_env import Distribution


@dataclass(frozen=True)
class ProviderLibrary:
    """A provider shared library shipped in the package (e.g. libonnxruntime_providers_cuda.so)."""

    provider: str
    """The execution provider name, e.g. CUDAExecutionProvider."""
    path: str


@dataclass(frozen=True)
class OrtFacts:
    """What ONNX Runtime is installed and what its build needs."""

    distributions: tuple[Distribution, ...]
    """Every installed onnxruntime* distribution; more than one is a conflict."""
    package_dir: str | None
    """The onnxruntime/ package directory that `import onnxruntime` would take."""
    version: str | None
    cuda_build_version: str | None
    """build_and_package_info.cuda_version ("12.2", "13.0"), None where the file lacks it."""
    providers_in_build: tuple[str, ...]
    provider_libraries: tuple[ProviderLibrary, ...]
    required_cuda_major: int | None
    required_cudnn_major: int | None
    requirement_source: str | None
    """Where the required majors come from: build info, the provider's DT_NEEDED, or the matrix."""
