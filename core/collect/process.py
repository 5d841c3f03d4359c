"""Read the running server process, read-only: what it has loaded, its real environment, its GPU use.

Nothing here writes, signals or attaches to the process. Every read that the operating system
refuses (another user's ``/proc/PID/environ``) is recorded with the command that allows it,
and the rest goes on.

By hand: ``grep -E 'onnxruntime|cudart|cublas|cudnn' /proc/PID/maps``,
``tr '\\0' '\\n' < /proc/PID/environ``, ``cat /proc/PID/cgroup``,
``systemctl show -p Environment,EnvironmentFiles,FragmentPath UNIT``, ``docker inspect ID``,
``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from fallback_doctor.core.collect.environment import relevant_environment
from fallback_doctor.core.facts.process import (
    ContainerInfo,
    GpuMemoryUse,
    MappedLibrary,
    ProcessFacts,
    ReadLimit,
    ServiceUnit,
)
from fallback_doctor.core.facts.target import TargetFacts
from fallback_doctor.core.loader import names

PROC = "/proc"
COMMAND_TIMEOUT_S = 5.0
MAX_READ = 4 * 1024 * 1024
"""Most bytes read from one /proc file (a maps file of a big server is well under this)."""

_SUDO_KEYS = ("SUDO_USER", "SUDO_COMMAND", "SUDO_UID")

# -- /proc/PID/maps ------------------------------------------------------------------------------

_ORT_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^libonnxruntime_providers_cuda(?:_plugin)?\.so"), "ort_provider_cuda"),
    (re.compile(r"^libonnxruntime_providers_tensorrt\.so"), "ort_provider_tensorrt"),
    (re.compile(r"^libonnxruntime_providers_shared\.so"), "ort_provider_shared"),
    (re.compile(r"^libonnxruntime_providers_\w+\.so"), "ort_provider_other"),
    (re.compile(r"^libonnxruntime\.so"), "ort_core"),
    (re.compile(r"^onnxruntime_pybind11_state.*\.so$"), "ort_python"),
    (re.compile(r"^onnxruntime_binding\.node$"), "ort_node"),
)


def classify_mapped(path: str) -> MappedLibrary | None:
    """Name, family and major of a mapped file when it is ONNX Runtime or the GPU stack, else None."""
    deleted = path.endswith(" (deleted)")
    if deleted:
        path = path[: -len(" (deleted)")]
    name = path.rsplit("/", 1)[-1]
    for pattern, family in _ORT_FAMILIES:
        if pattern.match(name):
            return MappedLibrary(path, name, family, None, None, deleted)
    parsed = names.parse_library_name(name)
    if parsed is None or parsed.windows:
        return None
    lowered = parsed.family.lower()
    if names.is_cuda_runtime(name) or names.is_cudnn(name) or names.is_tensorrt(name):
        family = parsed.family
    elif lowered == "cuda":
        family = "driver"
    elif lowered == "nvidia-ml":
        family = "nvml"
    else:
        return None
    return MappedLibrary(path, name, family, parsed.major, names.cuda_major_of_name(name), deleted)


def parse_maps(text: str) -> tuple[MappedLibrary, ...]:
    """The ONNX Runtime and GPU-stack libraries in a /proc/PID/maps text, each file once, in order."""
    seen: dict[str, MappedLibrary] = {}
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        path = parts[5].strip()
        if path in seen:
            continue
        mapped = classify_mapped(path)
        if mapped is not None:
            seen[path] = mapped
    return tuple(seen.values())


def mapped_paths(text: str) -> Iterator[str]:
    """Every file path a /proc/PID/maps text maps (each once)."""
    seen: set[str] = set()
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and parts[5] not in seen:
            seen.add(parts[5])
            yield parts[5].removesuffix(" (deleted)")


# -- /proc/PID/environ, cgroup --------------------------------------------------------------------


def parse_environ(data: bytes) -> dict[str, str]:
    """The variables of a /proc/PID/environ block (NUL-separated ``KEY=value``; bad bytes kept)."""
    result: dict[str, str] = {}
    for item in data.split(b"\0"):
        if b"=" not in item:
            continue
        key, _, value = item.partition(b"=")
        if key:
            result[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return result


_CONTAINER_ID = re.compile(r"([0-9a-f]{64})")
_UNIT = re.compile(r"/([^/]+\.service)(?:/|$)")


def parse_cgroup(text: str) -> tuple[str | None, tuple[str, str | None] | None]:
    """The systemd service unit and the container (engine, id) a /proc/PID/cgroup text names.

    ``0::/system.slice/bareun.service`` -> unit ``bareun.service``;
    ``0::/system.slice/docker-<64 hex>.scope`` or ``…/docker/<64 hex>`` -> (docker, id);
    ``kubepods``, ``libpod`` (podman), ``containerd``, ``lxc`` likewise.
    """
    unit: str | None = None
    container: tuple[str, str | None] | None = None
    for line in text.splitlines():
        path = line.split(":", 2)[-1] if line.count(":") >= 2 else ""
        if not path:
            continue
        match = _CONTAINER_ID.search(path)
        engine = None
        if "kubepods" in path:
            engine = "kubepods"
        elif "libpod" in path:
            engine = "podman"
        elif "docker" in path:
            engine = "docker"
        elif "containerd" in path or "cri-containerd" in path:
            engine = "containerd"
        elif "/lxc/" in path or path.startswith("/lxc"):
            engine = "lxc"
        if engine is not None and container is None:
            container = (engine, match.group(1) if match else None)
        found = _UNIT.search(path)
        if found and unit is None and not found.group(1).startswith(("docker-", "libpod-")):
            unit = found.group(1)
    return unit, container


# -- systemd ---------------------------------------------------------------------------------------


def _assignments(value: str) -> dict[str, str]:
    """``A=1 "B=two words"`` (systemd quoting) -> {A: 1, B: two words}."""
    try:
        words = shlex.split(value, posix=True)
    except ValueError:
        words = value.split()
    result: dict[str, str] = {}
    for word in words:
        key, sep, val = word.partition("=")
        if sep and key:
            result[key] = val
    return result


def parse_systemctl_show(text: str) -> tuple[dict[str, str], tuple[str, ...], str | None]:
    """``systemctl show -p Environment,EnvironmentFiles,FragmentPath`` output -> (env, files, fragment)."""
    env: dict[str, str] = {}
    files: list[str] = []
    fragment: str | None = None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "Environment":
            env.update(_assignments(value))
        elif key == "EnvironmentFiles" and value.strip():
            # "EnvironmentFiles=/etc/default/bareun (ignore_errors=yes)"
            path, _, flags = value.strip().partition(" ")
            files.append(("-" if "ignore_errors=yes" in flags else "") + path)
        elif key == "FragmentPath" and value.strip():
            fragment = value.strip()
    return env, tuple(files), fragment


def parse_unit_file(text: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """``Environment=`` and ``EnvironmentFile=`` of a unit file's [Service] section (continuations joined).

    An empty ``Environment=`` resets the list, as systemd does.
    """
    env: dict[str, str] = {}
    files: list[str] = []
    section = ""
    joined: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    if pending:
        joined.append(pending)
    for line in joined:
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
            continue
        if section != "Service":
            continue
        key, sep, value = stripped.partition("=")
        key = key.strip()
        if not sep:
            continue
        if key == "Environment":
            if not value.strip():
                env.clear()
            env.update(_assignments(value))
        elif key == "EnvironmentFile":
            if not value.strip():
                files.clear()
            else:
                files.append(value.strip())
    return env, tuple(files)


def parse_env_file(text: str) -> dict[str, str]:
    """An ``EnvironmentFile=`` file: ``KEY=value`` lines, ``#`` comments, optional quotes."""
    result: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].strip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        result[key] = value
    return result


_UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")


def read_unit(unit: str, allow: str, limits: list[ReadLimit], root: str = "/") -> ServiceUnit:
    """The unit's environment: ``systemctl show`` where it answers, else its unit file and drop-ins."""
    env: dict[str, str] = {}
    files: tuple[str, ...] = ()
    fragment: str | None = None
    source = "unit file"
    error: str | None = None
    systemctl = shutil.which("systemctl") if root == "/" else None
    if systemctl:
        from fallback_doctor.core.probes.runner import run_child

        outcome = run_child(
            [systemctl, "show", "-p", "Environment,EnvironmentFiles,FragmentPath", "--", unit],
            timeout_s=COMMAND_TIMEOUT_S,
        )
        if outcome.returncode == 0 and outcome.stdout.strip():
            env, files, fragment = parse_systemctl_show(outcome.stdout)
            source = "systemctl show"
        else:
            error = (outcome.stderr.strip() or outcome.sentence()).splitlines()[0][:300]
    if source == "unit file":
        for folder in _UNIT_DIRS:
            candidate = Path(root, folder.lstrip("/"), unit)
            parts = [candidate, *sorted(Path(root, folder.lstrip("/"), unit + ".d").glob("*.conf"))]
            texts: list[str] = []
            for part in parts:
                try:
                    texts.append(part.read_text(encoding="utf-8", errors="replace"))
                except FileNotFoundError:
                    continue
                except PermissionError as denied:
                    limits.append(ReadLimit("unit", str(part), str(denied), allow))
            if texts:
                fragment = str(candidate)
                for text in texts:
                    more_env, more_files = parse_unit_file(text)
                    env.update(more_env)
                    files = files + more_files
                break
    # EnvironmentFile= contents are part of the service's environment too.
    merged: dict[str, str] = {}
    for entry in files:
        path = entry.lstrip("-")
        try:
            merged.update(parse_env_file(Path(root, path.lstrip("/")).read_text("utf-8", "replace")))
        except FileNotFoundError:
            continue
        except PermissionError as denied:
            limits.append(ReadLimit("unit", path, str(denied), allow))
        except OSError:
            continue
    merged.update(env)
    return ServiceUnit(unit, fragment, relevant_environment(merged), files, source, error)


