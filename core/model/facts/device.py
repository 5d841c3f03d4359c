"""Facts about GPU visibility: containers, device nodes, *_VISIBLE_DEVICES, WSL."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.model.result import Words


@dataclass(frozen=True)
class DeviceFacts:
    """Whether this process can see a GPU at all."""

    container: str | None
    """"docker", "podman", "kubernetes", "lxc", "containerd", "container", or None on the host."""
    device_nodes: tuple[str, ...]
    """The /dev/nvidia* nodes present."""
    cuda_visible_devices: str | None
    nvidia_visible_devices: str | None
    wsl: bool
    container_evidence: tuple[str, ...] = ()
    """What told us we are in a container: "/.dockerenv", "KUBERNETES_SERVICE_HOST", …"""
    container_words: tuple[Words, ...] = ()
    """``container_evidence`` as the evidence catalogue's words (shown in the reader's language)."""
    nvidia_driver_capabilities: str | None = None
    """NVIDIA_DRIVER_CAPABILITIES as the container runtime saw it ("compute,utility", "all")."""
    dxg_present: bool = False
    """/dev/dxg exists: WSL 2's GPU paravirtualisation device (WSL has no /dev/nvidia*)."""
    wsl_lib_dir: str | None = None
    """/usr/lib/wsl/lib where it exists: the Windows driver's libcuda.so.1 for WSL."""
    wsl_libcuda: bool = False
    """/usr/lib/wsl/lib/libcuda.so.1 exists."""
    pci_nvidia_devices: tuple[str, ...] | None = None
    """PCI addresses of NVIDIA display/3D controllers (vendor 0x10de, class 0x03xx) from
    /sys/bus/pci/devices; None where sysfs could not be read (Windows, restricted)."""
