"""Can this process see a GPU at all: containers, /dev/nvidia* nodes, *_VISIBLE_DEVICES, WSL.

Reads files only (no NVIDIA library is loaded). ``root`` points the reads at another
tree, so the tests can build a fake container or WSL file system.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.facts.device import DeviceFacts
from fallback_doctor.core.model.result import Words

_CGROUP_MARKERS: tuple[tuple[str, str], ...] = (
    ("kubepods", "kubernetes"),
    ("libpod", "podman"),
    ("docker", "docker"),
    ("containerd", "containerd"),
    ("lxc", "lxc"),
)

_MOUNTINFO_MARKERS: tuple[tuple[str, str], ...] = (
    ("/kubelet/pods/", "kubernetes"),
    ("/containers/storage/", "podman"),
    ("/docker/containers/", "docker"),
    ("/var/lib/docker/", "docker"),
    ("io.containerd", "containerd"),
)

_CONTAINER_MOUNT_POINTS = frozenset(
    {
        "/",
        "/etc/hostname",
        "/etc/hosts",
        "/etc/resolv.conf",
        "/run/secrets/kubernetes.io/serviceaccount",
        "/var/run/secrets/kubernetes.io/serviceaccount",
    }
)


def collect_device(env: Mapping[str, str], root: str = "/") -> DeviceFacts:
    """Container markers, NVIDIA device nodes, the visibility variables and WSL.

    By hand: `ls -l /dev/nvidia* /dev/dxg`, `ls -a / | grep -e .dockerenv`,
    `cat /proc/1/cgroup`, `echo $CUDA_VISIBLE_DEVICES $NVIDIA_VISIBLE_DEVICES`,
    `grep -i microsoft /proc/version`, `ls /usr/lib/wsl/lib`,
    `lspci -nn | grep -i nvidia`.
    """
    if sys.platform == "win32" and root == "/":
        return DeviceFacts(
            container=None,
            device_nodes=(),
            cuda_visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
            nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES"),
            wsl=False,
        )
    container, markers = detect_container(env, root)
    wsl_lib = _join(root, "usr/lib/wsl/lib")
    wsl_lib_exists = os.path.isdir(wsl_lib)
    return DeviceFacts(
        container=container,
        device_nodes=nvidia_device_nodes(root),
        cuda_visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
        nvidia_visible_devices=env.get("NVIDIA_VISIBLE_DEVICES"),
        wsl=detect_wsl(root),
        container_evidence=tuple(words_text(marker) for marker in markers),
        container_words=markers,
        nvidia_driver_capabilities=env.get("NVIDIA_DRIVER_CAPABILITIES"),
        dxg_present=os.path.exists(_join(root, "dev/dxg")),
        wsl_lib_dir="/usr/lib/wsl/lib" if wsl_lib_exists else None,
        wsl_libcuda=wsl_lib_exists and os.path.exists(os.path.join(wsl_lib, "libcuda.so.1")),
        pci_nvidia_devices=pci_nvidia_devices(root),
    )


def detect_container(env: Mapping[str, str], root: str = "/") -> tuple[str | None, tuple[Words, ...]]:
    """Which container runtime this looks like, and every marker that says so.

    Kubernetes wins over the runtime underneath it; then Podman, Docker, containerd, LXC.
    """
    found: list[tuple[str, Words]] = []
    if "KUBERNETES_SERVICE_HOST" in env:
        found.append(
            ("kubernetes", Words("evidence.container.variable_set", {"name": "KUBERNETES_SERVICE_HOST"}))
        )
    if os.path.exists(_join(root, "run/.containerenv")):
        found.append(("podman", Words("evidence.name", {"name": "/run/.containerenv"})))
    if os.path.exists(_join(root, ".dockerenv")):
        found.append(("docker", Words("evidence.name", {"name": "/.dockerenv"})))
    systemd_container = _read(_join(root, "run/systemd/container"), 200).strip()
    if systemd_container:
        says = Words("evidence.container.systemd_says", {"value": repr(systemd_container)})
        found.append((systemd_container.split()[0], says))
    cgroup = _read(_join(root, "proc/1/cgroup"), 64 * 1024)
    for marker, kind in _CGROUP_MARKERS:
        if marker in cgroup:
            found.append(
                (kind, Words("evidence.container.mentions", {"file": "/proc/1/cgroup", "marker": marker}))
            )
            break
    mountinfo = _container_mount_lines(_read(_join(root, "proc/self/mountinfo"), 256 * 1024))
    for marker, kind in _MOUNTINFO_MARKERS:
        if marker in mountinfo:
            mentions = Words(
                "evidence.container.mentions", {"file": "/proc/self/mountinfo", "marker": marker}
            )
            found.append((kind, mentions))
            break
    if not found:
        return None, ()
    kinds = [kind for kind, _ in found]
    for preferred in ("kubernetes", "podman", "docker", "containerd", "lxc"):
        if preferred in kinds:
            return preferred, tuple(text for _, text in found)
    return "container", tuple(text for _, text in found)


def _container_mount_lines(mountinfo: str) -> str:
    """The mountinfo lines of the files a runtime mounts into a container.

    Only these: on a host, the mount table also lists every container's own mounts
    (/var/lib/docker/overlay2/…), which say nothing about where *we* run.
    """
    kept: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[4] in _CONTAINER_MOUNT_POINTS:
            kept.append(line)
    return "\n".join(kept)


def nvidia_device_nodes(root: str = "/") -> tuple[str, ...]:
    """The /dev/nvidia* entries (nvidia0, nvidiactl, nvidia-uvm, nvidia-caps …), sorted."""
    try:
        names = os.listdir(_join(root, "dev"))
    except OSError:
        return ()
    return tuple(sorted(f"/dev/{name}" for name in names if name.startswith("nvidia")))


def detect_wsl(root: str = "/") -> bool:
    """WSL: /proc/version names Microsoft, or the WSL driver directory exists."""
    version = _read(_join(root, "proc/version"), 4096).lower()
    return "microsoft" in version or "wsl" in version or os.path.isdir(_join(root, "usr/lib/wsl/lib"))


def pci_nvidia_devices(root: str = "/") -> tuple[str, ...] | None:
    """PCI addresses of NVIDIA display controllers (`lspci -d 10de: -nn`); None if unreadable."""
    base = _join(root, "sys/bus/pci/devices")
    try:
        addresses = sorted(os.listdir(base))
    except OSError:
        return None
    found: list[str] = []
    for address in addresses:
        vendor = _read(os.path.join(base, address, "vendor"), 16).strip().lower()
        device_class = _read(os.path.join(base, address, "class"), 16).strip().lower()
        if vendor == "0x10de" and device_class.startswith("0x03"):
            found.append(address)
    return tuple(found)


def _join(root: str, relative: str) -> str:
    return os.path.join(root, relative)


def _read(path: str, limit: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return ""
