"""Apply a finding's remedy steps mechanically from the report JSON, as a fleet tool would.

Only the document is read (``findings[].remediation.steps``); nothing here knows the scenario.
Option 1 of each remedy is applied (a higher option is an alternative to it):

- ``run`` steps on the host that install with ``pip --target`` (a native server's CUDA libraries)
  are done with uv into that folder, offline from the same cache, without dependencies (the step
  names every package).
- ``run`` steps whose argv[0] is the copy's own interpreter and that call ``-m pip install`` or
  ``-m pip uninstall`` are done with uv against that interpreter, OFFLINE from the scenario
  stacks' uv cache (``--offline``: a package not in the cache fails the step, as it would on an
  air-gapped machine). A requirement without a version gets the version the stacks pin (a fleet
  tool pins its own). Any other command is run as it is, with the copy's environment.
- ``environment`` steps are kept for the next runs (``prepend``: before the current value).
- ``config`` steps edit the JSON file the step names (a copy the test made) at its pointer.
- ``code`` and ``manual`` steps cannot be applied by a machine: they are recorded, not done.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scenario_stacks as stacks


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for stack in stacks.STACKS.values():
        for step in stack.steps:
            for requirement in step:
                name, _, version = requirement.partition("==")
                pins.setdefault(name.lower(), version)
    return pins


PINS = _pins()


class StepRefusedError(RuntimeError):
    """A step this applier will not or cannot do (its words say why)."""


@dataclass
class Applied:
    """What was done to one copy over all rounds."""

    env: dict[str, str]
    done: list[str] = field(default_factory=list)
    not_done: list[str] = field(default_factory=list)


def first_steps(finding: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of the finding's recommended option (option 1)."""
    steps = (finding.get("remediation") or {}).get("steps") or []
    return [step for step in steps if int(step.get("option") or 1) == 1]


def apply_finding(finding: dict[str, Any], python: Path | None, applied: Applied) -> None:
    """Apply option 1 of the finding's remedy to the copy whose interpreter is ``python``."""
    steps = first_steps(finding)
    if not steps:
        raise StepRefusedError(f"{finding['id']} has no steps to apply")
    for step in steps:
        kind = step["kind"]
        if kind == "run":
            _run(step, python, applied)
        elif kind == "environment":
            _environment(step, applied)
        elif kind == "config":
            _config(step, applied)
        else:
            applied.not_done.append(f"{kind}: {step.get('code') or step.get('text')}")


def _pinned(requirement: str) -> str:
    if "==" in requirement or requirement.startswith("-"):
        return requirement
    version = PINS.get(requirement.lower())
    return f"{requirement}=={version}" if version else requirement


def _host_pip_target(argv: list[str]) -> list[str]:
    """``python3 -m pip install --upgrade --target DIR PKGS`` (a native server's libraries) as uv,
    offline from the stacks' cache: the same packages into the same folder."""
    import sys

    rest = argv[4:]
    if "--target" not in rest:
        raise StepRefusedError(f"a pip install on the host without --target is not applied: {argv}")
    folder = rest[rest.index("--target") + 1]
    packages = [a for a in rest if not a.startswith("-") and a != folder]
    command = [*stacks.find_uv(), "pip", "install", "--no-config", "--python", sys.executable]
    command += ["--target", folder, "--offline", "--no-deps", "--link-mode", "hardlink"]
    return [*command, "--cache-dir", str(stacks.UV_CACHE_DIR), *(_pinned(a) for a in packages)]


def _run(step: dict[str, Any], python: Path | None, applied: Applied) -> None:
    argv = [str(part) for part in step["argv"]]
    if step.get("where") == "host" and argv[1:4] == ["-m", "pip", "install"]:
        command = _host_pip_target(argv)
        proc = subprocess.run(
            command, capture_output=True, text=True, env=applied.env, timeout=300, check=False
        )
        if proc.returncode != 0:
            raise StepRefusedError(f"{' '.join(command)} failed: {(proc.stdout + proc.stderr)[-800:]}")
        applied.done.append("run (host): " + " ".join(argv))
        return
    if step.get("where") != "application":
        raise StepRefusedError(f"runs {step.get('where')}, not in the application's environment: {argv}")
    if argv[1:3] == ["-m", "pip"]:
        if Path(argv[0]) != python:
            raise StepRefusedError(f"pip of another interpreter than the application's: {argv[0]}")
        verb, rest = argv[3], [a for a in argv[4:] if a not in ("-y", "--force-reinstall")]
        if verb not in ("install", "uninstall"):
            raise StepRefusedError(f"pip {verb} is not applied")
        command = [*stacks.find_uv(), "pip", verb, "--no-config", "--python", str(python)]
        if verb == "install":
            command += ["--offline", "--no-deps", "--link-mode", "hardlink"]
            command += ["--cache-dir", str(stacks.UV_CACHE_DIR), *(_pinned(a) for a in rest)]
            if "--force-reinstall" in argv:
                command.append("--reinstall")
        else:
            command += rest
    else:
        command = argv
    proc = subprocess.run(command, capture_output=True, text=True, env=applied.env, timeout=300, check=False)
    if proc.returncode != 0:
        raise StepRefusedError(f"{' '.join(command)} failed: {(proc.stdout + proc.stderr)[-800:]}")
    applied.done.append("run: " + " ".join(argv))


def _environment(step: dict[str, Any], applied: Applied) -> None:
    separator = step.get("separator") or ":"
    for name, value in step["variables"].items():
        current = applied.env.get(name)
        if step.get("mode", "prepend") == "prepend" and current:
            value = value + separator + current
        applied.env[name] = value
        applied.done.append(f"environment ({step.get('scope')}): {name}={value}")


def _config(step: dict[str, Any], applied: Applied) -> None:
    path = Path(step["file"])
    data = json.loads(path.read_text(encoding="utf-8"))
    parts = [p.replace("~1", "/").replace("~0", "~") for p in step["pointer"].lstrip("/").split("/")]
    node = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[parts[-1]] = step["value"]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    applied.done.append(f"config: {path.name} {step['pointer']} = {json.dumps(step['value'])}")
