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
    kind: str = "library"
    """"libcuda", "cudart", "cudnn" or "library" (loaded only)."""
    version_rc: int | None = None
    """The status the version call returned (cudart: cudaError_t, 35 = insufficient driver)."""
    driver_version: int | None = None
    """cudart's cudaDriverGetVersion: the CUDA the driver supports; 0 when there is no driver."""
    cudart_version: int | None = None
    """cuDNN's cudnnGetCudartVersion: the CUDA runtime it was built against (12090, 13050 …)."""
    missing_companions: tuple[str, ...] = ()
    """cuDNN sub-libraries that are not next to the loaded cuDNN (libcudnn_graph.so.9 …)."""
    skipped: str | None = None
    """Why the version call was not made (it would have aborted the process)."""


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
    cu_init_error_name: str | None = None
    """cuGetErrorName of that result (CUDA_ERROR_NO_DEVICE …), or our own name for it."""
    cu_device_count: int | None = None
    """cuDeviceGetCount after a successful cuInit: the GPUs CUDA_VISIBLE_DEVICES leaves."""
    cu_devices: tuple[tuple[str, int, int], ...] = ()
    """(name, cc major, cc minor) of each device CUDA sees."""
    crashed_step: str | None = None
    """The step that was running when the child died or hung ("cuInit", "load libcudnn.so.9")."""
    timed_out: bool = False
    returncode: int | None = None
    outside: str | None = None
    """Set when something outside the tool ended the child, twice (core/readers/probes/outside.py):
    "killed" or "busy"; then ``outcome`` says so and nothing is known of the libraries' fault."""
    python: str | None = None
    """The interpreter that ran the child."""

    @property
    def ok(self) -> bool:
        """True when the child ran every step and reported back."""
        return self.outcome == "ok"
