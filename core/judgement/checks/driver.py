"""Driver-layer findings: no driver, driver too old, NVML/kernel mismatch, no permission, cuInit.

Reads snapshot.driver (NVML, /proc), snapshot.native (libcuda and cuInit in the child),
snapshot.device (container, WSL) and snapshot.onnxruntime.required_cuda_major.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fallback_doctor.core.judgement.checks.driver_missing import driver_missing
from fallback_doctor.core.judgement.checks.driver_state import (
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
    CUDA_ERROR_INSUFFICIENT_DRIVER,
    CUDA_ERROR_NO_DEVICE,
    CUDA_ERROR_STUB_LIBRARY,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
    NEWEST_CUDA_MAJOR,
    driver_present,
    nvml_evidence,
    os_of,
    required_cuda_major,
    upgrade_commands,
)
from fallback_doctor.core.language.evidence_text import commented, named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.native import NativeFacts
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.driver_matrix import (
    DriverRequirement,
    cuda_version_text,
    driver_at_least,
    min_driver_for_cuda,
)

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("driver.too_old", Cause.DRIVER_TOO_OLD, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "driver.forward_compat_unsupported",
        Cause.DRIVER_TOO_OLD,
        Layer.DRIVER,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "driver.library_mismatch",
        Cause.NVML_DRIVER_LIBRARY_MISMATCH,
        Layer.DRIVER,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "driver.nvml_no_permission", Cause.NVML_NO_PERMISSION, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("driver.nvml_failed", Cause.UNKNOWN, Layer.DRIVER, Severity.WARNING, role=Role.CAUSE),
    FindingSpec("driver.cuinit_failed", Cause.UNKNOWN, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("driver.probe_hung", Cause.UNKNOWN, Layer.DRIVER, Severity.ERROR, role=Role.CAUSE),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


# driver_present is imported from here by the log check.
__all__ = ["CHECKS", "driver_present"]


def driver_too_old(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The driver supports an older CUDA than the ONNX Runtime build (or its cudart) needs.

    From the matrix (driver version < the CUDA major's minimum), from the CUDA version the
    driver reports (cuDriverGetVersion / NVML), and from the runtime's own verdict
    (cudaErrorInsufficientDriver, 35). By hand: `nvidia-smi` (header "Driver Version" and
    "CUDA Version") against the build's CUDA major.
    """
    if not driver_present(snapshot):
        return
    age = _driver_age(snapshot)
    evidence = [line for source in _TOO_OLD_EVIDENCE for line in source(age)]
    if not evidence:
        return
    shown_major = age.major or NEWEST_CUDA_MAJOR
    shown_requirement = age.requirement or min_driver_for_cuda(shown_major, age.system)
    yield make_finding(
        "driver.too_old",
        Cause.DRIVER_TOO_OLD,
        Layer.DRIVER,
        Severity.ERROR,
        params={
            "driver_version": age.version or "?",
            "driver_cuda": cuda_version_text(age.driver_cuda) or "?",
            "cuda_major": shown_major,
            "min_driver": shown_requirement.minimum if shown_requirement else "?",
        },
        evidence=tuple(evidence),
        commands=upgrade_commands(age.system, shown_requirement),
    )


@dataclass(frozen=True)
class _DriverAge:
    """What says how new the driver is, against what the build needs."""

    system: str
    major: int | None
    """The CUDA major the build (or its cudart) needs."""
    requirement: DriverRequirement | None
    version: str | None
    driver_cuda: int | None
    """The CUDA version the driver supports (12040 for 12.4)."""
    native: NativeFacts | None


def _driver_age(snapshot: EnvironmentSnapshot) -> _DriverAge:
    driver, native = snapshot.driver, snapshot.native
    system = os_of(snapshot)
    major = required_cuda_major(snapshot)
    version = driver.driver_version if driver else None
    if version is None and driver is not None:
        version = driver.kernel_module_version
    # NVML's v2 call is the driver's own answer; then libcuda's cuDriverGetVersion; then NVML's v1.
    driver_cuda = (
        driver.cuda_driver_version
        if driver and driver.cuda_driver_version_source == "nvmlSystemGetCudaDriverVersion_v2"
        else None
    )
    if driver_cuda is None and native is not None:
        driver_cuda = native.cu_driver_version
    if driver_cuda is None and driver is not None:
        driver_cuda = driver.cuda_driver_version
    requirement = min_driver_for_cuda(major, system) if major else None
    return _DriverAge(system, major, requirement, version, driver_cuda, native)


