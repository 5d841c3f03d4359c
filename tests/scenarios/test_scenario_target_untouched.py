"""Nothing of the target changes (issue 28): a whole diagnosis writes no bytecode into the
application's environment, and the quick one runs none of the environment's start-up code.

A private copy of a scenario stack (hard links from uv's cache, built into a temporary folder:
the shared stacks are used by other runs at the same time) is diagnosed; every ``__pycache__``
folder and ``.pyc`` file in it is listed before and after. A ``.pth`` that writes a marker file
and one that sleeps 30 s are planted: ``--quick`` must not write the marker nor wait.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario


@pytest.fixture(scope="module")
def private_stack() -> Iterator[stacks.Stack]:
    """The GPU package without CUDA libraries (the probes load it natively and in Python).

    In a folder of its own, not pytest's: pytest keeps only its last three base folders, and
    another run of the same user removed one under this test."""
    saved = stacks.STACKS_DIR
    stacks.STACKS_DIR = Path(tempfile.mkdtemp(prefix="gfd-untouched-"))
    try:
        stack = stacks.STACKS["gpu13-bare"]
        stacks.build(stack)
        yield stack
    finally:
        shutil.rmtree(stacks.STACKS_DIR, ignore_errors=True)
        stacks.STACKS_DIR = saved


def _bytecode(root: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        found.update(os.path.join(folder, name) for name in dirs if name == "__pycache__")
        found.update(os.path.join(folder, name) for name in files if name.endswith((".pyc", ".pyo")))
    return found


def _env() -> dict[str, str]:
    """The scenario's environment as a customer's shell has it: bytecode writing not turned off
    (this machine's own environment sets PYTHONDONTWRITEBYTECODE, which hid the problem)."""
    env = stacks.clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _diagnose(stack: stacks.Stack, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    cmd = [*runs.tool_command(), "diagnose", "--python", str(stack.python_exe), "--json", *extra]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300, check=False)
    return proc, time.monotonic() - started


def test_a_whole_diagnosis_writes_no_bytecode_into_the_environment(private_stack: stacks.Stack) -> None:
    before = _bytecode(private_stack.path)
    proc, _ = _diagnose(private_stack, "--runs", "2")
    assert proc.returncode in (0, 1, 2), proc.stderr[-3000:]
    assert '"inference"' in proc.stdout  # the whole diagnosis ran, test inference included
    assert _bytecode(private_stack.path) - before == set()


def test_quick_runs_none_of_the_environments_pth_code(private_stack: stacks.Stack, tmp_path: Path) -> None:
    site = stacks.site_packages(private_stack)
    marker = tmp_path / "pth-ran"
    extra = tmp_path / "added-by-pth"
    extra.mkdir()
    planted = {
        "aa_writes.pth": f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n",
        "zz_sleeps.pth": "import time; time.sleep(30)\n",
        "zz_folder.pth": f"{extra}\n",
    }
    for name, text in planted.items():
        (site / name).write_text(text)
    try:
        before = _bytecode(private_stack.path)
        proc, seconds = _diagnose(private_stack, "--quick")
        assert proc.returncode in (0, 1, 2), proc.stderr[-3000:]
        assert not marker.exists()
        assert seconds < 15, seconds  # a hanging .pth made --quick wait for it (16 s before)
        assert _bytecode(private_stack.path) - before == set()
        # The listing still sees what the .pth adds to the import path, without running it.
        from fallback_doctor.core.readers.collect.python_env import collect_python_env

        facts = collect_python_env(str(private_stack.python_exe), _env())
        assert str(extra) in facts.sys_path and str(site) in facts.site_packages
        assert facts.prefix == str(private_stack.path)
        assert any(
            item.name == "onnxruntime-gpu" or item.name == "onnxruntime_gpu" for item in facts.distributions
        )
        assert not marker.exists()
    finally:
        for name in planted:
            (site / name).unlink()
