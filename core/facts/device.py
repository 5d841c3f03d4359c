"""Facts about GPU visibility: containers, device nodes, *_VISIBLE_DEVICES, WSL."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceFacts:
    """Whether this process can see a GPU at all."""

    container: str | None
    """"docker", "podman", "kubernetes", "lxc", or None on the host."""
    device_nodes: tuple[str, ...]
    """The /dev/nvidia* nodes present."""
    cuda_visible_devices: str | None
    nvidia_visible_devices: str | None
    wsl: bool
