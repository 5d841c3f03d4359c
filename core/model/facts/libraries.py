"""Facts about CUDA, cuDNN and TensorRT libraries: copies on disk and how the loader resolves them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LibraryCopy:
    """One copy of a GPU-stack library found in a known place."""

    path: str
    name: str
    """The file name, e.g. libcublasLt.so.13 or cublasLt64_13.dll."""
    version: str | None
    """From the file name (libcudart.so.13.0.96 -> 13.0.96), None where it has none."""
    place: str
    """Where it was found: ld_library_path, runpath, ldconfig, default_dir, nvidia_wheel,
    cuda_home, usr_local_cuda, wsl, lib_path, torch, path (Windows PATH) …"""
    on_loader_path: bool
    """Whether the loader would search this directory by itself."""


@dataclass(frozen=True)
class Resolution:
    """How the loader would resolve one needed library name."""

    name: str
    """The needed name (DT_NEEDED soname or PE import), e.g. libcublasLt.so.13."""
    needed_by: str
    """Path of the library that needs it."""
    path: str | None
    """The file the loader would take; None when it would fail."""
    via: str | None
    """Which search step finds it: LD_LIBRARY_PATH, RUNPATH, RPATH, ld.so.cache, default, PATH …"""
    installed_elsewhere: tuple[str, ...]
    """Copies of exactly this name that the loader would not find by itself."""
    other_majors: tuple[str, ...]
    """Copies of the same library with another major version (e.g. .so.12 for .so.13)."""
    lazy: bool = False
    """Opened at run time by name (dlopen/LoadLibrary), not a load-time dependency: ONNX Runtime
    >= 1.28 opens cuDNN, cuFFT and nvrtc this way, and libcudnn.so.9 its sub-libraries."""
    searched: tuple[str, ...] = ()
    """The directories the loader tried, in order (the ld.so.cache step shows as its file)."""
    skipped: tuple[str, ...] = ()
    """Copies the loader would pass over: wrong ELF class/machine (e.g. a 32-bit copy)."""
    version: str | None = None
    """The version in the resolved file's real name (symlinks followed), e.g. 13.0.96."""
    soname: str | None = None
    """DT_SONAME of the resolved file (None on Windows or where it has none)."""


@dataclass(frozen=True)
class DependencyReport:
    """The resolved dependency tree of one provider library."""

    provider: str
    root: str
    resolutions: tuple[Resolution, ...]
    """Every needed library in the tree, breadth-first, each once."""
    budget_exhausted: bool = False
    """True when the time budget ran out before the whole tree was resolved."""
    error: str | None = None
    """Why the root itself could not be read (missing file, not ELF/PE); None when it was."""


@dataclass(frozen=True)
class LibraryFacts:
    """The loader's search order, the known copies, and each provider's dependency tree."""

    search_dirs: tuple[str, ...]
    inventory: tuple[LibraryCopy, ...]
    reports: tuple[DependencyReport, ...]
    budget_exhausted: bool
    """True when the time budget for searching ran out before every place was looked at."""
