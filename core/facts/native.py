"""Facts that only loading a library can tell, gathered by the native child probe."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoadAttempt:
    """One dlopen/LoadLibrary attempt made in the child, and what it returned."""

    name: str
    """The name asked for (a soname or a path)."""
    loaded: bool
    path: str | None
    """Where the loader took it from, when it loaded."""
    error: str | None
    """The loader's own message, when it did not."""
    version: int | None
    """The version the library itself reports (cudaRuntimeGetVersion, cudnnGetVersion …)."""


@dataclass(frozen=True)
class NativeFacts:
    """Results of the native child probe (run with a timeout; may crash, that is a fact too)."""

    outcome: str
    """"ok", or a sentence: "crashed with SIGABRT while loading libcudnn.so.9", "timed out"."""
    libcuda: LoadAttempt | None
    cu_driver_version: int | None
    cu_init_result: int | None
    """CUresult of cuInit(0): 0 success, 100 no device, 35 insufficient driver, …"""
    attempts: tuple[LoadAttempt, ...]
    stderr: str
