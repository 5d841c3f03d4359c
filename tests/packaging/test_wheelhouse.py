"""The offline wheelhouse: built for this interpreter's Python, installed with no index, and run.

(``make wheelhouse`` builds it for 3.11, 3.12 and 3.13; here only the running version, whose
wheels pip's cache already holds.)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(1800)]


def test_wheelhouse_installs_offline_and_runs(tmp_path: Path) -> None:
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    built = subprocess.run(
        [
            sys.executable,
            str(ROOT / "packaging" / "wheelhouse.py"),
            "--python",
            python,
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    archive = Path(built.stdout.strip().splitlines()[-1])
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    top = next((tmp_path / "x").iterdir())
    wheels = {canonicalize_name(p.name.split("-")[0]): p for p in (top / "wheels").glob("*.whl")}

    # Every dependency the tool's wheel declares has its wheel there.
    with zipfile.ZipFile(wheels["gpu-fallback-doctor"]) as tool:
        metadata = next(n for n in tool.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            Requirement(line.split(":", 1)[1].strip())
            for line in tool.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    runtime = [req for req in requires if req.marker is None or req.marker.evaluate({"extra": ""})]
    assert runtime, requires
    assert not [req.name for req in runtime if canonicalize_name(req.name) not in wheels]

    venv = tmp_path / "venv"
    install = subprocess.run(
        [
            "env",
            "-i",
            f"HOME={tmp_path}",
            "PATH=/usr/bin:/bin",
            f"PYTHON={sys._base_executable}",  # type: ignore[attr-defined]
            str(top / "install.sh"),
            str(venv),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-3000:]
    proc = subprocess.run(
        ["env", "-i", str(venv / "bin" / "fallback-doctor"), "diagnose", "--quick", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert json.loads(proc.stdout)["target"]["python"] == str(venv / "bin" / "python")
