"""Driver-layer findings: no driver, driver too old, NVML/kernel mismatch, no permission, cuInit.

Reads snapshot.driver (NVML, /proc), snapshot.native (libcuda and cuInit in the child),
snapshot.device (container, WSL) and snapshot.onnxruntime.required_cuda_major.
"""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.facts.device import DeviceFacts
from fallback_doctor.core.facts.native import NativeFacts
from fallback_doctor.core.knowledge.driver_matrix import (
    DriverRequirement,
    cuda_version_text,
    driver_at_least,
    min_driver_for_cuda,
)
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import make_finding

NVML_NO_PERMISSION = Cause.NVML_NO_PERMISSION
"""Our own cause code: NVML may not talk to the driver (the lead may add it to Cause)."""

CUDA_ERROR_STUB_LIBRARY = 34
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804

_NEWEST_CUDA_MAJOR = 13
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


def _requirement(snapshot: EnvironmentSnapshot, system: str) -> tuple[int, DriverRequirement | None]:
    major = required_cuda_major(snapshot) or _NEWEST_CUDA_MAJOR
    return major, min_driver_for_cuda(major, system)


def _common_evidence(snapshot: EnvironmentSnapshot) -> list[Evidence]:
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


def driver_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """No usable driver: NVML's library and libcuda both missing, the kernel module not
    loaded, libcuda missing beside a working NVML, or the toolkit's stub libcuda taken.

    By hand: `nvidia-smi`; `ldconfig -p | grep -e libcuda.so.1 -e libnvidia-ml`;
    `cat /proc/driver/nvidia/version`; `lsmod | grep nvidia`.
    """
    driver, native, device = snapshot.driver, snapshot.native, snapshot.device
    system = os_of(snapshot)
    major, requirement = _requirement(snapshot, system)
    params = {
        "cuda_major": major,
        "min_driver": requirement.minimum if requirement else "?",
        "branch": requirement.branch if requirement else "580",
        "container": device.container if device and device.container else "container",
    }
    nvml_missing = driver is not None and driver.nvml_status == "library_not_found"
    libcuda = libcuda_loaded(native)
    if native is not None and native.cu_init_result == CUDA_ERROR_STUB_LIBRARY:
        path = native.libcuda.path if native.libcuda and native.libcuda.path else "libcuda.so.1"
        yield make_finding(
            "driver.stub_library",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params={"path": path},
            evidence=(
                Evidence("cuInit(0)", f"{CUDA_ERROR_STUB_LIBRARY} ({native.cu_init_error_name})"),
                Evidence("libcuda loaded from", path, source="dlopen in the native probe"),
            ),
            commands=(
                "ldconfig -p | grep libcuda",
                "echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep -n stubs",
                f"ls -l {path}",
            ),
        )
        return
    if driver is not None and driver.nvml_status == "driver_not_loaded" and libcuda is not True:
        yield make_finding(
            "driver.not_loaded",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params=params,
            evidence=tuple(_common_evidence(snapshot)),
            commands=(
                "lsmod | grep nvidia",
                "sudo modprobe nvidia",
                "sudo dmesg | grep -i -e nvrm -e nvidia | tail -n 20",
                "mokutil --sb-state",
                "sudo reboot",
            ),
        )
        return
    nvml_unknown = driver is None or driver.nvml_status == "pynvml_missing"
    if (nvml_missing and libcuda is not True) or (nvml_unknown and libcuda is False):
        yield _missing_finding(snapshot, device, system, params)
        return
    if libcuda is False and driver is not None and driver.nvml_status == "ok":
        error = native.libcuda.error if native is not None and native.libcuda else None
        yield make_finding(
            "driver.libcuda_missing",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params={
                "driver_version": driver.driver_version or "?",
                "libcuda_error": error or driver.libcuda_error or "?",
                "capabilities": device.nvidia_driver_capabilities if device else None,
            },
            evidence=tuple(
                _common_evidence(snapshot)
                + (
                    [Evidence("NVIDIA_DRIVER_CAPABILITIES", device.nvidia_driver_capabilities)]
                    if device is not None and device.nvidia_driver_capabilities is not None
                    else []
                )
            ),
            commands=(
                "ldconfig -p | grep -e libcuda.so.1 -e libnvidia-ml.so.1",
                "dpkg -l | grep -e libnvidia-compute -e nvidia-driver",
                "docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility <image> nvidia-smi",
            ),
        )


