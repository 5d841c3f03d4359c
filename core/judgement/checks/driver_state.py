"""What is known of the driver, shared by the driver-layer checks and the device check.

Which OS, which CUDA major the build needs, whether libcuda loaded and a driver answered,
the evidence every "no driver" finding shows, and the commands that install or expose one.
"""

from __future__ import annotations

from fallback_doctor.core.language.evidence_text import commented, named, said
from fallback_doctor.core.model.facts.device import DeviceFacts
from fallback_doctor.core.model.facts.driver import DriverFacts
from fallback_doctor.core.model.facts.native import NativeFacts
from fallback_doctor.core.model.result import Commented, Evidence, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.driver_matrix import DriverRequirement, min_driver_for_cuda
from fallback_doctor.core.readers.knowledge.nvml_errors import NVML_NAMES, NVML_STATUSES

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
        evidence.append(nvml_evidence(driver))
    if native is not None and native.libcuda is not None:
        attempt = native.libcuda
        value_id = (
            "evidence.loaded_from" if attempt.loaded else None if attempt.error else "evidence.not_loaded"
        )
        evidence.append(
            said(
                "evidence.name",
                value_id,
                value="" if value_id else attempt.error or "",
                source_id="evidence.source.native_dlopen",
                name=attempt.name,
                path=attempt.path or "",
            )
        )
    if driver is not None and os_of(snapshot) == "linux":
        evidence.append(
            named(
                "/proc/driver/nvidia/version",
                driver.proc_driver_version or "",
                otherwise="evidence.no_kernel_module",
                source="cat /proc/driver/nvidia/version",
            )
        )
    if device is not None and os_of(snapshot) == "linux":
        evidence.append(
            named(
                "/dev/nvidia*",
                ", ".join(device.device_nodes),
                otherwise="evidence.none",
                source="ls -l /dev/nvidia*",
            )
        )
        if device.pci_nvidia_devices is not None:
            evidence.append(
                said(
                    "evidence.pci_gpus",
                    value=", ".join(device.pci_nvidia_devices),
                    otherwise="evidence.none_visible_here",
                    source="lspci -d 10de: -nn",
                )
            )
        if device.container:
            evidence.append(container_evidence(device))
    return evidence


def nvml_evidence(driver: DriverFacts, otherwise: str | None = None) -> Evidence:
    """What NVML said, in the catalogue's words for its nvmlReturn_t (resources/compat/nvml_errors.json):
    `nvidia-smi` prints the same error."""
    code = driver.nvml_error_code
    if code in NVML_NAMES and driver.nvml_status in NVML_STATUSES:
        meaning = Words(f"evidence.nvml.{driver.nvml_status}")
        return said(
            "evidence.name",
            "evidence.nvml.meaning_code",
            source="nvidia-smi",
            name="NVML",
            meaning=meaning,
            nvml_code=NVML_NAMES[code],
        )
    return named("NVML", driver.nvml_error or "", otherwise=otherwise, source="nvidia-smi")


def container_evidence(device: DeviceFacts) -> Evidence:
    """The container this runs in and what said so: `ls -a / | grep dockerenv`, `cat /proc/1/cgroup`."""
    markers = device.container_words or device.container_evidence
    return said(
        "evidence.container", "evidence.container.with_markers", container=device.container, markers=markers
    )


def container_gpu_commands(container: str) -> tuple[str | Commented, ...]:
    """How to give a container of this kind the GPUs (host side, then the container)."""
    driver_first = commented("nvidia-smi", "remedy.comment.host_driver_first")
    host = (
        driver_first,
        commented(
            "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
            "remedy.comment.host_after_toolkit",
        ),
    )
    if container == "podman":
        return (
            driver_first,
            commented("sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml", "remedy.comment.host"),
            "podman run --rm --device nvidia.com/gpu=all <image> nvidia-smi",
        )
    if container == "kubernetes":
        return (
            commented(
                "kubectl describe node <node> | grep -i nvidia.com/gpu", "remedy.comment.device_plugin"
            ),
            commented("resources: {limits: {nvidia.com/gpu: 1}}", "remedy.comment.pod_spec"),
            "kubectl exec <pod> -- nvidia-smi",
        )
    return (
        *host,
        "docker run --rm --gpus all <image> nvidia-smi",
        commented(
            "",
            "remedy.comment.docker_compose",
            gap="",
            rest="deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]",
        ),
    )


def upgrade_commands(system: str, requirement: DriverRequirement | None) -> tuple[str | Commented, ...]:
    branch = requirement.branch if requirement else "580"
    if system == "windows":
        return (
            "nvidia-smi",
            commented(
                "", "remedy.comment.driver_download", gap="", url="https://www.nvidia.com/Download/index.aspx"
            ),
        )
    return (
        "nvidia-smi",
        commented("sudo ubuntu-drivers list", "remedy.comment.ubuntu_drivers"),
        commented(f"sudo apt install nvidia-driver-{branch}-server", "remedy.comment.ubuntu_newer_branch"),
        "sudo reboot",
    )