def _below_matrix_minimum(age: _DriverAge) -> Iterator[Evidence]:
    """The driver version is below the CUDA major's minimum (resources/compat/cuda_driver.json)."""
    native, major, requirement = age.native, age.major, age.requirement
    # A forward-compatibility libcuda (cuda-compat) lets an older kernel driver run a newer
    # CUDA on data-center GPUs: when cuInit works and libcuda reports the major, trust it.
    forward_compat_ok = (
        major is not None
        and native is not None
        and native.cu_init_result == 0
        and (native.cu_driver_version or 0) >= major * 1000
    )
    if not (major and requirement and age.version) or forward_compat_ok:
        return
    if driver_at_least(age.version, requirement.minimum) is False:
        yield said(
            "evidence.driver_version",
            "evidence.driver_below_minimum",
            source="nvidia-smi",
            version=age.version,
            minimum=requirement.minimum,
            major=major,
            system=age.system,
        )


def _reported_cuda_too_old(age: _DriverAge) -> Iterator[Evidence]:
    """The CUDA version the driver reports is below the build's major."""
    if age.major and age.driver_cuda and age.driver_cuda // 1000 < age.major:
        yield said(
            "evidence.driver_cuda",
            "evidence.driver_cuda_below_build",
            source_key="evidence.source.smi_cuda_header",
            version=cuda_version_text(age.driver_cuda),
            major=age.major,
        )


def _cuinit_insufficient(age: _DriverAge) -> Iterator[Evidence]:
    """cuInit(0) itself said cudaErrorInsufficientDriver (35)."""
    if age.native is not None and age.native.cu_init_result == CUDA_ERROR_INSUFFICIENT_DRIVER:
        yield named("cuInit(0)", f"35 ({age.native.cu_init_error_name})")


def _cudart_insufficient(age: _DriverAge) -> Iterator[Evidence]:
    """A loaded cudart said 35, or reports a runtime newer than the driver supports."""
    if age.native is None:
        return
    for attempt in age.native.attempts:
        if attempt.kind != "cudart" or not attempt.loaded:
            continue
        if attempt.version_rc == CUDA_ERROR_INSUFFICIENT_DRIVER:
            yield named(
                attempt.path or attempt.name, "cudaRuntimeGetVersion: 35 (cudaErrorInsufficientDriver)"
            )
        elif (
            attempt.version
            and attempt.driver_version
            and attempt.driver_version // 1000 < attempt.version // 1000
        ):
            yield said(
                "evidence.name",
                "evidence.runtime_driver_supports",
                name=attempt.path or attempt.name,
                runtime=cuda_version_text(attempt.version),
                driver=cuda_version_text(attempt.driver_version),
            )


_TOO_OLD_EVIDENCE: tuple[Callable[[_DriverAge], Iterator[Evidence]], ...] = (
    _below_matrix_minimum,
    _reported_cuda_too_old,
    _cuinit_insufficient,
    _cudart_insufficient,
)
"""Each way of knowing the driver is too old; any one of them makes the finding, all show."""


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
        evidence.append(nvml_evidence(driver))
    if driver is not None and driver.proc_driver_version:
        evidence.append(
            said(
                "evidence.kernel_module",
                value=driver.proc_driver_version,
                source="cat /proc/driver/nvidia/version",
            )
        )
    if driver is not None and driver.nvml_library_path:
        evidence.append(said("evidence.user_space_library", value=driver.nvml_library_path))
    if native is not None and cuda:
        evidence.append(named("cuInit(0)", f"803 ({native.cu_init_error_name})"))
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
            commented("", "remedy.comment.without_reboot", gap=""),
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
        Cause.NVML_NO_PERMISSION,
        Layer.DRIVER,
        Severity.ERROR,
        evidence=(
            nvml_evidence(driver, otherwise="evidence.no_permission"),
            said(
                "evidence.name",
                None if nodes else "evidence.none",
                value=", ".join(nodes),
                source="ls -l /dev/nvidia*",
                name="/dev/nvidia*",
            ),
        ),
        commands=(
            "ls -l /dev/nvidia*",
            "id",
            commented("sudo usermod -aG video <user>", "remedy.comment.group_video"),
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
        evidence=(nvml_evidence(driver),),
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
            evidence=(named("cuInit(0)", f"804 ({native.cu_init_error_name})"),),
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
        evidence=(named("cuInit(0)", f"{code} ({native.cu_init_error_name})"),),
        commands=(
            "lsmod | grep nvidia",
            "ls -l /dev/nvidia-uvm /dev/nvidiactl",
            commented(
                "sudo modprobe nvidia-uvm", "remedy.comment.or", command="sudo nvidia-modprobe -u -c=0"
            ),
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
            said("evidence.native_probe", value=native.outcome),
            said(
                "evidence.name",
                None if native.stderr else "evidence.empty",
                value=native.stderr[-500:],
                name="stderr",
            ),
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
