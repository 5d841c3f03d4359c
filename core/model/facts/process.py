"""Facts about the running server process, read-only (/proc, systemd, docker, NVML)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MappedLibrary:
    """One GPU-stack or ONNX Runtime library the process has mapped (a line of /proc/PID/maps)."""

    path: str
    name: str
    """The file name as mapped (the real file: symlinks are already resolved by the kernel)."""
    family: str
    """ort_core, ort_provider_cuda, ort_provider_tensorrt, ort_provider_shared, ort_python,
    cudart, cublas, cublasLt, cufft, curand, nvrtc, nvJitLink, cudnn, cudnn_* (sub-libraries),
    nvinfer*, driver (libcuda), nvml."""
    major: int | None
    """The library's own major version from its name (cuDNN 9, cudart 12), None where unnamed."""
    cuda_major: int | None
    """The CUDA major it belongs to (cuFFT 11 -> CUDA 12), None where it does not say."""
    deleted: bool = False
    """The file was replaced or removed after the process mapped it ("(deleted)" in maps)."""


@dataclass(frozen=True)
class ReadLimit:
    """A read that the operating system refused, and what to run so that it is allowed."""

    what: str
    """environ, maps, exe, cmdline, cgroup, unit, docker, gpu_memory."""
    path: str
    error: str
    allow: str
    """The command that allows the read (``sudo fallback-doctor diagnose --pid N`` …)."""


@dataclass(frozen=True)
class ServiceUnit:
    """The systemd unit the process runs in, and the environment the unit gives it."""

    name: str
    fragment_path: str | None
    environment: dict[str, str]
    """Allowlisted ``Environment=`` assignments."""
    environment_files: tuple[str, ...]
    """``EnvironmentFile=`` paths (a leading ``-`` means optional)."""
    source: str
    """``systemctl show`` or ``unit file`` (parsed by us when systemctl cannot answer)."""
    error: str | None = None


@dataclass(frozen=True)
class ContainerInfo:
    """The container the process runs in (from /proc/PID/cgroup), and ``docker inspect`` of it."""

    engine: str
    """docker, containerd, podman, kubepods, lxc."""
    container_id: str | None
    environment: dict[str, str] = field(default_factory=dict)
    """Allowlisted ``Config.Env`` from ``docker inspect``."""
    runtime: str | None = None
    """``HostConfig.Runtime`` (``nvidia`` for the legacy NVIDIA runtime)."""
    gpu_requested: bool | None = None
    """Whether the container asked for GPUs (``--gpus`` / DeviceRequests, the nvidia runtime, or
    NVIDIA_VISIBLE_DEVICES in its environment); None when ``docker inspect`` could not tell."""
    inspected: bool = False
    error: str | None = None
    """Why ``docker inspect`` was not done or failed."""


@dataclass(frozen=True)
class GpuMemoryUse:
    """Whether the process holds GPU memory, from NVML's list of compute processes."""

    status: str
    """``holds``, ``none`` (NVML answered and the process is not in its list) or ``unknown``."""
    used_mib: int | None = None
    gpu_indices: tuple[int, ...] = ()
    reason: str | None = None
    """Why it is unknown (no driver, no permission, pynvml missing …)."""
    reason_words: dict[str, Any] | None = None
    """``reason`` as catalogue words ``{id, params}`` (shown in the reader's language); None: as written."""


@dataclass(frozen=True)
class ProcessFacts:
    """What the running server really has: its loaded libraries and its own environment."""

    pid: int
    executable: str | None
    mapped_libraries: tuple[MappedLibrary, ...]
    """GPU-stack and ONNX Runtime libraries mapped in /proc/PID/maps."""
    environment: dict[str, str] | None
    """The allowlisted variables of the process's own environment (/proc/PID/environ; not the
    technician's shell). None when it could not be read (see ``read_limits``)."""
    cmdline: tuple[str, ...] = ()
    uid: int | None = None
    user: str | None = None
    maps_read: bool = False
    """Whether /proc/PID/maps could be read (``mapped_libraries`` is empty, not known, if not)."""
    started_with_sudo: bool = False
    """SUDO_USER / SUDO_COMMAND in the process's environment: sudo resets LD_LIBRARY_PATH."""
    shell_environment: dict[str, str] = field(default_factory=dict)
    """The allowlisted environment of the shell the tool runs in, to compare with the server's."""
    shell_via_sudo: bool = False
    """The tool itself runs under sudo (its LD_LIBRARY_PATH was dropped by sudo)."""
    unit: ServiceUnit | None = None
    container: ContainerInfo | None = None
    gpu_memory: GpuMemoryUse = field(default_factory=lambda: GpuMemoryUse("unknown", reason="not asked"))
    read_limits: tuple[ReadLimit, ...] = ()
    provider_library_on_disk: str | None = None
    """The CUDA provider library next to the mapped ONNX Runtime (mapped or not)."""
    needed_cuda_major: int | None = None
    """The CUDA major that provider library needs (from its DT_NEEDED names)."""
    needed_cudnn_major: int | None = None
    error: str | None = None
    """Why the process could not be read at all (it exited, no /proc)."""

    def mapped(self, family: str) -> tuple[MappedLibrary, ...]:
        """The mapped libraries of one family (``cudart``, ``cudnn``, ``ort_provider_cuda`` …)."""
        return tuple(lib for lib in self.mapped_libraries if lib.family == family)

    @property
    def cuda_provider_mapped(self) -> bool:
        """Whether libonnxruntime_providers_cuda is mapped: the CUDA provider was loaded."""
        return bool(self.mapped("ort_provider_cuda"))

    @property
    def onnxruntime_mapped(self) -> bool:
        """Whether any ONNX Runtime library is mapped (the core, a provider or the Python module)."""
        return any(lib.family.startswith("ort_") for lib in self.mapped_libraries)

    def effective_environment(self) -> dict[str, str] | None:
        """The environment to diagnose with: the process's own, else what its unit and container give.

        /proc/PID/environ is the truth when it could be read. Otherwise the container's
        ``Config.Env`` and then the unit's ``Environment=`` (the unit wins, as for a service
        systemd starts) are the best that can be said; None when nothing is known.
        """
        if self.environment is not None:
            return dict(self.environment)
        merged: dict[str, str] = {}
        if self.container is not None and self.container.inspected:
            merged.update(self.container.environment)
        if self.unit is not None:
            merged.update(self.unit.environment)
        return merged or None
