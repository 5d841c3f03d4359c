"""The running server: what it really loaded, the environment it really has, whether it uses the GPU.

These findings read ``snapshot.process`` (core/readers/collect/process.py) and, for what was asked
for, ``snapshot.target``. By hand: ``grep -E 'onnxruntime|cudart|cudnn' /proc/PID/maps``,
``sudo tr '\\0' '\\n' < /proc/PID/environ``, ``systemctl show -p Environment UNIT``,
``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.visible_devices import hides_all_gpus_here
from fallback_doctor.core.language.evidence_text import named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.process import MappedLibrary, ProcessFacts
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("process.not_found", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.INFO, role=Role.CONTEXT),
    FindingSpec(
        "process.read_denied", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.INFO, role=Role.CONTEXT
    ),
    FindingSpec(
        "process.gpu_hidden",
        Cause.NO_GPU_VISIBLE,
        Layer.DEVICE,
        (Severity.ERROR, Severity.INFO),
        role=Role.CAUSE,
    ),
    FindingSpec(
        "process.container_without_gpu",
        Cause.CONTAINER_NO_DEVICE,
        Layer.DEVICE,
        (Severity.ERROR, Severity.INFO),
        role=Role.CAUSE,
    ),
    FindingSpec("process.environment_differs", Cause.UNKNOWN, Layer.LOADER, Severity.INFO, role=Role.CAUSE),
    FindingSpec(
        "process.sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, Severity.WARNING, role=Role.CAUSE
    ),
    FindingSpec(
        "process.shell_sudo_dropped_ld_path", Cause.UNKNOWN, Layer.LOADER, Severity.INFO, role=Role.CAUSE
    ),
    FindingSpec("process.no_onnxruntime", Cause.UNKNOWN, Layer.PACKAGE, Severity.INFO, role=Role.CONTEXT),
    FindingSpec(
        "process.cpu_only_build",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        (Severity.ERROR, Severity.INFO),
        role=Role.CAUSE,
    ),
    FindingSpec(
        "process.cuda_provider_not_loaded",
        Cause.UNKNOWN,
        Layer.LOADER,
        (Severity.ERROR, Severity.INFO),
        role=Role.CONTEXT,
    ),
    FindingSpec("process.no_gpu_memory", Cause.UNKNOWN, Layer.DEVICE, Severity.WARNING, role=Role.CONTEXT),
    FindingSpec("process.uses_gpu", Cause.UNKNOWN, Layer.DEVICE, Severity.INFO, role=Role.CONTEXT),
    FindingSpec(
        "process.cuda_major_mapped", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "process.cudnn_major_mapped", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("process.libraries_replaced", Cause.UNKNOWN, Layer.LOADER, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("process.mapped_libraries", Cause.UNKNOWN, Layer.LOADER, Severity.INFO, role=Role.CONTEXT),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


GPU_PROVIDERS = frozenset({"cuda", "tensorrt", "gpu", "trt", "nv_tensorrt_rtx"})
"""Values of the configuration's provider that ask for an NVIDIA GPU."""

IMPORTANT_VARIABLES: tuple[str, ...] = (
    "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDNN_HOME",
    "ORT_CUDA_HOME",
)
"""The variables whose difference between the shell and the server changes what loads or is seen."""

_NVIDIA_HIDING = frozenset({"-1", "", "none", "nodevfiles", "void"})
"""NVIDIA_VISIBLE_DEVICES values that give a container no GPU (the container runtime reads it;
CUDA_VISIBLE_DEVICES is checks/visible_devices.py's rule)."""

_CUDA_FAMILIES = ("cudart", "cublas", "cublasLt")


def _gpu_requested(snapshot: EnvironmentSnapshot) -> bool | None:
    """True/False from the target's configuration; None when the target does not say."""
    target = snapshot.target
    if target is None or target.requested_provider is None:
        return None
    return target.requested_provider.lower() in GPU_PROVIDERS


def _pid_evidence(process: ProcessFacts) -> Evidence:
    command = " ".join(process.cmdline)[:300] or process.executable or "?"
    return said(
        "evidence.process",
        "evidence.pid_command",
        source=process.executable,
        pid=process.pid,
        command=command,
    )


