"""No usable driver: no NVIDIA driver at all, its kernel module not loaded, libcuda missing
beside a working NVML, or the CUDA toolkit's stub libcuda taken instead of the driver's.
"""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.driver_state import (
    CUDA_ERROR_STUB_LIBRARY,
    common_evidence,
    container_gpu_commands,
    libcuda_loaded,
    os_of,
    requirement_for,
)
from fallback_doctor.core.language.evidence_text import commented, named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.device import DeviceFacts
from fallback_doctor.core.model.facts.driver import DriverFacts
from fallback_doctor.core.model.facts.native import NativeFacts
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Commented, Evidence, Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("driver.missing", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "driver.missing.windows", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("driver.missing.wsl", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "driver.missing.container", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("driver.stub_library", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("driver.not_loaded", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "driver.libcuda_missing", Cause.DRIVER_MISSING, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


def driver_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """No usable driver: NVML's library and libcuda both missing, the kernel module not
    loaded, libcuda missing beside a working NVML, or the toolkit's stub libcuda taken.

    By hand: `nvidia-smi`; `ldconfig -p | grep -e libcuda.so.1 -e libnvidia-ml`;
    `cat /proc/driver/nvidia/version`; `lsmod | grep nvidia`.
    """
    driver, native, device = snapshot.driver, snapshot.native, snapshot.device
    system = os_of(snapshot)
    major, requirement = requirement_for(snapshot, system)
    params = {
        "cuda_major": major,
        "min_driver": requirement.minimum if requirement else "?",
        "branch": requirement.branch if requirement else "580",
        "container": device.container if device and device.container else "container",
    }
    libcuda = libcuda_loaded(native)
    if native is not None and native.cu_init_result == CUDA_ERROR_STUB_LIBRARY:
        yield _stub_library(native)
    elif driver is not None and driver.nvml_status == "driver_not_loaded" and libcuda is not True:
        yield _not_loaded(snapshot, params)
    elif no_driver_at_all(snapshot):
        yield _missing_finding(snapshot, device, system, params)
    elif libcuda is False and driver is not None and driver.nvml_status == "ok":
        yield _libcuda_missing(snapshot, driver, native, device)


def no_driver_at_all(snapshot: EnvironmentSnapshot) -> bool:
    """Neither NVML's library nor libcuda loads (and it is not the stub or an unloaded module)."""
    driver, native = snapshot.driver, snapshot.native
    if native is not None and native.cu_init_result == CUDA_ERROR_STUB_LIBRARY:
        return False
    libcuda = libcuda_loaded(native)
    if driver is not None and driver.nvml_status == "driver_not_loaded" and libcuda is not True:
        return False
    nvml_missing = driver is not None and driver.nvml_status == "library_not_found"
    nvml_unknown = driver is None or driver.nvml_status == "pynvml_missing"
    return (nvml_missing and libcuda is not True) or (nvml_unknown and libcuda is False)


def driver_missing_in_container(snapshot: EnvironmentSnapshot) -> bool:
    """Whether driver.missing.container is the finding: no driver, inside a Linux container.

    A container started without GPU access has neither the driver's libraries nor the device
    files: one cause, so device.container_without_gpu leaves it to this finding (its device
    evidence is added there)."""
    device = snapshot.device
    if device is None or not device.container or device.wsl or os_of(snapshot) == "windows":
        return False
    return no_driver_at_all(snapshot)


def _stub_library(native: NativeFacts) -> Finding:
    """The CUDA toolkit's stub libcuda (cuInit: 34) was loaded instead of the driver's."""
    path = native.libcuda.path if native.libcuda and native.libcuda.path else "libcuda.so.1"
    return make_finding(
        "driver.stub_library",
        Cause.DRIVER_MISSING,
        Layer.DRIVER,
        Severity.ERROR,
        params={"path": path},
        evidence=(
            named("cuInit(0)", f"{CUDA_ERROR_STUB_LIBRARY} ({native.cu_init_error_name})"),
            said("evidence.libcuda_loaded_from", value=path, source_id="evidence.source.native_dlopen"),
        ),
        commands=(
            "ldconfig -p | grep libcuda",
            "echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep -n stubs",
            f"ls -l {path}",
        ),
    )


def _not_loaded(snapshot: EnvironmentSnapshot, params: dict[str, object]) -> Finding:
    """The driver is installed but its kernel module is not loaded."""
    return make_finding(
        "driver.not_loaded",
        Cause.DRIVER_MISSING,
        Layer.DRIVER,
        Severity.ERROR,
        params=params,
        evidence=tuple(common_evidence(snapshot)),
        commands=(
            "lsmod | grep nvidia",
            "sudo modprobe nvidia",
            "sudo dmesg | grep -i -e nvrm -e nvidia | tail -n 20",
            "mokutil --sb-state",
            "sudo reboot",
        ),
    )


def _libcuda_missing(
    snapshot: EnvironmentSnapshot, driver: DriverFacts, native: NativeFacts | None, device: DeviceFacts | None
) -> Finding:
    """NVML works but libcuda does not load (a container without the compute capability …)."""
    error = native.libcuda.error if native is not None and native.libcuda else None
    capabilities = device.nvidia_driver_capabilities if device is not None else None
    extra = [named("NVIDIA_DRIVER_CAPABILITIES", capabilities)] if capabilities is not None else []
    return make_finding(
        "driver.libcuda_missing",
        Cause.DRIVER_MISSING,
        Layer.DRIVER,
        Severity.ERROR,
        params={
            "driver_version": driver.driver_version or "?",
            "libcuda_error": error or driver.libcuda_error or "?",
            "capabilities": capabilities,
        },
        evidence=tuple(common_evidence(snapshot) + extra),
        commands=(
            "ldconfig -p | grep -e libcuda.so.1 -e libnvidia-ml.so.1",
            "dpkg -l | grep -e libnvidia-compute -e nvidia-driver",
            "docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility <image> nvidia-smi",
        ),
    )


def _missing_finding(
    snapshot: EnvironmentSnapshot, device: DeviceFacts | None, system: str, params: dict[str, object]
) -> Finding:
    """No NVIDIA driver at all: the same finding, worded and fixed for where the tool runs."""
    finding_id, extra, commands = _where_missing(device, system, params)
    return make_finding(
        finding_id,
        Cause.DRIVER_MISSING,
        Layer.DRIVER,
        Severity.ERROR,
        params=params,
        evidence=(*common_evidence(snapshot), *extra),
        commands=commands,
    )


_WINDOWS_COMMANDS = ("where nvcuda.dll", "nvidia-smi", "pnputil /enum-devices /class Display")
_WSL_COMMANDS = (
    "ls -l /usr/lib/wsl/lib/libcuda.so.1 /dev/dxg",
    "/usr/lib/wsl/lib/nvidia-smi",
    "cat /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig",
    commented("wsl --update", "remedy.comment.windows_then", command="wsl --shutdown"),
)


def _where_missing(
    device: DeviceFacts | None, system: str, params: dict[str, object]
) -> tuple[str, tuple[Evidence, ...], tuple[str | Commented, ...]]:
    """Windows, WSL, a container or a Linux host: the finding id, its own evidence, the commands."""
    if system == "windows":
        return "driver.missing.windows", (), _WINDOWS_COMMANDS
    if device is not None and device.wsl:
        wsl_evidence = (
            named(
                "/usr/lib/wsl/lib",
                device.wsl_lib_dir or "",
                otherwise="evidence.absent",
                source="ls -l /usr/lib/wsl/lib",
            ),
            said(
                "evidence.name",
                "evidence.present" if device.dxg_present else "evidence.absent",
                source="ls -l /dev/dxg",
                name="/dev/dxg",
            ),
        )
        return "driver.missing.wsl", wsl_evidence, _WSL_COMMANDS
    if device is not None and device.container:
        nodes = ", ".join(device.device_nodes)
        device_evidence: tuple[Evidence, ...] = (
            named("/dev/nvidia*", nodes, otherwise="evidence.none", source="ls -l /dev/nvidia*"),
        )
        if device.nvidia_visible_devices is not None:
            device_evidence += (named("NVIDIA_VISIBLE_DEVICES", repr(device.nvidia_visible_devices)),)
        return "driver.missing.container", device_evidence, container_gpu_commands(device.container)
    linux_commands = (
        "lspci -nn | grep -i nvidia",
        commented("sudo ubuntu-drivers list", "remedy.comment.ubuntu_drivers"),
        commented(
            f"sudo apt install nvidia-driver-{params['branch']}-server",
            "remedy.comment.ubuntu_or",
            command="sudo ubuntu-drivers install",
        ),
        "sudo reboot",
        "nvidia-smi",
    )
    return "driver.missing", (), linux_commands
