"""The environments of the library strategies: the NVIDIA wheels' folders, a loader path put first.

Shared by the Python probe (core/readers/inference/python_probe.py) and the C-API probe (capi.py).
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def python_lib_dirs(python: str) -> list[str]:
    """The NVIDIA wheels' library folders of an environment: ``site-packages/nvidia/*/lib``.

    What ``onnxruntime.preload_dlls()`` loads from, and what ``LD_LIBRARY_PATH`` needs when the
    wheels are installed but not found. By hand: ``ls <venv>/lib/python3*/site-packages/nvidia/*/lib``.
    """
    prefix = Path(os.path.abspath(Path(python).parent.parent))
    patterns = [
        str(prefix / "lib" / "python3*" / "site-packages" / "nvidia" / "*" / "lib"),
        str(prefix / "Lib" / "site-packages" / "nvidia" / "*" / "bin"),
    ]
    found: list[str] = []
    for pattern in patterns:
        for folder in sorted(glob.glob(pattern)):
            if any(name.endswith((".so", ".dll")) or ".so." in name for name in os.listdir(folder)):
                found.append(folder)
    return found


def lib_first_env(env: Mapping[str, str], directories: Sequence[str]) -> dict[str, str]:
    """``env`` with ``directories`` first on the loader path (LD_LIBRARY_PATH; PATH on Windows)."""
    variable = "PATH" if sys.platform == "win32" else "LD_LIBRARY_PATH"
    result = dict(env)
    existing = [part for part in result.get(variable, "").split(os.pathsep) if part]
    wanted = [str(d) for d in directories if d]
    result[variable] = os.pathsep.join(wanted + [part for part in existing if part not in wanted])
    return result
