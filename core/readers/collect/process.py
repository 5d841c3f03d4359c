"""Read the running server process, read-only: what it has loaded, its real environment, its GPU use.

Nothing here writes, signals or attaches to the process. Every read that the operating system
refuses (another user's ``/proc/PID/environ``) is recorded with the command that allows it,
and the rest goes on. The parts: :mod:`proc_maps` (loaded libraries), :mod:`proc_files`
(environ, cgroup), :mod:`systemd`, :mod:`docker_inspect`, :mod:`gpu_memory`, and
:mod:`find_process` (which process is the server).

By hand: ``grep -E 'onnxruntime|cudart|cublas|cudnn' /proc/PID/maps``,
``tr '\\0' '\\n' < /proc/PID/environ``, ``cat /proc/PID/cgroup``,
``systemctl show -p Environment,EnvironmentFiles,FragmentPath UNIT``, ``docker inspect ID``,
``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from fallback_doctor.core.model.facts.process import (
    ContainerInfo,
    MappedLibrary,
    ProcessFacts,
    ReadLimit,
    ServiceUnit,
)
from fallback_doctor.core.readers.collect.docker_inspect import inspect_container
from fallback_doctor.core.readers.collect.gpu_memory import gpu_memory_of, ns_pids
from fallback_doctor.core.readers.collect.proc_files import parse_cgroup, parse_environ
from fallback_doctor.core.readers.collect.proc_maps import parse_maps
from fallback_doctor.core.readers.collect.systemd import read_unit
from fallback_doctor.core.readers.knowledge.environment import relevant_environment
from fallback_doctor.core.readers.loader import names

PROC = "/proc"
MAX_READ = 4 * 1024 * 1024
"""Most bytes read from one /proc file (a maps file of a big server is well under this)."""

_SUDO_KEYS = ("SUDO_USER", "SUDO_COMMAND", "SUDO_UID")


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


def allow_command(pid: int, user: str | None) -> str:
    """What to run so that the process's files can be read: root, or the service's own user."""
    commands = [f"sudo fallback-doctor diagnose --pid {pid}"]
    if user and user != "root":
        commands.append(f"sudo -u {user} fallback-doctor diagnose --pid {pid}")
    return " (or) ".join(commands)


def _user_of(uid: int | None) -> str | None:
    if uid is None:
        return None
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def _provider_on_disk(mapped: tuple[MappedLibrary, ...]) -> tuple[str | None, int | None, int | None]:
    """The CUDA provider library next to the mapped ONNX Runtime, and the CUDA/cuDNN majors it needs."""
    provider = next((lib.path for lib in mapped if lib.family == "ort_provider_cuda"), None)
    if provider is None:
        for lib in mapped:
            if lib.family in ("ort_core", "ort_python", "ort_provider_shared", "ort_node"):
                candidate = os.path.join(os.path.dirname(lib.path), "libonnxruntime_providers_cuda.so")
                if os.path.isfile(candidate):
                    provider = candidate
                    break
    if provider is None:
        return None, None, None
    try:
        from fallback_doctor.core.readers.loader.elf import read_elf_dynamic

        needed = read_elf_dynamic(provider).needed
    except (OSError, ValueError):
        return provider, None, None
    cuda_major = cudnn_major = None
    for name in needed:
        parsed = names.parse_library_name(name)
        if parsed is None:
            continue
        if cuda_major is None and parsed.family.lower() in ("cudart", "cublas", "cublaslt"):
            cuda_major = parsed.major
        if cudnn_major is None and parsed.family.lower() == "cudnn":
            cudnn_major = parsed.major
    return provider, cuda_major, cudnn_major


@dataclass
class _Reads:
    """The reads of one /proc/PID folder, and what the system refused with the command that allows it."""

    base: str
    allow: str
    limits: list[ReadLimit] = field(default_factory=list)

    def read(self, what: str, limit: int = MAX_READ) -> bytes | None:
        path = os.path.join(self.base, what)
        try:
            with open(path, "rb") as handle:
                return handle.read(limit)
        except PermissionError as error:
            self.denied(what, path, error)
        except OSError:
            pass
        return None

    def denied(self, what: str, path: str, error: OSError) -> None:
        reason = f"{type(error).__name__}: {error.strerror or error}"
        self.limits.append(ReadLimit(what, path, reason, self.allow))


def _executable(reads: _Reads) -> str | None:
    path = os.path.join(reads.base, "exe")
    try:
        return os.readlink(path)
    except PermissionError as error:
        reads.denied("exe", path, error)
    except OSError:
        pass
    return None


def _service(reads: _Reads) -> tuple[ServiceUnit | None, ContainerInfo | None]:
    """The systemd unit and the container the process runs in (from its cgroup)."""
    cgroup_text = _read_text(os.path.join(reads.base, "cgroup"))
    if not cgroup_text:
        return None, None
    unit: ServiceUnit | None = None
    container: ContainerInfo | None = None
    unit_name, container_ref = parse_cgroup(cgroup_text)
    if unit_name is not None:
        try:
            unit = read_unit(unit_name, reads.allow, reads.limits)
        except Exception as error:  # noqa: BLE001 - the unit is one source among several
            unit = ServiceUnit(unit_name, None, {}, (), "unit file", f"{type(error).__name__}: {error}")
    if container_ref is not None:
        container = inspect_container(*container_ref)
    return unit, container


def collect_process(
    pid: int, *, proc: str = PROC, shell_env: Mapping[str, str] | None = None
) -> ProcessFacts:
    """What the running process really has: mapped libraries, its environment, unit, container, GPU use.

    Read-only. A read the system refuses is recorded in ``read_limits`` with the command that
    allows it; nothing raises. ``proc`` lets tests point at another /proc; ``shell_env`` is the
    technician's environment to compare with (the tool's own by default).

    By hand: ``grep -E 'onnxruntime|cudart|cudnn' /proc/PID/maps``,
    ``sudo tr '\\0' '\\n' < /proc/PID/environ``, ``cat /proc/PID/cgroup``,
    ``systemctl show -p Environment UNIT``, ``docker inspect ID``, ``nvidia-smi``.
    """
    shell = dict(os.environ if shell_env is None else shell_env)
    shell_relevant = relevant_environment(shell)
    shell_sudo = any(key in shell for key in _SUDO_KEYS)
    base = os.path.join(proc, str(pid))
    if not os.path.isdir(base):
        return ProcessFacts(
            pid,
            None,
            (),
            None,
            shell_environment=shell_relevant,
            shell_via_sudo=shell_sudo,
            error=f"no process {pid} (it is not running, or {proc} is not mounted)",
        )
    try:
        uid: int | None = os.stat(base).st_uid
    except OSError:
        uid = None
    user = _user_of(uid)
    reads = _Reads(base, allow_command(pid, user))
    executable = _executable(reads)
    raw_cmdline = reads.read("cmdline")
    cmdline = tuple(part.decode("utf-8", "replace") for part in (raw_cmdline or b"").split(b"\0") if part)
    raw_maps = reads.read("maps", 64 * MAX_READ)
    mapped = parse_maps(raw_maps.decode("utf-8", "replace")) if raw_maps is not None else ()
    raw_environ = reads.read("environ")
    full = parse_environ(raw_environ) if raw_environ is not None else None
    unit, container = _service(reads)
    provider, cuda_major, cudnn_major = _provider_on_disk(mapped)
    return ProcessFacts(
        pid=pid,
        executable=executable,
        mapped_libraries=mapped,
        environment=relevant_environment(full) if full is not None else None,
        cmdline=cmdline,
        uid=uid,
        user=user,
        maps_read=raw_maps is not None,
        started_with_sudo=full is not None and any(key in full for key in _SUDO_KEYS),
        shell_environment=shell_relevant,
        shell_via_sudo=shell_sudo,
        unit=unit,
        container=container,
        gpu_memory=gpu_memory_of((*ns_pids(pid, proc), pid)),
        read_limits=tuple(reads.limits),
        provider_library_on_disk=provider,
        needed_cuda_major=cuda_major,
        needed_cudnn_major=cudnn_major,
    )


def effective_environment(facts: ProcessFacts) -> dict[str, str] | None:
    """The environment to diagnose the server with (see ``ProcessFacts.effective_environment``).

    Pass it as ``CollectRequest.env`` so the loader checks resolve libraries as the server does.
    """
    return facts.effective_environment()
