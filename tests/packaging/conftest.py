"""The frozen build for the packaging tests: built once per source hash, outside the clone.

``frozen_exe`` runs ``packaging/build.py --cache``: the build of the current sources lives in
``~/.cache/gpu-fallback-doctor/frozen/<hash>/`` (GFD_CACHE_DIR moves it) and is reused while no
source file changes (a cold build takes about two minutes on two cores). The build time is printed
in the terminal summary. Run only these: ``make package-test`` (``pytest -m packaging``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_TIMES: dict[str, float] = {}


@pytest.fixture(scope="session")
def frozen_exe() -> Path:
    """The frozen executable of the current sources (built into the cache when missing)."""
    started = time.monotonic()
    proc = subprocess.run(
        ["nice", "-n", "10", sys.executable, str(ROOT / "packaging" / "build.py"), "--cache"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    _TIMES["frozen build (0 when reused from the cache)"] = time.monotonic() - started
    if proc.returncode != 0:
        pytest.fail(f"the frozen build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}", pytrace=False)
    folder = Path(proc.stdout.strip().splitlines()[-1])
    exe = folder / "fallback-doctor"
    assert exe.is_file() and os.access(exe, os.X_OK), proc.stdout[-2000:]
    return exe


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How long getting the frozen build took."""
    if _TIMES:
        terminalreporter.section("frozen build")
        for name, seconds in _TIMES.items():
            terminalreporter.write_line(f"{name:50} {seconds:6.1f} s")
