"""Compile the C test doubles in this folder into shared libraries laid out like a driver's.

Used by tests/core/driver/conftest.py. A library is compiled once per test session into
a temporary directory, with the results chosen by -D defines, and the directory is put
on LD_LIBRARY_PATH of a child process: the loader finds it exactly as it finds the real
libcuda.so.1 / libnvidia-ml.so.1 (which this machine does not have).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

FAKES = Path(__file__).resolve().parent


def gcc_available() -> bool:
    """Whether a C compiler is on PATH (the tests that need one skip without it)."""
    return shutil.which("gcc") is not None


def compile_library(
    source: str,
    directory: Path,
    file_name: str,
    defines: Mapping[str, object] | None = None,
    links: Sequence[str] = (),
) -> Path:
    """Build ``source`` (a file in tests/fakes) into ``directory/file_name``.

    ``defines`` become -DNAME or -DNAME=value (strings are passed as C string literals);
    ``links`` are further names (sonames) made as symlinks to the file, as a driver
    package lays out libnvidia-ml.so.1 -> libnvidia-ml.so.580.65.06.
    """
    directory.mkdir(parents=True, exist_ok=True)
    output = directory / file_name
    command = ["gcc", "-shared", "-fPIC", "-O0", "-o", str(output), str(FAKES / source)]
    for name, value in (defines or {}).items():
        if value is None or value is True:
            command.append(f"-D{name}")
        elif isinstance(value, str):
            command.append(f'-D{name}="{value}"')
        else:
            command.append(f"-D{name}={value}")
    subprocess.run(command, check=True, capture_output=True, text=True)
    for link in links:
        target = directory / link
        if target.exists() or target.is_symlink():
            target.unlink()
        os.symlink(file_name, target)
    return output


def empty_libraries(directory: Path, names: Sequence[str]) -> None:
    """Build harmless libraries under each name (cuDNN's sub-libraries for a fake cuDNN)."""
    first: Path | None = None
    for name in names:
        if first is None:
            first = compile_library("fake_library.c", directory, name)
        else:
            shutil.copyfile(first, directory / name)


def run_collectors(
    request: dict[str, Any], library_dirs: Sequence[Path], extra_env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Collect and check in a fresh interpreter whose loader path holds ``library_dirs``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CUDA_", "NVIDIA_"))}
    env["LD_LIBRARY_PATH"] = os.pathsep.join(str(path) for path in library_dirs)
    env.update(extra_env or {})
    completed = subprocess.run(
        [sys.executable, str(FAKES / "run_collectors.py"), json.dumps(request)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def finding_ids(result: dict[str, Any]) -> list[str]:
    """The ids of the findings a run_collectors result holds, in check order."""
    return [finding["id"] for finding in result["findings"]]