# -- docker ----------------------------------------------------------------------------------------


def parse_docker_inspect(text: str) -> tuple[dict[str, str], str | None, bool | None]:
    """``docker inspect ID`` output -> (allowlisted env, HostConfig.Runtime, whether GPUs were asked)."""
    data: Any = json.loads(text)
    if isinstance(data, list):
        data = data[0] if data else {}
    if not isinstance(data, dict):
        return {}, None, None
    config = data.get("Config") or {}
    host = data.get("HostConfig") or {}
    env: dict[str, str] = {}
    for item in config.get("Env") or ():
        key, sep, value = str(item).partition("=")
        if sep:
            env[key] = value
    runtime = host.get("Runtime") if isinstance(host.get("Runtime"), str) else None
    gpu = False
    for request in host.get("DeviceRequests") or ():
        capabilities = request.get("Capabilities") if isinstance(request, dict) else None
        if request.get("Driver") == "nvidia" or any("gpu" in group for group in capabilities or ()):
            gpu = True
    visible = env.get("NVIDIA_VISIBLE_DEVICES")
    if runtime == "nvidia" or (visible and visible not in ("void", "none", "")):
        gpu = True
    return relevant_environment(env), runtime, gpu


def inspect_container(engine: str, container_id: str | None) -> ContainerInfo:
    """``docker inspect`` of the container (when the docker command is there and answers)."""
    if engine not in ("docker", "podman", "kubepods", "containerd") or container_id is None:
        return ContainerInfo(engine, container_id, error="no container id in /proc/PID/cgroup")
    command = shutil.which("docker") or (shutil.which("podman") if engine == "podman" else None)
    if command is None:
        return ContainerInfo(engine, container_id, error="the docker command is not installed here")
    from fallback_doctor.core.probes.runner import run_child

    outcome = run_child(
        [command, "inspect", "--type", "container", container_id], timeout_s=COMMAND_TIMEOUT_S
    )
    if outcome.returncode != 0:
        why = (outcome.stderr.strip() or outcome.sentence()).splitlines()[0][:300]
        return ContainerInfo(engine, container_id, error=f"docker inspect failed: {why}")
    try:
        env, runtime, gpu = parse_docker_inspect(outcome.stdout)
    except (ValueError, AttributeError, TypeError) as error:
        return ContainerInfo(engine, container_id, error=f"docker inspect printed no usable JSON: {error}")
    return ContainerInfo(engine, container_id, env, runtime, gpu, inspected=True)


# -- NVML ------------------------------------------------------------------------------------------