def _missing_finding(
    snapshot: EnvironmentSnapshot, device: DeviceFacts | None, system: str, params: dict[str, object]
) -> Finding:
    evidence = tuple(_common_evidence(snapshot))
    if system == "windows":
        return make_finding(
            "driver.missing.windows",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params=params,
            evidence=evidence,
            commands=(
                "where nvcuda.dll",
                "nvidia-smi",
                "pnputil /enum-devices /class Display",
            ),
        )
    if device is not None and device.wsl:
        return make_finding(
            "driver.missing.wsl",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params=params,
            evidence=(
                *evidence,
                Evidence("/usr/lib/wsl/lib", device.wsl_lib_dir or "absent", source="ls -l /usr/lib/wsl/lib"),
                Evidence("/dev/dxg", "present" if device.dxg_present else "absent", source="ls -l /dev/dxg"),
            ),
            commands=(
                "ls -l /usr/lib/wsl/lib/libcuda.so.1 /dev/dxg",
                "/usr/lib/wsl/lib/nvidia-smi",
                "cat /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig",
                "wsl --update    # in Windows PowerShell, then: wsl --shutdown",
            ),
        )
    if device is not None and device.container:
        return make_finding(
            "driver.missing.container",
            Cause.DRIVER_MISSING,
            Layer.DRIVER,
            Severity.ERROR,
            params=params,
            evidence=evidence,
            commands=container_gpu_commands(device.container),
        )
    return make_finding(
        "driver.missing",
        Cause.DRIVER_MISSING,
        Layer.DRIVER,
        Severity.ERROR,
        params=params,
        evidence=evidence,
        commands=(
            "lspci -nn | grep -i nvidia",
            "sudo ubuntu-drivers list    # Ubuntu: the drivers that fit this GPU",
            f"sudo apt install nvidia-driver-{params['branch']}-server"
            "    # Ubuntu; or: sudo ubuntu-drivers install",
            "sudo reboot",
            "nvidia-smi",
        ),
    )


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


