"""Device-layer findings: GPUs hidden by *_VISIBLE_DEVICES, no GPU, a container without the
GPU, and a GPU whose compute capability the build has no kernels for.

Reads snapshot.device, snapshot.driver (NVML's GPUs), snapshot.native (cuInit, the devices
CUDA sees) and snapshot.onnxruntime (version, required CUDA major; either may be None).
"""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.driver_missing import driver_missing_in_container
from fallback_doctor.core.judgement.checks.driver_state import (
    CUDA_ERROR_NO_DEVICE,
    container_evidence,
    container_gpu_commands,
    os_of,
    required_cuda_major,
)
from fallback_doctor.core.judgement.checks.visible_devices import hides_all_gpus_here
from fallback_doctor.core.language.evidence_text import commented, named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.arch_matrix import (
    ArchVerdict,
    arch_support,
    builds_with_sass,
    gpu_family,
    platform_key,
)

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "device.cuda_visible_devices_hides_all",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "device.nvidia_visible_devices_none",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec("device.no_gpu", Cause.NO_GPU_VISIBLE, Layer.DEVICE, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "device.container_without_gpu",
        Cause.CONTAINER_NO_DEVICE,
        Layer.DEVICE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "device.unsupported_arch", Cause.UNSUPPORTED_ARCH, Layer.DEVICE, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "device.arch_ptx_only", Cause.UNSUPPORTED_ARCH, Layer.DEVICE, Severity.INFO, role=Role.CONTEXT
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_HIDDEN_NVIDIA_VISIBLE = ("void", "none", "")

_PROBE_COMMAND = (
    "python3 -c \"import ctypes; c=ctypes.CDLL('libcuda.so.1'); n=ctypes.c_int(); "
    'print(c.cuInit(0), c.cuDeviceGetCount(ctypes.byref(n)), n.value)"'
)
"""By hand, what CUDA itself sees: "0 0 1" is one visible GPU; "100 …" is none."""


def cuda_visible_devices_hides_all(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """CUDA_VISIBLE_DEVICES is empty, -1, or names no GPU that exists: CUDA sees none.

    By hand: `echo "[$CUDA_VISIBLE_DEVICES]"` in the application's environment
    (`systemctl show <service> -p Environment`, `cat /proc/<pid>/environ | tr '\\0' '\\n'`).
    """
    device = snapshot.device
    if device is None or device.cuda_visible_devices is None:
        return
    driver = snapshot.driver
    count = len(driver.gpus) if driver is not None and driver.nvml_status == "ok" else None
    value = device.cuda_visible_devices
    if not hides_all_gpus_here(value, snapshot):
        return
    evidence = [named("CUDA_VISIBLE_DEVICES", repr(value), source="echo $CUDA_VISIBLE_DEVICES")]
    if count is not None:
        evidence.append(said("evidence.gpus_nvml_sees", value=str(count), source="nvidia-smi -L"))
    native = snapshot.native
    if native is not None and native.cu_init_result is not None:
        evidence.append(named("cuInit(0)", f"{native.cu_init_result} ({native.cu_init_error_name})"))
    yield make_finding(
        "device.cuda_visible_devices_hides_all",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        Severity.ERROR,
        params={"value": value, "probe_command": _PROBE_COMMAND},
        evidence=tuple(evidence),
        commands=(
            commented(
                "unset CUDA_VISIBLE_DEVICES", "remedy.comment.or", command="export CUDA_VISIBLE_DEVICES=0"
            ),
            "grep -rn CUDA_VISIBLE_DEVICES /etc/environment /etc/systemd/system ~/.bashrc ~/.profile"
            " 2>/dev/null",
            "systemctl show <service> -p Environment",
        ),
    )


def nvidia_visible_devices_none(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """Inside a container, NVIDIA_VISIBLE_DEVICES=void/none/empty gives it no GPU.

    By hand: `echo "[$NVIDIA_VISIBLE_DEVICES]"` inside the container; `docker inspect <c>`.
    """
    device = snapshot.device
    if device is None or not device.container or device.nvidia_visible_devices is None:
        return
    value = device.nvidia_visible_devices
    if value.strip().lower() not in _HIDDEN_NVIDIA_VISIBLE:
        return
    yield make_finding(
        "device.nvidia_visible_devices_none",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        Severity.ERROR,
        params={"value": value, "container": device.container},
        evidence=(
            named("NVIDIA_VISIBLE_DEVICES", repr(value), source="echo $NVIDIA_VISIBLE_DEVICES"),
            named(
                "/dev/nvidia*",
                ", ".join(device.device_nodes),
                otherwise="evidence.none",
                source="ls -l /dev/nvidia*",
            ),
        ),
        commands=(
            "docker run --rm --gpus all -e NVIDIA_VISIBLE_DEVICES=all <image> nvidia-smi",
            "docker inspect <container> --format '{{.Config.Env}}' | tr ' ' '\\n' | grep NVIDIA_VISIBLE",
        ),
    )


def no_gpu(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The driver works but reports no GPU: NVML counts 0, or cuInit says CUDA_ERROR_NO_DEVICE
    (100) without CUDA_VISIBLE_DEVICES explaining it.

    By hand: `nvidia-smi -L`, and the cuInit one-liner in the remediation.
    """
    device, driver, native = snapshot.device, snapshot.driver, snapshot.native
    visible = device.cuda_visible_devices if device is not None else None
    if visible is not None and hides_all_gpus_here(visible, snapshot):
        return  # explained by cuda_visible_devices_hides_all
    evidence: list[Evidence] = []
    if driver is not None and driver.nvml_status == "ok" and not driver.gpus:
        evidence.append(said("evidence.gpus_nvml_sees", value="0", source="nvidia-smi -L"))
    if native is not None and native.cu_init_result == CUDA_ERROR_NO_DEVICE:
        evidence.append(named("cuInit(0)", f"100 ({native.cu_init_error_name or 'CUDA_ERROR_NO_DEVICE'})"))
    elif native is not None and native.cu_init_result == 0 and native.cu_device_count == 0:
        evidence.append(named("cuDeviceGetCount", "0"))
    if not evidence:
        return
    if device is not None and device.pci_nvidia_devices is not None:
        evidence.append(
            said(
                "evidence.pci_gpus",
                value=", ".join(device.pci_nvidia_devices),
                otherwise="evidence.none",
                source="lspci -d 10de: -nn",
            )
        )
    yield make_finding(
        "device.no_gpu",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        Severity.ERROR,
        params={"probe_command": _PROBE_COMMAND},
        evidence=tuple(evidence),
        commands=(
            "nvidia-smi -L",
            "lspci -nn | grep -i nvidia",
            'echo "[$CUDA_VISIBLE_DEVICES] [$NVIDIA_VISIBLE_DEVICES]"',
            "sudo dmesg | grep -i -e nvrm -e xid | tail -n 20",
        ),
    )


def container_without_gpu(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A container started without GPU access: no /dev/nvidia* nodes inside it.

    By hand: `ls -l /dev/nvidia*` inside the container (WSL-based containers use /dev/dxg).
    """
    device = snapshot.device
    if device is None or not device.container or os_of(snapshot) == "windows":
        return
    if device.device_nodes or device.dxg_present:
        return
    if driver_missing_in_container(snapshot):
        return  # one cause: driver.missing.container carries the device evidence
    evidence = [
        container_evidence(device),
        said("evidence.name", "evidence.none", source="ls -l /dev/nvidia*", name="/dev/nvidia*"),
    ]
    if device.nvidia_visible_devices is not None:
        evidence.append(named("NVIDIA_VISIBLE_DEVICES", repr(device.nvidia_visible_devices)))
    yield make_finding(
        "device.container_without_gpu",
        Cause.CONTAINER_NO_DEVICE,
        Layer.DEVICE,
        Severity.ERROR,
        params={"container": device.container},
        evidence=tuple(evidence),
        commands=container_gpu_commands(device.container),
    )


def _arch_evidence(name: str, cc_text: str, verdict: ArchVerdict) -> tuple[Evidence, ...]:
    """The GPU and its kernel images: `nvidia-smi --query-gpu=name,compute_cap --format=csv`."""
    return (
        said(
            "evidence.name",
            "evidence.gpu_cc",
            source="nvidia-smi --query-gpu=name,compute_cap --format=csv",
            name="GPU",
            gpu=name,
            cc=cc_text,
        ),
        said(
            "evidence.kernel_images",
            "evidence.as_said" if verdict.words else None,
            value=verdict.reason,
            source=", ".join(verdict.source[:1]) or None,
            said=verdict.words or verdict.reason,
        ),
    )


def unsupported_arch(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A GPU whose compute capability the CUDA major or the ONNX Runtime build has no kernels
    for (cudaErrorNoKernelImageForDevice, 209, at the first Run()).

    By hand: `nvidia-smi --query-gpu=name,compute_cap --format=csv`, and
    `cuobjdump --list-elf libonnxruntime_providers_cuda.so | grep -o 'sm_[0-9]*a\\?' | sort -u`.
    """
    major = required_cuda_major(snapshot)
    if major is None:
        return
    ort_version = snapshot.onnxruntime.version if snapshot.onnxruntime is not None else None
    platform = platform_key(
        snapshot.platform.system
        if snapshot.platform
        else ("Windows" if os_of(snapshot) == "windows" else "Linux"),
        snapshot.platform.machine if snapshot.platform else None,
    )
    driver_cuda = None
    if snapshot.driver is not None and snapshot.driver.cuda_driver_version:
        driver_cuda = snapshot.driver.cuda_driver_version
    elif snapshot.native is not None:
        driver_cuda = snapshot.native.cu_driver_version
    seen: set[tuple[int, int]] = set()
    for name, cc in _gpus_with_cc(snapshot):
        if cc in seen:
            continue
        seen.add(cc)
        verdict = arch_support(cc, ort_version, major, platform=platform, driver_cuda_version=driver_cuda)
        cc_text = f"{cc[0]}.{cc[1]}"
        params = {
            "gpu": name,
            "cc": cc_text,
            "family": gpu_family(cc) or "?",
            "ort_version": ort_version or "?",
            "cuda_major": major,
            "kernel": verdict.kernel or "-",
            "ptx_cuda": verdict.ptx_needs_cuda or "?",
        }
        evidence = _arch_evidence(name, cc_text, verdict)
        if verdict.supported is False:
            suggestions = builds_with_sass(cc, platform)
            commands = (
                *(
                    f'pip install "onnxruntime-gpu=={item.ort_max}.*"'
                    f"    # CUDA {item.cuda_major} build, has {item.kernel}"
                    for item in suggestions[:2]
                ),
                "nvidia-smi --query-gpu=name,compute_cap --format=csv",
            )
            yield make_finding(
                "device.unsupported_arch",
                Cause.UNSUPPORTED_ARCH,
                Layer.DEVICE,
                Severity.ERROR,
                params=params,
                evidence=evidence,
                commands=commands,
            )
        elif verdict.image == "ptx_jit":
            yield make_finding(
                "device.arch_ptx_only",
                Cause.UNSUPPORTED_ARCH,
                Layer.DEVICE,
                Severity.INFO,
                params=params,
                evidence=evidence,
                commands=("nvidia-smi    # the header's \"CUDA Version\" must be at least the PTX's",),
            )


def _gpus_with_cc(snapshot: EnvironmentSnapshot) -> list[tuple[str, tuple[int, int]]]:
    found: list[tuple[str, tuple[int, int]]] = []
    if snapshot.driver is not None:
        found += [
            (gpu.name, gpu.compute_capability) for gpu in snapshot.driver.gpus if gpu.compute_capability
        ]
    if not found and snapshot.native is not None:
        found += [(name, (major, minor)) for name, major, minor in snapshot.native.cu_devices if major >= 0]
    return found


CHECKS = (
    cuda_visible_devices_hides_all,
    nvidia_visible_devices_none,
    no_gpu,
    container_without_gpu,
    unsupported_arch,
)
