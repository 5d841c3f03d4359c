"""Facts about the ONNX Runtime package(s) in the target environment, read from their files."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.model.facts.python_env import Distribution
from fallback_doctor.core.model.result import Words


@dataclass(frozen=True)
class ProviderLibrary:
    """A provider shared library shipped in the package (e.g. libonnxruntime_providers_cuda.so)."""

    provider: str
    """The execution provider name, e.g. CUDAExecutionProvider."""
    path: str
    needed: tuple[str, ...] = ()
    """Its direct dependencies (ELF DT_NEEDED / PE imports), where they were read."""


@dataclass(frozen=True)
class PackageBinaries:
    """What a DirectML or macOS package's own binaries say (read by collect/ort_binaries.py,
    judged by checks/package.py directml_coreml_package)."""

    family: str
    """"directml" (an onnxruntime-directml package) or "coreml" (a package read for macOS)."""
    problems: tuple[str, ...] = ()
    """What the files alone show wrong, in words: a file the wheel ships missing, a link missing."""
    binding: str | None = None
    """macOS: the binding module's file name (onnxruntime_pybind11_state*.so)."""
    needs_macos: str | None = None
    """macOS: the oldest macOS the binding runs on (LC_BUILD_VERSION minos)."""


@dataclass(frozen=True)
class OrtFacts:
    """What ONNX Runtime is installed and what its build needs."""

    distributions: tuple[Distribution, ...]
    """Every installed onnxruntime* distribution; more than one is a conflict."""
    package_dir: str | None
    """The onnxruntime/ package directory that `import onnxruntime` would take."""
    version: str | None
    """The version the package's own files state (what `onnxruntime.__version__` would say)."""
    cuda_build_version: str | None
    """build_and_package_info.cuda_version ("12.2", "13.0"), None where the file lacks it."""
    providers_in_build: tuple[str, ...]
    provider_libraries: tuple[ProviderLibrary, ...]
    required_cuda_major: int | None
    required_cudnn_major: int | None
    requirement_source: str | None
    """Where the required majors come from: build info, the provider's DT_NEEDED, or the matrix."""
    version_source: str | None = None
    """Which file the version was read from: build_and_package_info.py, __init__.py, or metadata."""
    build_package_name: str | None = None
    """build_and_package_info.package_name: whose files these are ("onnxruntime-gpu")."""
    required_tensorrt_major: int | None = None
    """From the TensorRT provider's DT_NEEDED (libnvinfer.so.10), else the matrix."""
    cudnn_loaded_lazily: bool | None = None
    """True where the CUDA provider opens cuDNN at run time instead of linking it (1.28 and newer)."""
    shared_library: str | None = None
    """libonnxruntime_providers_shared.so (the bridge every provider library loads)."""
    leftover_libraries: tuple[ProviderLibrary, ...] = ()
    """Provider libraries lying beside the files of a CPU-only build (left by another package)."""
    notes: tuple[str, ...] = ()
    """Things seen that matter to a person: files and metadata disagreeing, a half-removed package."""
    note_words: tuple[Words, ...] = ()
    requirement_words: tuple[Words, ...] = ()
    """``requirement_source`` as the evidence catalogue's words, one per family."""
    """``notes`` as the evidence catalogue's words (resources/texts/evidence/package.json)."""
    binaries: PackageBinaries | None = None
    """A DirectML or macOS package's binaries, read; None for any other package."""

    @property
    def owning_distribution(self) -> Distribution | None:
        """The distribution whose files are in package_dir, by build info's package name."""
        if self.build_package_name is None:
            return self.distributions[0] if len(self.distributions) == 1 else None
        for dist in self.distributions:
            if dist.normalized_name == self.build_package_name.replace("_", "-").lower():
                return dist
        return None

    @property
    def has_cuda_provider(self) -> bool:
        """True when the CUDA provider library is present in the package."""
        return "CUDAExecutionProvider" in self.providers_in_build
