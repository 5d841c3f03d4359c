"""The offline wheelhouse: the tool's wheel and every dependency's wheel, and the script that installs them.

    python packaging/wheelhouse.py [--python 3.11 --python 3.12 ...] [--glibc 2.28] [--out dist]

Writes ``fallback-doctor-wheelhouse-<version>.tar`` holding ``wheels/`` (``pip download
--only-binary=:all:`` for each Python version, Linux x86_64, manylinux up to ``--glibc``),
``install.sh`` and ``README.txt``. On the server, with no network::

    tar xf fallback-doctor-wheelhouse-<version>.tar && ./fallback-doctor-wheelhouse-<version>/install.sh

``install.sh`` makes the tool's own virtual environment (default ``~/.local/share/fallback-doctor/venv``;
never the application's) and runs ``pip install --no-index --find-links wheels``. The default
glibc 2.28 reaches RHEL 8 and Ubuntu 20.04: pip then takes the newest PySide6 built for it.
Wheels are already compressed: the archive is a plain tar.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import ROOT, version

PYTHONS = ("3.11", "3.12", "3.13")

INSTALL_SH = r"""#!/bin/sh
# Install GPU Fallback Doctor from the wheels beside this script, with no network.
# Usage: ./install.sh [VENV_DIR] (default ~/.local/share/fallback-doctor/venv); PYTHON=python3.12 ./install.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-${XDG_DATA_HOME:-$HOME/.local/share}/fallback-doctor/venv}
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "install.sh: $python is older than 3.11; set PYTHON=python3.11 (or newer)" >&2; exit 2; }
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --find-links "$here/wheels" gpu-fallback-doctor
echo "installed: $venv/bin/fallback-doctor"
echo "run: $venv/bin/fallback-doctor diagnose"
"""

README = """GPU Fallback Doctor {version}: offline wheelhouse

  ./install.sh [VENV_DIR]
      makes the tool's own virtual environment (default ~/.local/share/fallback-doctor/venv)
  VENV_DIR/bin/fallback-doctor diagnose

Wheels for CPython {pythons} on Linux x86_64 (manylinux, glibc {glibc} or newer). Nothing is installed
into the application's environment; pip runs with --no-index (no network).
"""


def platforms(glibc: str) -> list[str]:
    """manylinux tags from ``glibc`` down to 2.17 (manylinux2014), for ``pip download --platform``."""
    major, minor = (int(part) for part in glibc.split("."))
    tags = [f"manylinux_{major}_{m}_x86_64" for m in range(minor, 16, -1)]
    return [*tags, "manylinux2014_x86_64"]


def download(python: str, wheel: Path, target: Path, glibc: str) -> None:
    """Every wheel ``wheel`` needs on CPython ``python`` (pip resolves as it would there)."""
    abi = "cp" + python.replace(".", "")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--only-binary=:all:",
        "--dest",
        str(target),
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--abi",
        abi,
        "--abi",
        "abi3",
        "--abi",
        "none",
    ]
    for tag in platforms(glibc):
        cmd += ["--platform", tag]
    cmd += ["--platform", "any", str(wheel)]
    print("$ " + " ".join(cmd[3:8]) + f" ... --python-version {python}", flush=True)
    subprocess.run(cmd, check=True)


def build(pythons: list[str], glibc: str, out: Path) -> Path:
    name = f"fallback-doctor-wheelhouse-{version()}"
    with tempfile.TemporaryDirectory(prefix="gfd-wheelhouse-") as scratch:
        top = Path(scratch) / name
        wheels = top / "wheels"
        wheels.mkdir(parents=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        tool = next(wheels.glob("gpu_fallback_doctor-*.whl"))
        for python in pythons:
            download(python, tool, wheels, glibc)
        script = top / "install.sh"
        script.write_text(INSTALL_SH, encoding="utf-8")
        script.chmod(0o755)
        (top / "README.txt").write_text(
            README.format(version=version(), pythons=", ".join(pythons), glibc=glibc), encoding="utf-8"
        )
        out.mkdir(parents=True, exist_ok=True)
        archive = out / f"{name}.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(top, arcname=name)
    return archive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", help=f"CPython version (repeatable; default {PYTHONS})")
    parser.add_argument(
        "--glibc", default="2.28", help="the oldest glibc the wheels must run on (default 2.28)"
    )
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where the archive goes (default: dist/)")
    args = parser.parse_args()
    if shutil.which("tar") is None:
        print("note: tar is needed on the server to unpack the archive", file=sys.stderr)
    print(build(args.python or list(PYTHONS), args.glibc, Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