def ns_pids(pid: int, proc: str = PROC) -> tuple[int, ...]:
    """The process's pid in each pid namespace we can see (``NSpid:`` of /proc/PID/status)."""
    try:
        text = Path(proc, str(pid), "status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (pid,)
    for line in text.splitlines():
        if line.startswith("NSpid:"):
            found = tuple(int(item) for item in line.split()[1:] if item.isdigit())
            return found or (pid,)
    return (pid,)


def gpu_memory_of(pids: Iterable[int]) -> GpuMemoryUse:
    """Whether any of ``pids`` is in NVML's compute (or graphics) process list, and how much it holds.

    By hand: ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
    """
    wanted = set(pids)
    try:
        import pynvml
    except ImportError as error:
        why = f"nvidia-ml-py is not installed in the tool's environment ({error})"
        return GpuMemoryUse("unknown", reason=why)
    try:
        pynvml.nvmlInit()
    except Exception as error:  # noqa: BLE001 - NVML's failure is the fact
        from fallback_doctor.core.collect.driver import describe_nvml_error

        code = getattr(error, "value", None)
        meaning = describe_nvml_error(code if isinstance(code, int) else None, str(error))
        return GpuMemoryUse("unknown", reason=f"NVML could not start: {meaning.meaning} ({error})")
    try:
        used = 0
        seen_any = False
        indices: list[int] = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            entries: list[Any] = []
            for query in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                function = getattr(pynvml, query, None)
                if function is None:
                    continue
                try:
                    entries.extend(function(handle))
                except Exception:  # noqa: BLE001 - one list failing leaves the other
                    continue
            for entry in entries:
                if int(getattr(entry, "pid", -1)) in wanted:
                    seen_any = True
                    if index not in indices:
                        indices.append(index)
                    memory = getattr(entry, "usedGpuMemory", None)
                    if isinstance(memory, int) and memory >= 0:
                        used += memory
        if not seen_any:
            return GpuMemoryUse("none", reason=_namespace_note())
        return GpuMemoryUse("holds", used_mib=used // (1024 * 1024), gpu_indices=tuple(indices))
    except Exception as error:  # noqa: BLE001
        return GpuMemoryUse("unknown", reason=f"NVML could not list the GPU processes: {error}")
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down a library that failed is harmless
            pass


def _namespace_note() -> str | None:
    """A caveat when we run in a container: NVML may list host pids we cannot match."""
    unit, container = parse_cgroup(_read_text(f"{PROC}/self/cgroup") or "")
    del unit
    if container is not None or os.path.exists("/.dockerenv"):
        return "this tool runs in a container: NVML may report host process ids, which cannot be matched here"
    return None


# -- the process -----------------------------------------------------------------------------------


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
        from fallback_doctor.core.loader.elf import read_elf_dynamic

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
    limits: list[ReadLimit] = []
    uid: int | None = None
    try:
        uid = os.stat(base).st_uid
    except OSError:
        uid = None
    user = _user_of(uid)
    allow = allow_command(pid, user)

    def denied(what: str, path: str, error: OSError) -> None:
        limits.append(ReadLimit(what, path, f"{type(error).__name__}: {error.strerror or error}", allow))

    executable: str | None = None
    try:
        executable = os.readlink(os.path.join(base, "exe"))
    except PermissionError as error:
        denied("exe", os.path.join(base, "exe"), error)
    except OSError:
        executable = None
    cmdline: tuple[str, ...] = ()
    try:
        with open(os.path.join(base, "cmdline"), "rb") as handle:
            raw = handle.read(MAX_READ)
        cmdline = tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    except PermissionError as error:
        denied("cmdline", os.path.join(base, "cmdline"), error)
    except OSError:
        cmdline = ()

    mapped: tuple[MappedLibrary, ...] = ()
    maps_read = False
    try:
        with open(os.path.join(base, "maps"), "rb") as handle:
            maps_text = handle.read(64 * MAX_READ).decode("utf-8", "replace")
        mapped = parse_maps(maps_text)
        maps_read = True
    except PermissionError as error:
        denied("maps", os.path.join(base, "maps"), error)
    except OSError:
        maps_read = False

    environment: dict[str, str] | None = None
    started_with_sudo = False
    try:
        with open(os.path.join(base, "environ"), "rb") as handle:
            full = parse_environ(handle.read(MAX_READ))
        environment = relevant_environment(full)
        started_with_sudo = any(key in full for key in _SUDO_KEYS)
    except PermissionError as error:
        denied("environ", os.path.join(base, "environ"), error)
    except OSError:
        environment = None

    unit: ServiceUnit | None = None
    container: ContainerInfo | None = None
    cgroup_text = _read_text(os.path.join(base, "cgroup"))
    if cgroup_text:
        unit_name, container_ref = parse_cgroup(cgroup_text)
        if unit_name is not None:
            try:
                unit = read_unit(unit_name, allow, limits)
            except Exception as error:  # noqa: BLE001 - the unit is one source among several
                unit = ServiceUnit(unit_name, None, {}, (), "unit file", f"{type(error).__name__}: {error}")
        if container_ref is not None:
            container = inspect_container(*container_ref)

    provider, cuda_major, cudnn_major = _provider_on_disk(mapped)
    gpu = gpu_memory_of((*ns_pids(pid, proc), pid))
    return ProcessFacts(
        pid=pid,
        executable=executable,
        mapped_libraries=mapped,
        environment=environment,
        cmdline=cmdline,
        uid=uid,
        user=user,
        maps_read=maps_read,
        started_with_sudo=started_with_sudo,
        shell_environment=shell_relevant,
        shell_via_sudo=shell_sudo,
        unit=unit,
        container=container,
        gpu_memory=gpu,
        read_limits=tuple(limits),
        provider_library_on_disk=provider,
        needed_cuda_major=cuda_major,
        needed_cudnn_major=cudnn_major,
    )


def effective_environment(facts: ProcessFacts) -> dict[str, str] | None:
    """The environment to diagnose the server with (see ``ProcessFacts.effective_environment``).

    Pass it as ``CollectRequest.env`` so the loader checks resolve libraries as the server does.
    """
    return facts.effective_environment()


# -- finding the server ----------------------------------------------------------------------------


def _under(path: str | None, root: str | None) -> bool:
    if not path or not root:
        return False
    root = os.path.normpath(root)
    if root in ("/", ""):
        return False
    path = os.path.normpath(path)
    return path == root or path.startswith(root.rstrip("/") + "/")


def config_port(config_path: str | None) -> int | None:
    """The port a configuration gives (``address.port``, ``port``, ``grpcPort``), None if none."""
    if not config_path:
        return None
    try:
        data = json.loads(Path(config_path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    candidates: list[Any] = []
    address = data.get("address")
    if isinstance(address, dict):
        candidates.append(address.get("port"))
    candidates.extend(data.get(key) for key in ("port", "grpcPort", "servicePort"))
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536:
            return value
        if isinstance(value, str) and value.isdigit() and 0 < int(value) < 65536:
            return int(value)
    return None


def _pids(proc: str) -> list[int]:
    try:
        return sorted(int(entry) for entry in os.listdir(proc) if entry.isdigit())
    except OSError:
        return []


def _start_ticks(pid: int, proc: str) -> int:
    text = _read_text(os.path.join(proc, str(pid), "stat")) or ""
    fields = text.rpartition(")")[2].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return sys.maxsize


def _listening_pid(port: int) -> int | None:
    try:
        import psutil

        for connection in psutil.net_connections(kind="inet"):
            listening = connection.status == psutil.CONN_LISTEN and connection.laddr
            if listening and connection.laddr.port == port and connection.pid:
                return int(connection.pid)
    except Exception:  # noqa: BLE001 - not allowed or not supported: no answer by port
        pass
    return None


def find_server_process(target: TargetFacts, pid: int | None, *, proc: str = PROC) -> int | None:
    """The running server's pid: ``--pid``; else by executable; else by library; else by port.

    By executable: a process whose exe or command line is under ``target.root``. By library: a
    process that maps a file under ``target.lib_path``. By port: the process listening on the
    port the configuration gives. Several matches: the oldest (the service, not a helper).
    Read-only. By hand: ``pgrep -af /opt/bareun``, ``grep -l /opt/bareun/lib /proc/*/maps``,
    ``ss -ltnp 'sport = :5656'``.
    """
    if pid is not None:
        return pid if os.path.isdir(os.path.join(proc, str(pid))) else None
    me = os.getpid()
    by_exe: list[int] = []
    by_lib: list[int] = []
    for candidate in _pids(proc):
        if candidate == me:
            continue
        base = os.path.join(proc, str(candidate))
        if target.root:
            exe: str | None
            try:
                exe = os.readlink(os.path.join(base, "exe"))
            except OSError:
                exe = None
            raw = _read_text(os.path.join(base, "cmdline")) or ""
            args = [part for part in raw.split("\0") if part]
            if _under(exe, target.root) or any(_under(arg, target.root) for arg in args[:2]):
                by_exe.append(candidate)
                continue
        if target.lib_path:
            maps = _read_text(os.path.join(base, "maps"))
            if maps and any(_under(path, target.lib_path) for path in mapped_paths(maps)):
                by_lib.append(candidate)
    for found in (by_exe, by_lib):
        if found:
            return min(found, key=lambda item: (_start_ticks(item, proc), item))
    port = config_port(target.config_path)
    if port is not None:
        return _listening_pid(port)
    return None
