"""A fleet on one machine: hosts that are this machine (Ansible's local connection), each pointed
at a different real broken stack, plus hosts that cannot be reached or where the tool fails.

The stacks are the scenario environments (tests/scenarios/scenario_stacks.py: real wheels, built
once under ~/.cache/gpu-fallback-doctor/stacks) and the Bareun-like layouts of
tests/core/targets/bareun_layout.py (real ONNX Runtime libraries).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenarios"))
sys.path.insert(0, str(ROOT / "tests" / "core" / "targets"))

import bareun_layout  # noqa: E402
import scenario_runs as runs  # noqa: E402
import scenario_stacks as stacks  # noqa: E402

PLAYBOOK = ROOT / "packaging" / "ansible" / "fleet.yml"
TOOL = [sys.executable, "-m", "fallback_doctor"]


def python_host(scenario_id: str) -> dict[str, Any]:
    """Host variables pointing at a scenario's interpreter and library folder (its LD_LIBRARY_PATH)."""
    scenario = runs.SCENARIOS[scenario_id]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    host: dict[str, Any] = {"fallback_doctor_python": str(stack.python_exe)}
    library_path = scenario.env().get("LD_LIBRARY_PATH")
    if library_path:
        host["fallback_doctor_library_path"] = library_path
    return host


def bareun_host(base: Path, **layout: Any) -> dict[str, Any]:
    """Host variables pointing at a Bareun-like installation made under ``base``."""
    root = bareun_layout.make_install(base, **layout)
    return {"fallback_doctor_bareun_root": str(root)}


def tool_archive(folder: Path) -> Path:
    """The tool as an archive to copy to the hosts: the frozen build when GFD_FROZEN_ARCHIVE names
    one (packaging/, `make package`), else a folder whose fallback-doctor runs this checkout's tool.
    """
    frozen = os.environ.get("GFD_FROZEN_ARCHIVE")
    if frozen:
        return Path(frozen)
    tree = folder / "fallback-doctor-0.1.0"
    tree.mkdir(parents=True)
    launcher = tree / "fallback-doctor"
    launcher.write_text(f'#!/bin/sh\nexec {" ".join(TOOL)} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    archive = folder / "fallback-doctor.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname=tree.name)
    return archive


@dataclass(frozen=True)
class PlaybookRun:
    """One ansible-playbook run: its exit status, output and duration."""

    returncode: int
    output: str
    seconds: float


def run_playbook(inventory: dict[str, Any], work: Path, extra: dict[str, Any]) -> PlaybookRun:
    """``ansible-playbook -i inventory.json fleet.yml -e @extra.json`` with Ansible's state under ``work``."""
    inventory_file = work / "inventory.json"
    inventory_file.write_text(json.dumps(inventory, indent=2), encoding="utf-8")
    extra_file = work / "extra.json"
    extra_file.write_text(json.dumps(extra), encoding="utf-8")
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or "ansible-playbook"
    env = stacks.clean_env()
    env.update(
        ANSIBLE_HOME=str(work / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(work / "ansible-local"),
        ANSIBLE_REMOTE_TEMP=str(work / "ansible-remote"),
        ANSIBLE_HOST_KEY_CHECKING="False",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_RETRY_FILES_ENABLED="False",
        ANSIBLE_SSH_ARGS="-o ConnectTimeout=5 -o BatchMode=yes",
        ANSIBLE_FORKS="8",
    )
    command = [playbook, "-i", str(inventory_file), str(PLAYBOOK), "-e", f"@{extra_file}"]
    started = time.monotonic()
    proc = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=work, timeout=900, check=False
    )
    return PlaybookRun(proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started)
