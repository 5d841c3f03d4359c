"""The wheel holds every package folder and its data, and the launcher folder is `fallback_doctor`.

setup.py finds the packages (every folder with an __init__.py under the mapped folders); this
test builds the real wheel from this checkout and compares its contents with the folders, so a
folder that imports in an editable install but is missing from the wheel fails here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The folder each top-level package name is built from (the same mapping as setup.py).
FOLDERS = {
    "fallback_doctor": "launcher",
    "fallback_doctor.core": "core",
    "fallback_doctor.cli": "cli",
    "fallback_doctor.gui": "gui",
    "fallback_doctor.resources": "resources",
}


def _package_folders() -> dict[str, Path]:
    """Every package of the checkout, by dotted name, from the folders on disk."""
    packages: dict[str, Path] = {}
    for name, folder in FOLDERS.items():
        base = ROOT / folder
        packages[name] = base
        if name == "fallback_doctor":
            continue  # the launcher folder holds modules only; core etc. are mapped separately
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            if "__pycache__" in relative.parts:
                continue
            packages[".".join((name, *relative.parts)) if relative.parts else name] = init.parent
    return packages


def test_setup_maps_the_same_folders() -> None:
    source = (ROOT / "setup.py").read_text(encoding="utf-8")
    for name, folder in FOLDERS.items():
        assert f'"{name}": "{folder}"' in source


@pytest.mark.slow
def test_built_wheel_holds_every_package_and_resource(tmp_path: Path) -> None:
    # Built from a copy: setuptools' build/ folder in the checkout would keep files of an earlier build.
    source = tmp_path / "source"
    for name in ("setup.py", "pyproject.toml", "README.md"):
        source.mkdir(exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    for folder in FOLDERS.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("gpu_fallback_doctor-*.whl")
    members = set(zipfile.ZipFile(wheel).namelist())

    missing: list[str] = []
    for name, folder in _package_folders().items():
        inside = name.replace(".", "/")
        for source in folder.glob("*.py"):
            if f"{inside}/{source.name}" not in members:
                missing.append(f"{inside}/{source.name}")
    resources = ROOT / "resources"
    for data in resources.rglob("*"):
        if data.is_file() and "__pycache__" not in data.parts and data.suffix != ".pyc":
            member = "fallback_doctor/resources/" + data.relative_to(resources).as_posix()
            if member not in members:
                missing.append(member)
    assert missing == []
    # The launcher folder is the top-level package itself, under its import name.
    assert {
        "fallback_doctor/__init__.py",
        "fallback_doctor/__main__.py",
        "fallback_doctor/launcher.py",
    } <= members
    assert not any(m.startswith(("launcher/", "package/", "tests/")) for m in members)