def _lib_evidence(process: ProcessFacts, libraries: tuple[MappedLibrary, ...]) -> tuple[Evidence, ...]:
    return tuple(
        said(
            "evidence.mapped",
            "evidence.deleted_since_loaded" if lib.deleted else None,
            value=lib.path,
            source=f"/proc/{process.pid}/maps",
            path=lib.path,
        )
        for lib in libraries
    )


def check_read_limits(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """Reads of the server's files that the system refused, and the command that allows them.

    By hand: ``ls -l /proc/PID/environ`` (owned by the service's user, mode 0400).
    """
    process = snapshot.process
    if process is None:
        return
    if process.error:
        yield make_finding(
            "process.not_found",
            Cause.COLLECTION_FAILED,
            Layer.PROBE,
            Severity.INFO,
            params={"pid": process.pid, "error": process.error},
            evidence=(said("evidence.process", value=str(process.pid)),),
            commands=(f"ps -p {process.pid} -o pid,user,cmd",),
        )
        return
    if not process.read_limits:
        return
    what = sorted({limit.what for limit in process.read_limits})
    evidence = tuple(
        said("evidence.could_not_read", value=limit.error, source=limit.path, what=limit.what)
        for limit in process.read_limits
    )
    yield make_finding(
        "process.read_denied",
        Cause.COLLECTION_FAILED,
        Layer.PROBE,
        Severity.INFO,
        params={
            "pid": process.pid,
            "what": what,
            "user": process.user or "?",
            "allow": process.read_limits[0].allow,
        },
        evidence=(_pid_evidence(process), *evidence),
        commands=tuple(process.read_limits[0].allow.split(" (or) ")),
    )


def check_gpu_hidden(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The server's own environment hides every GPU (CUDA_VISIBLE_DEVICES=-1 or empty, …).

    By hand: ``sudo tr '\\0' '\\n' < /proc/PID/environ | grep VISIBLE_DEVICES``.
    """
    process = snapshot.process
    if process is None or process.error:
        return
    env = process.effective_environment()
    if env is None:
        return
    for variable in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
        value = env.get(variable)
        if value is None:
            continue
        if variable == "CUDA_VISIBLE_DEVICES" and not hides_all_gpus_here(value, snapshot):
            continue
        if variable == "NVIDIA_VISIBLE_DEVICES" and value.strip().lower() not in _NVIDIA_HIDING:
            continue
        if variable == "NVIDIA_VISIBLE_DEVICES" and process.container is None:
            continue  # only the container runtime reads it
        source = "/proc/PID/environ" if process.environment is not None else "unit / container"
        yield make_finding(
            "process.gpu_hidden",
            Cause.NO_GPU_VISIBLE,
            Layer.DEVICE,
            Severity.ERROR if _gpu_requested(snapshot) is not False else Severity.INFO,
            params={
                "pid": process.pid,
                "variable": variable,
                "value": value or "(empty)",
                "unit": process.unit.name if process.unit else "the service",
            },
            evidence=(_pid_evidence(process), named(variable, repr(value), source=source)),
            commands=(f"systemctl edit {process.unit.name}" if process.unit else f"unset {variable}",),
        )
        return


def check_environment_differs(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The server's environment differs from the technician's shell in what changes loading.

    By hand: ``diff <(sudo tr '\\0' '\\n' < /proc/PID/environ | sort) <(env | sort)``.
    """
    process = snapshot.process
    if process is None or process.error:
        return
    env = process.effective_environment()
    if env is None:
        return
    shell = process.shell_environment
    differences: list[Evidence] = []
    names: list[str] = []
    for variable in IMPORTANT_VARIABLES:
        server_value = env.get(variable)
        shell_value = shell.get(variable)
        if server_value == shell_value:
            continue
        names.append(variable)
        differences.append(
            said(
                "evidence.name",
                "evidence.server_shell",
                name=variable,
                in_server=server_value if server_value is not None else Words("evidence.not_set"),
                in_shell=shell_value if shell_value is not None else Words("evidence.not_set"),
            )
        )
    if names:
        yield make_finding(
            "process.environment_differs",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.INFO,
            params={"pid": process.pid, "variables": names},
            evidence=(_pid_evidence(process), *differences),
        )
    server_path = env.get("LD_LIBRARY_PATH")
    shell_path = shell.get("LD_LIBRARY_PATH")
    if process.started_with_sudo and not server_path and shell_path:
        yield make_finding(
            "process.sudo_dropped_ld_path",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.WARNING,
            params={"pid": process.pid, "shell_path": shell_path},
            evidence=(
                _pid_evidence(process),
                said("evidence.name", "evidence.not_set_in_server", name="LD_LIBRARY_PATH"),
                said("evidence.ld_path_shell", value=shell_path),
            ),
            commands=(f'sudo env LD_LIBRARY_PATH="{shell_path}" <command>',),
        )
    elif process.shell_via_sudo and server_path and not shell_path:
        yield make_finding(
            "process.shell_sudo_dropped_ld_path",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.INFO,
            params={"pid": process.pid, "server_path": server_path},
            evidence=(_pid_evidence(process), said("evidence.ld_path_server", value=server_path)),
        )


def _required(snapshot: EnvironmentSnapshot, process: ProcessFacts) -> tuple[int | None, int | None]:
    cuda = process.needed_cuda_major
    cudnn = process.needed_cudnn_major
    ort = snapshot.onnxruntime
    if ort is not None:
        cuda = cuda or ort.required_cuda_major
        cudnn = cudnn or getattr(ort, "required_cudnn_major", None)
    log = snapshot.log
    if log is not None:
        cuda = cuda or log.required_cuda_major
        cudnn = cudnn or log.required_cudnn_major
    return cuda, cudnn


def check_loaded_libraries(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """Which CUDA provider, libcudart and libcudnn the server really mapped, and of which major.

    By hand: ``grep -E 'providers_cuda|cudart|cublas|cudnn' /proc/PID/maps``.
    """
    process = snapshot.process
    if process is None or process.error or not process.maps_read:
        return
    requested = _gpu_requested(snapshot)
    if not process.onnxruntime_mapped:
        yield make_finding(
            "process.no_onnxruntime",
            Cause.UNKNOWN,
            Layer.PACKAGE,
            Severity.INFO,
            params={"pid": process.pid},
            evidence=(_pid_evidence(process),),
        )
        return
    ort_libs = tuple(lib for lib in process.mapped_libraries if lib.family.startswith("ort_"))
    gpu_libs = tuple(lib for lib in process.mapped_libraries if not lib.family.startswith("ort_"))
    from fallback_doctor.core.judgement.checks.process_request import gpu_never_asked

    if gpu_never_asked(snapshot) is None:  # else: nothing stops the provider; it was never asked for
        yield from _provider_and_memory(process, ort_libs, requested)

    need_cuda, need_cudnn = _required(snapshot, process)
    yield from _major_findings(process, need_cuda, need_cudnn)
    deleted = tuple(lib for lib in process.mapped_libraries if lib.deleted)
    if deleted:
        yield make_finding(
            "process.libraries_replaced",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.INFO,
            params={"pid": process.pid, "count": len(deleted)},
            evidence=(_pid_evidence(process), *_lib_evidence(process, deleted)),
        )
    if gpu_libs or process.cuda_provider_mapped:
        yield make_finding(
            "process.mapped_libraries",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.INFO,
            params={"pid": process.pid, "names": [lib.name for lib in (*ort_libs, *gpu_libs)]},
            evidence=(_pid_evidence(process), *_lib_evidence(process, (*ort_libs, *gpu_libs))),
        )


def _provider_and_memory(
    process: ProcessFacts, ort_libs: tuple[MappedLibrary, ...], requested: bool | None
) -> Iterator[Finding]:
    """Whether the CUDA provider is mapped, and whether the server holds GPU memory."""
    memory = process.gpu_memory
    memory_evidence = said(
        "evidence.gpu_memory_nvml",
        {"holds": "evidence.holds_mib", "none": "evidence.not_in_nvml_list"}.get(
            memory.status, "evidence.unknown"
        ),
        mib=memory.used_mib,
        gpus=", ".join(map(str, memory.gpu_indices)),
        reason=memory.reason or "",
    )
    if not process.cuda_provider_mapped:
        on_disk = process.provider_library_on_disk
        if on_disk is None:
            yield make_finding(
                "process.cpu_only_build",
                Cause.EP_NOT_IN_BUILD,
                Layer.PACKAGE,
                Severity.ERROR if requested else Severity.INFO,
                params={"pid": process.pid, "ort": ", ".join(lib.path for lib in ort_libs)},
                evidence=(_pid_evidence(process), *_lib_evidence(process, ort_libs)),
            )
        else:
            yield make_finding(
                "process.cuda_provider_not_loaded",
                Cause.UNKNOWN,
                Layer.LOADER,
                Severity.ERROR if requested else Severity.INFO,
                params={"pid": process.pid, "provider": on_disk},
                evidence=(
                    _pid_evidence(process),
                    said("evidence.on_disk_not_mapped", value=on_disk),
                    *_lib_evidence(process, ort_libs),
                    memory_evidence,
                ),
                commands=(f"ldd {on_disk} | grep 'not found'",),
            )
    elif memory.status == "none":
        yield make_finding(
            "process.no_gpu_memory",
            Cause.UNKNOWN,
            Layer.DEVICE,
            Severity.WARNING,
            params={"pid": process.pid},
            evidence=(
                _pid_evidence(process),
                *_lib_evidence(process, process.mapped("ort_provider_cuda")),
                memory_evidence,
            ),
        )
    elif memory.status == "holds":
        yield make_finding(
            "process.uses_gpu",
            Cause.UNKNOWN,
            Layer.DEVICE,
            Severity.INFO,
            params={
                "pid": process.pid,
                "used_mib": memory.used_mib,
                "gpus": ", ".join(map(str, memory.gpu_indices)),
            },
            evidence=(_pid_evidence(process), memory_evidence),
        )


def _major_findings(
    process: ProcessFacts, need_cuda: int | None, need_cudnn: int | None
) -> Iterator[Finding]:
    cuda_libs = tuple(
        lib for lib in process.mapped_libraries if lib.family in _CUDA_FAMILIES and lib.cuda_major is not None
    )
    cudnn_libs = tuple(
        lib for lib in process.mapped_libraries if lib.family.lower() == "cudnn" and lib.major is not None
    )
    yield from _mapped_other_major(
        process, cuda_libs, [lib.cuda_major for lib in cuda_libs], need_cuda, "CUDA",
        ("process.cuda_major_mapped", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA),
    )  # fmt: skip
    yield from _mapped_other_major(
        process, cudnn_libs, [lib.major for lib in cudnn_libs], need_cudnn, "cuDNN",
        ("process.cudnn_major_mapped", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN),
    )  # fmt: skip


def _mapped_other_major(
    process: ProcessFacts,
    libs: tuple[MappedLibrary, ...],
    majors: list[int | None],
    needed: int | None,
    label: str,
    kind: tuple[str, Cause, Layer],
) -> Iterator[Finding]:
    """The server mapped libraries of one family, none of them of the major its build needs."""
    if needed is None or not libs or needed in set(majors):
        return
    finding_id, cause, layer = kind
    yield make_finding(
        finding_id,
        cause,
        layer,
        Severity.ERROR,
        params={
            "pid": process.pid,
            "needed": needed,
            "mapped": sorted({major for major in majors if major}),
            "names": [lib.name for lib in libs],
        },
        evidence=(
            _pid_evidence(process),
            said("evidence.build_needs", value=f"{label} {needed}"),
            *_lib_evidence(process, libs),
        ),
    )


def check_container(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The server's container was started without GPUs (no ``--gpus``, no nvidia runtime).

    By hand: ``docker inspect -f '{{.HostConfig.DeviceRequests}} {{.HostConfig.Runtime}}' ID``.
    """
    process = snapshot.process
    if process is None or process.container is None:
        return
    container = process.container
    if container.inspected and container.gpu_requested is False:
        yield make_finding(
            "process.container_without_gpu",
            Cause.CONTAINER_NO_DEVICE,
            Layer.DEVICE,
            Severity.ERROR if _gpu_requested(snapshot) is not False else Severity.INFO,
            params={
                "pid": process.pid,
                "container": (container.container_id or "?")[:12],
                "engine": container.engine,
                "exec_container": (container.container_id or "ID")[:12],
            },
            evidence=(
                _pid_evidence(process),
                said("evidence.container", value=f"{container.engine} {container.container_id}"),
                named("HostConfig.Runtime", str(container.runtime)),
            ),
            commands=("docker run --gpus all …",),
        )


CHECKS = (
    check_read_limits,
    check_gpu_hidden,
    check_environment_differs,
    check_loaded_libraries,
    check_container,
)
