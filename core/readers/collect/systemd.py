"""A systemd service's environment: ``systemctl show``, else its unit file, drop-ins and EnvironmentFile=.

By hand: ``systemctl show -p Environment,EnvironmentFiles,FragmentPath UNIT``.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from fallback_doctor.core.model.facts.process import ReadLimit, ServiceUnit
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.readers.knowledge.environment import relevant_environment

COMMAND_TIMEOUT_S = 5.0

_UNIT_LIMIT = 1024 * 1024
"""Most bytes read of a unit file, a drop-in or an EnvironmentFile (a real one is a few KiB)."""


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
        from fallback_doctor.core.readers.probes.runner import run_child

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
                    texts.append(read_regular_text(part, _UNIT_LIMIT))
                except FileNotFoundError:
                    continue
                except OSError as denied:  # no permission, a FIFO, a device: said, not waited on
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
            merged.update(parse_env_file(read_regular_text(Path(root, path.lstrip("/")), _UNIT_LIMIT)))
        except FileNotFoundError:
            continue
        except PermissionError as denied:
            limits.append(ReadLimit("unit", path, str(denied), allow))
        except OSError:
            continue
    merged.update(env)
    return ServiceUnit(unit, fragment, relevant_environment(merged), files, source, error)
