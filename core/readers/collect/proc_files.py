"""``/proc/PID/environ`` and ``/proc/PID/cgroup``: a process's environment, service unit and container.

By hand: ``tr '\\0' '\\n' < /proc/PID/environ``, ``cat /proc/PID/cgroup``.
"""

from __future__ import annotations

import re


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
