"""Real child processes for the process tests: they load real ONNX Runtime and CUDA libraries.

The libraries come from the scenario stacks (tests/scenarios/scenario_stacks.py: real wheels,
built once under ~/.cache/gpu-fallback-doctor/stacks). A child loads them with ctypes, prints
"ready", and waits on its standard input; ``running_child`` kills it (and its group) on exit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scenarios"))

import scenario_stacks as stacks

SITE = "lib/python3.11/site-packages"

LOADER = """
import ctypes, sys, time
for path in sys.argv[1:]:
    ctypes.CDLL(path)
print("ready", flush=True)
sys.stdin.read()
"""


def stack_dir(name: str) -> Path:
    """The built stack's site-packages (built once, then reused)."""
    stack = stacks.STACKS[name]
    stacks.build(stack)
    return stack.path / SITE


def ort_core(name: str) -> Path:
    """The stack's real libonnxruntime.so.1.x (the C library the wheel ships in capi/)."""
    return next((stack_dir(name) / "onnxruntime" / "capi").glob("libonnxruntime.so.1*"))


def private_copy(library: Path, folder: Path) -> Path:
    """The library under ``folder`` (a hard link where possible), so maps names a unique path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / library.name
    try:
        os.link(library, target)
    except OSError:
        shutil.copy2(library, target)
    return target


@contextlib.contextmanager
def running_child(
    libraries: Sequence[str | Path],
    env: Mapping[str, str],
    *,
    argv_prefix: Sequence[str] = (),
    script: str | None = LOADER,
    python: str = sys.executable,
) -> Iterator[subprocess.Popen[str]]:
    """A child that has mapped ``libraries`` (absolute paths or sonames), killed on exit.

    ``script=None`` runs ``python *libraries`` (the first being a script file that prints "ready").
    """
    child = subprocess.Popen(
        [*argv_prefix, python, *(("-c", script) if script is not None else ()), *map(str, libraries)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if line.strip() != "ready":
            child.kill()
            _, err = child.communicate(timeout=10)
            raise AssertionError(f"child did not load its libraries: {err[-2000:]}")
        yield child
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=10)


def base_env(**extra: str) -> dict[str, str]:
    """A small, known environment (PATH and HOME only) plus ``extra``."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    env.update(extra)
    return env
