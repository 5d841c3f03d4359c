"""What is known of the driver, shared by the driver-layer checks and the device check.

Which OS, which CUDA major the build needs, whether libcuda loaded and a driver answered,
the evidence every "no driver" finding shows, and the commands that install or expose one.
"""

from __future__ import annotations

from fallback_doctor.core.facts.native import NativeFacts
from fallback_doctor.core.knowledge.driver_matrix import DriverRequirement, min_driver_for_cuda
from fallback_doctor.core.model import Evidence
from fallback_doctor.core.snapshot import EnvironmentSnapshot

CUDA_ERROR_STUB_LIBRARY = 34
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804

NEWEST_CUDA_MAJOR = 13
"""When the build's CUDA major is unknown, recommend the driver of the newest major we
know: a newer driver runs older CUDA (backward compatibility), never the reverse."""


def os_of(snapshot: EnvironmentSnapshot) -> str:
    """ "windows" or "linux", from the platform facts (or the target interpreter's)."""
    if snapshot.platform is not None:
        return "windows" if snapshot.platform.system.lower().startswith("win") else "linux"
    if snapshot.python is not None:
        return "windows" if snapshot.python.platform.startswith("win") else "linux"
    return "linux"


def required_cuda_major(snapshot: EnvironmentSnapshot) -> int | None:
    """The CUDA major the ONNX Runtime build needs, or the one its loaded cudart reports."""
    if snapshot.onnxruntime is not None and snapshot.onnxruntime.required_cuda_major:
        return snapshot.onnxruntime.required_cuda_major
    if snapshot.native is not None:
        for attempt in snapshot.native.attempts:
            if attempt.kind == "cudart" and attempt.version:
                return attempt.version // 1000
    return None


def libcuda_loaded(native: NativeFacts | None) -> bool | None:
    """Whether the child could load libcuda.so.1 / nvcuda.dll (None: not probed)."""
    if native is None or native.libcuda is None:
        return None
    return native.libcuda.loaded


def driver_present(snapshot: EnvironmentSnapshot) -> bool:
    """A driver answered: NVML initialised, or libcuda loaded and was not the stub."""
    driver, native = snapshot.driver, snapshot.native
    if driver is not None and driver.nvml_status in ("ok", "no_permission", "lib_rm_version_mismatch"):
        return True
    return bool(libcuda_loaded(native)) and (
        native is not None and native.cu_init_result != CUDA_ERROR_STUB_LIBRARY
    )


def requirement_for(snapshot: EnvironmentSnapshot, system: str) -> tuple[int, DriverRequirement | None]:
    major = required_cuda_major(snapshot) or NEWEST_CUDA_MAJOR
    return major, min_driver_for_cuda(major, system)


def common_evidence(snapshot: EnvironmentSnapshot) -> list[Evidence]:
    evidence: list[Evidence] = []
    driver, native, device = snapshot.driver, snapshot.native, snapshot.device
    if driver is not None:
        evidence.append(Evidence("NVML", driver.nvml_error or driver.nvml_status, source="nvidia-smi"))
    if native is not None and native.libcuda is not None:
        attempt = native.libcuda
        value = f"loaded from {attempt.path}" if attempt.loaded else (attempt.error or "not loaded")
        evidence.append(Evidence(attempt.name, value, source="dlopen in the native probe"))
    if driver is not None and os_of(snapshot) == "linux":
        evidence.append(
            Evidence(
                "/proc/driver/nvidia/version",
                driver.proc_driver_version or "absent (no NVIDIA kernel module is loaded)",
                source="cat /proc/driver/nvidia/version",
            )
        )
    if device is not None and os_of(snapshot) == "linux":
        evidence.append(
            Evidence("/dev/nvidia*", ", ".join(device.device_nodes) or "none", source="ls -l /dev/nvidia*")
        )
        if device.pci_nvidia_devices is not None:
            evidence.append(
                Evidence(
                    "NVIDIA GPUs on the PCI bus",
                    ", ".join(device.pci_nvidia_devices) or "none visible here",
                    source="lspci -d 10de: -nn",
                )
            )
        if device.container:
            evidence.append(
                Evidence("container", f"{device.container} ({'; '.join(device.container_evidence)})")
            )
    return evidence


def container_gpu_commands(container: str) -> tuple[str, ...]:
    """How to give a container of this kind the GPUs (host side, then the container)."""
    host = (
        "nvidia-smi    # on the host: the driver must work there first",
        "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker"
        "    # on the host, after installing the NVIDIA Container Toolkit",
    )
    if container == "podman":
        return (
            "nvidia-smi    # on the host: the driver must work there first",
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml    # on the host",
            "podman run --rm --device nvidia.com/gpu=all <image> nvidia-smi",
        )
    if container == "kubernetes":
        return (
            "kubectl describe node <node> | grep -i nvidia.com/gpu"
            "    # the NVIDIA device plugin / GPU Operator must advertise GPUs",
            "resources: {limits: {nvidia.com/gpu: 1}}    # in the pod's container spec",
            "kubectl exec <pod> -- nvidia-smi",
        )
    return (
        *host,
        "docker run --rm --gpus all <image> nvidia-smi",
        "# docker compose: deploy.resources.reservations.devices:"
        " [{driver: nvidia, count: all, capabilities: [gpu]}]",
    )


def upgrade_commands(system: str, requirement: DriverRequirement | None) -> tuple[str, ...]:
    branch = requirement.branch if requirement else "580"
    if system == "windows":
        return (
            "nvidia-smi",
            "# install the newest NVIDIA driver for this GPU from https://www.nvidia.com/Download/index.aspx",
        )
    return (
        "nvidia-smi",
        "sudo ubuntu-drivers list    # Ubuntu: the drivers that fit this GPU",
        f"sudo apt install nvidia-driver-{branch}-server    # Ubuntu; or a newer branch",
        "sudo reboot",
    )