def driver_too_old(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The driver supports an older CUDA than the ONNX Runtime build (or its cudart) needs.

    From the matrix (driver version < the CUDA major's minimum), from the CUDA version the
    driver reports (cuDriverGetVersion / NVML), and from the runtime's own verdict
    (cudaErrorInsufficientDriver, 35). By hand: `nvidia-smi` (header "Driver Version" and
    "CUDA Version") against the build's CUDA major.
    """
    if not driver_present(snapshot):
        return
    driver, native = snapshot.driver, snapshot.native
    system = os_of(snapshot)
    major = required_cuda_major(snapshot)
    requirement = min_driver_for_cuda(major, system) if major else None
    version = driver.driver_version if driver else None
    if version is None and driver is not None:
        version = driver.kernel_module_version
    driver_cuda = (
        driver.cuda_driver_version
        if driver and driver.cuda_driver_version_source == ("nvmlSystemGetCudaDriverVersion_v2")
        else None
    )
    if driver_cuda is None and native is not None:
        driver_cuda = native.cu_driver_version
    if driver_cuda is None and driver is not None:
        driver_cuda = driver.cuda_driver_version
    evidence: list[Evidence] = []
    # A forward-compatibility libcuda (cuda-compat) lets an older kernel driver run a newer
    # CUDA on data-center GPUs: when cuInit works and libcuda reports the major, trust it.
    forward_compat_ok = (
        major is not None
        and native is not None
        and native.cu_init_result == 0
        and (native.cu_driver_version or 0) >= major * 1000
    )
    if (
        major
        and requirement
        and version
        and not forward_compat_ok
        and driver_at_least(version, requirement.minimum) is False
    ):
        evidence.append(
            Evidence(
                "driver version",
                f"{version} < {requirement.minimum} (minimum for CUDA {major} on {system})",
                source="nvidia-smi",
            )
        )
    if major and driver_cuda and driver_cuda // 1000 < major:
        evidence.append(
            Evidence(
                "CUDA supported by the driver",
                f"{cuda_version_text(driver_cuda)} < {major}.0 (what the ONNX Runtime build needs)",
                source='nvidia-smi (header "CUDA Version")',
            )
        )
    if native is not None and native.cu_init_result == CUDA_ERROR_INSUFFICIENT_DRIVER:
        evidence.append(Evidence("cuInit(0)", f"35 ({native.cu_init_error_name})"))
    if native is not None:
        for attempt in native.attempts:
            if attempt.kind != "cudart" or not attempt.loaded:
                continue
            if attempt.version_rc == CUDA_ERROR_INSUFFICIENT_DRIVER:
                evidence.append(
                    Evidence(
                        attempt.path or attempt.name,
                        "cudaRuntimeGetVersion: 35 (cudaErrorInsufficientDriver)",
                    )
                )
            elif (
                attempt.version
                and attempt.driver_version
                and attempt.driver_version // 1000 < attempt.version // 1000
            ):
                evidence.append(
                    Evidence(
                        attempt.path or attempt.name,
                        f"runtime {cuda_version_text(attempt.version)}, driver supports "
                        f"{cuda_version_text(attempt.driver_version)}",
                    )
                )
    if not evidence:
        return
    shown_major = major or _NEWEST_CUDA_MAJOR
    shown_requirement = requirement or min_driver_for_cuda(shown_major, system)
    yield make_finding(
        "driver.too_old",
        Cause.DRIVER_TOO_OLD,
        Layer.DRIVER,
        Severity.ERROR,
        params={
            "driver_version": version or "?",
            "driver_cuda": cuda_version_text(driver_cuda) or "?",
            "cuda_major": shown_major,
            "min_driver": shown_requirement.minimum if shown_requirement else "?",
        },
        evidence=tuple(evidence),
        commands=_upgrade_commands(system, shown_requirement),
    )


def _upgrade_commands(system: str, requirement: DriverRequirement | None) -> tuple[str, ...]:
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


def driver_library_mismatch(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """NVML's "Driver/library version mismatch": the kernel module and the user-space
    libraries come from different driver versions (an upgrade without a reboot).

    By hand: `nvidia-smi` ("Failed to initialize NVML: Driver/library version mismatch"),
    `cat /proc/driver/nvidia/version` against `ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*`.
    """
    driver, native = snapshot.driver, snapshot.native
    nvml = driver is not None and driver.nvml_status == "lib_rm_version_mismatch"
    cuda = native is not None and native.cu_init_result == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
    if not (nvml or cuda):
        return
    evidence: list[Evidence] = []
    if driver is not None and nvml:
        evidence.append(Evidence("NVML", driver.nvml_error or "", source="nvidia-smi"))
    if driver is not None and driver.proc_driver_version:
        evidence.append(
            Evidence("kernel module", driver.proc_driver_version, source="cat /proc/driver/nvidia/version")
        )
    if driver is not None and driver.nvml_library_path:
        evidence.append(Evidence("user-space library", driver.nvml_library_path))
    if native is not None and cuda:
        evidence.append(Evidence("cuInit(0)", f"803 ({native.cu_init_error_name})"))
    library_path = driver.nvml_library_path if driver and driver.nvml_library_path else None
    yield make_finding(
        "driver.library_mismatch",
        Cause.NVML_DRIVER_LIBRARY_MISMATCH,
        Layer.DRIVER,
        Severity.ERROR,
        params={
            "kernel_module_version": (driver.kernel_module_version if driver else None) or "?",
            "library_version": (driver.nvml_library_version if driver else None) or "?",
        },
        evidence=tuple(evidence),
        commands=(
            "cat /proc/driver/nvidia/version",
            f"ls -l {library_path}" if library_path else "ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*",
            "sudo reboot",
            "# without a reboot, when no process uses the GPU:",
            "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia"
            " && sudo modprobe nvidia && sudo modprobe nvidia_uvm",
        ),
    )


def nvml_no_permission(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """NVML may not talk to the driver: the device files' permissions shut this user out.

    By hand: `ls -l /dev/nvidia*` and `id` (the user's groups), then `nvidia-smi` as that user.
    """
    driver = snapshot.driver
    if driver is None or driver.nvml_status != "no_permission":
        return
    nodes = snapshot.device.device_nodes if snapshot.device else ()
    yield make_finding(
        "driver.nvml_no_permission",
        NVML_NO_PERMISSION,
        Layer.DRIVER,
        Severity.ERROR,
        evidence=(
            Evidence("NVML", driver.nvml_error or "no permission", source="nvidia-smi"),
            Evidence("/dev/nvidia*", ", ".join(nodes) or "none", source="ls -l /dev/nvidia*"),
        ),
        commands=(
            "ls -l /dev/nvidia*",
            "id",
            "sudo usermod -aG video <user>    # where the nodes belong to group video; log in again",
        ),
    )


def nvml_failed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """NVML failed for another reason (GPU lost, blocked by cgroups, reset required …).

    By hand: `nvidia-smi`, `sudo dmesg | grep -i -e nvrm -e xid`.
    """
    driver = snapshot.driver
    handled = {"ok", "library_not_found", "driver_not_loaded", "lib_rm_version_mismatch", "no_permission"}
    if driver is None or driver.nvml_status in handled or driver.nvml_status == "pynvml_missing":
        return
    yield make_finding(
        "driver.nvml_failed",
        Cause.UNKNOWN,
        Layer.DRIVER,
        Severity.WARNING,
        params={"status": driver.nvml_status, "error": driver.nvml_error or "?"},
        evidence=(Evidence("NVML", driver.nvml_error or driver.nvml_status, source="nvidia-smi"),),
        commands=("nvidia-smi", "sudo dmesg | grep -i -e nvrm -e xid | tail -n 20"),
    )


def cuinit_failed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """cuInit(0) failed with a code no other check explains (999 with nvidia-uvm missing …).

    By hand: `python3 -c "import ctypes; print(ctypes.CDLL('libcuda.so.1').cuInit(0))"`.
    """
    native = snapshot.native
    if native is None or native.cu_init_result in (None, 0):
        return
    explained = {
        CUDA_ERROR_STUB_LIBRARY,
        CUDA_ERROR_INSUFFICIENT_DRIVER,
        CUDA_ERROR_NO_DEVICE,
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
        CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
    }
    code = native.cu_init_result
    if code == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        yield make_finding(
            "driver.forward_compat_unsupported",
            Cause.DRIVER_TOO_OLD,
            Layer.DRIVER,
            Severity.ERROR,
            params={
                "path": native.libcuda.path if native.libcuda and native.libcuda.path else "libcuda.so.1"
            },
            evidence=(Evidence("cuInit(0)", f"804 ({native.cu_init_error_name})"),),
            commands=("ldconfig -p | grep libcuda", "echo $LD_LIBRARY_PATH", "nvidia-smi"),
        )
        return
    if code in explained:
        return
    yield make_finding(
        "driver.cuinit_failed",
        Cause.UNKNOWN,
        Layer.DRIVER,
        Severity.ERROR,
        params={"code": code, "name": native.cu_init_error_name or "?"},
        evidence=(Evidence("cuInit(0)", f"{code} ({native.cu_init_error_name})"),),
        commands=(
            "lsmod | grep nvidia",
            "ls -l /dev/nvidia-uvm /dev/nvidiactl",
            "sudo modprobe nvidia-uvm    # or: sudo nvidia-modprobe -u -c=0",
            "sudo dmesg | grep -i -e nvrm -e xid | tail -n 20",
        ),
    )


def driver_probe_hung(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The native probe died or hung inside the driver itself (loading libcuda, cuInit).

    By hand: `timeout 20 nvidia-smi; echo $?` and `sudo dmesg | grep -i -e nvrm -e xid`.
    """
    native = snapshot.native
    if native is None or native.ok or not native.crashed_step:
        return
    step = native.crashed_step
    if not any(marker in step for marker in ("libcuda", "nvcuda", "cuInit", "cuDevice", "cuDriver")):
        return
    yield make_finding(
        "driver.probe_hung",
        Cause.UNKNOWN,
        Layer.DRIVER,
        Severity.ERROR,
        params={"step": step, "outcome": native.outcome},
        evidence=(
            Evidence("native probe", native.outcome),
            Evidence("stderr", native.stderr[-500:] or "(empty)"),
        ),
        commands=("timeout 20 nvidia-smi; echo $?", "sudo dmesg | grep -i -e nvrm -e xid | tail -n 20"),
    )


CHECKS = (
    driver_missing,
    driver_too_old,
    driver_library_mismatch,
    nvml_no_permission,
    nvml_failed,
    cuinit_failed,
    driver_probe_hung,
)
