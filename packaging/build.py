"""Build the frozen one-folder tool and its archive: ``make package`` (or ``python packaging/build.py``).

Steps: the tool's wheel (``pip wheel``), installed into a staging folder (what ``pip install``
installs, nothing else), PyInstaller with packaging/fallback-doctor.spec, a check that no CUDA,
cuDNN, TensorRT or ONNX Runtime library got in, then ``fallback-doctor-<version>-linux-x86_64.tar.gz``.

``--cache`` builds into ``~/.cache/gpu-fallback-doctor/frozen/<source hash>/`` and reuses a
finished build there (the packaging tests and CI use it: a clean clone does not rebuild what an
unchanged source already built). Prints the folder of the build as its last line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "fallback-doctor.spec"
CACHE = Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor")) / "frozen"
NAME = "fallback-doctor"
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "launcher",
    "core",
    "cli",
    "gui",
    "resources",
    "packaging/build.py",
    "packaging/entry.py",
    "packaging/fallback-doctor.spec",
    "packaging/gfd_first_paint.py",
)
"""What goes into the frozen folder: its hash keys the cache (the .deb has its own, in the tests)."""
MARKER = ".gfd-frozen-key"

TARGET_ONLY = re.compile(
    r"^(lib)?(cuda|cudart|cublas|cudnn|cufft|curand|cusolver|cusparse|nvrtc|nvjitlink|nvinfer"
    r"|nvonnxparser|onnxruntime|nccl|nvidia-ml)",
    re.IGNORECASE,
)
SHARED_LIBRARY = re.compile(r"\.so(\.[0-9.]+)?$|\.dll$|\.pyd$|\.dylib$", re.IGNORECASE)


def version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    return match.group(1) if match else "0"


def platform_tag() -> str:
    system = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    return f"{system}-{platform.machine().lower().replace('amd64', 'x86_64')}"


def source_key() -> str:
    """A hash of every source file of the build, the interpreter and PyInstaller's version."""
    import PyInstaller

    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{PyInstaller.__version__}|{platform_tag()}".encode())
    for top in SOURCES:
        base = ROOT / top
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _run(cmd: list[str], **kwargs: object) -> None:
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def stage(work: Path) -> Path:
    """The tool's wheel, and a folder with it installed (no dependencies: they come from the venv)."""
    wheels = work / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
        stderr=subprocess.DEVNULL,
    )
    target = work / "stage"
    shutil.rmtree(target, ignore_errors=True)
    wheel = next(wheels.glob("*.whl"))
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-compile",
            "--target",
            str(target),
            str(wheel),
        ]
    )
    return target


def check_folder(folder: Path) -> list[str]:
    """The libraries in the build that must be the target's own (an empty list when clean)."""
    return [
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if TARGET_ONLY.match(p.name) and SHARED_LIBRARY.search(p.name) and p.is_file()
    ]


def build(dist: Path, work: Path) -> Path:
    """Build the folder ``dist/fallback-doctor`` and its archive beside it; return the folder."""
    started = time.monotonic()
    work.mkdir(parents=True, exist_ok=True)
    staged = stage(work)
    env = dict(os.environ, GFD_STAGE=str(staged))
    _run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(dist),
            "--workpath",
            str(work / "pyinstaller"),
            str(SPEC),
        ],
        env=env,
        cwd=ROOT,
    )
    folder = dist / NAME
    leaked = check_folder(folder)
    if leaked:
        raise SystemExit(f"target-only libraries got into the build: {leaked}")
    archive = dist / f"{NAME}-{version()}-{platform_tag()}.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname=f"{NAME}-{version()}")
    print(f"built {folder} and {archive} in {time.monotonic() - started:.0f} s", flush=True)
    return folder


def cached_build() -> Path:
    """The build for the current sources, from the cache or built into it (file-locked)."""
    import fcntl

    key = source_key()
    home = CACHE / key
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (home / MARKER).is_file() and (home / "dist" / NAME / NAME).exists():
            return home / "dist" / NAME
        shutil.rmtree(home, ignore_errors=True)
        folder = build(home / "dist", home / "work")
        shutil.rmtree(home / "work", ignore_errors=True)
        (home / MARKER).write_text(key + "\n")
    builds = sorted((d for d in CACHE.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    for stale in builds[:-2]:  # keep the two newest builds (another branch's, this one's)
        if stale.name != key:
            shutil.rmtree(stale, ignore_errors=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", default=str(ROOT / "dist"), help="output folder (default: dist/)")
    parser.add_argument("--cache", action="store_true", help="build into (or reuse) the source-keyed cache")
    parser.add_argument("--key", action="store_true", help="print the source key and exit")
    args = parser.parse_args()
    if args.key:
        print(source_key())
        return 0
    folder = cached_build() if args.cache else build(Path(args.dist), ROOT / "build" / "package")
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
