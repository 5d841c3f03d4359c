"""A container's environment and GPU request: ``docker inspect``. By hand: ``docker inspect ID``."""

from __future__ import annotations

import json
import shutil
from typing import Any

from fallback_doctor.core.model.facts.process import ContainerInfo
from fallback_doctor.core.readers.knowledge.environment import relevant_environment

COMMAND_TIMEOUT_S = 5.0


def parse_docker_inspect(text: str) -> tuple[dict[str, str], str | None, bool | None]:
    """``docker inspect ID`` output -> (allowlisted env, HostConfig.Runtime, whether GPUs were asked)."""
    data: Any = json.loads(text)
    if isinstance(data, list):
        data = data[0] if data else {}
    if not isinstance(data, dict):
        return {}, None, None
    # Any part may be of another type in a hostile or odd answer: each is read only as what it should be.
    config: dict[str, Any] = data["Config"] if isinstance(data.get("Config"), dict) else {}
    host: dict[str, Any] = data["HostConfig"] if isinstance(data.get("HostConfig"), dict) else {}
    env: dict[str, str] = {}
    items = config.get("Env")
    for item in items if isinstance(items, list) else ():
        key, sep, value = str(item).partition("=")
        if sep:
            env[key] = value
    runtime = host.get("Runtime") if isinstance(host.get("Runtime"), str) else None
    gpu = False
    requests = host.get("DeviceRequests")
    for request in requests if isinstance(requests, list) else ():
        if not isinstance(request, dict):
            continue
        capabilities = request.get("Capabilities")
        groups = capabilities if isinstance(capabilities, list) else ()
        if request.get("Driver") == "nvidia" or any(
            isinstance(group, list) and "gpu" in group for group in groups
        ):
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
    from fallback_doctor.core.readers.probes.runner import run_child

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
