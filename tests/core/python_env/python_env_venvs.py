"""Real throwaway virtual environments with real ONNX Runtime wheels, built once and reused.

Built under ~/.cache/gpu-fallback-doctor/venvs/python_env/ with uv, installs hard-linked
from uv's cache (the loader and our readers see real files). Wheels come from the local
wheel folder when it has them (/root/.cache/gfd-wheels), else from PyPI. ``--no-deps``:
what is inspected here is the onnxruntime package's own files, not numpy.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CACHE = Path(os.environ.get("GFD_TEST_CACHE", Path.home() / ".cache" / "gpu-fallback-doctor")) / "venvs"
ROOT = CACHE / "python_env"
WHEELS = Path(os.environ.get("GFD_WHEELS", "/root/.cache/gfd-wheels"))
PY38 = Path("/root/.pyenv/versions/3.8.18/bin/python3.8")
STAMP = ".gfd-complete"

# name -> install steps, in order (each step one `uv pip install`; order decides who overwrites whom)
SCENARIOS: dict[str, tuple[tuple[str, ...], ...]] = {
    "cpu_1_23_2": (("onnxruntime==1.23.2",),),
    "gpu_1_23_2": (("onnxruntime-gpu==1.23.2",),),
    "gpu_1_31_1": (("onnxruntime-gpu==1.31.1",),),
    # the classic accident: onnxruntime-gpu first, then something pulls in onnxruntime
    "gpu_then_cpu": (("onnxruntime-gpu==1.23.2",), ("onnxruntime==1.23.2",)),
    "cpu_then_gpu": (("onnxruntime==1.23.2",), ("onnxruntime-gpu==1.23.2",)),
}


def uv() -> str:
    """The uv executable beside the test interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return str(beside)
    found = shutil.which("uv")
    if found is None:
        raise RuntimeError("uv is not installed (it is in the project's test extra)")
    return found


@contextmanager
def _locked(name: str) -> Iterator[None]:
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}")


def _install(python: Path, requirements: tuple[str, ...]) -> None:
    base = [uv(), "pip", "install", "-q", "--python", str(python), "--link-mode", "hardlink", "--no-deps"]
    if WHEELS.is_dir():
        try:
            _run([*base, "--offline", "--find-links", str(WHEELS), *requirements])
            return
        except RuntimeError:
            pass
    _run([*base, *requirements])


def venv_python(venv: Path) -> Path:
    """The interpreter inside a venv folder."""
    return venv / "bin" / "python"


def site_packages(venv: Path) -> Path:
    """The single site-packages folder of a venv."""
    return next((venv / "lib").glob("python3*/site-packages"))


def build(name: str, steps: tuple[tuple[str, ...], ...], base_python: str | None = None) -> Path:
    """Create (once) the venv ``name`` with the install ``steps``; return its folder."""
    venv = ROOT / name
    if (venv / STAMP).exists():
        return venv
    with _locked(name):
        if (venv / STAMP).exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        _run([uv(), "venv", "-q", "--python", base_python or sys.executable, str(venv)])
        for requirements in steps:
            _install(venv_python(venv), requirements)
        (venv / STAMP).write_text("ok\n")
    return venv


def scenario(name: str) -> Path:
    """One of SCENARIOS, built once."""
    return build(name, SCENARIOS[name])


def files_missing() -> Path:
    """Both packages installed, then onnxruntime uninstalled: the shared files are gone."""
    venv = ROOT / "both_then_uninstall_cpu"
    if (venv / STAMP).exists():
        return venv
    with _locked(venv.name):
        if not (venv / STAMP).exists():
            shutil.rmtree(venv, ignore_errors=True)
            _run([uv(), "venv", "-q", "--python", sys.executable, str(venv)])
            _install(venv_python(venv), ("onnxruntime-gpu==1.23.2",))
            _install(venv_python(venv), ("onnxruntime==1.23.2",))
            _run([uv(), "pip", "uninstall", "-q", "--python", str(venv_python(venv)), "onnxruntime"])
            (venv / STAMP).write_text("ok\n")
    return venv


def empty_py38() -> Path | None:
    """A Python 3.8 venv with nothing installed, or None where no 3.8 interpreter exists."""
    if not PY38.exists():
        return None
    return build("py38_empty", (), base_python=str(PY38))


WINDOWS_WHEEL = "onnxruntime_gpu-1.31.1-cp311-cp311-win_amd64.whl"
_WINDOWS_SKIP = ("onnxruntime/capi/onnxruntime.dll", "onnxruntime/capi/onnxruntime_pybind11_state.pyd")


def windows_site(search: tuple[Path, ...]) -> Path | None:
    """site-packages of the real win_amd64 onnxruntime-gpu 1.31.1 wheel, unpacked (no core DLLs).

    Found in ``search`` folders; None where the wheel is not on this machine.
    """
    wheel = next((folder / WINDOWS_WHEEL for folder in search if (folder / WINDOWS_WHEEL).exists()), None)
    if wheel is None:
        return None
    target = CACHE / "python_env" / "win_gpu_1_31_1" / "Lib" / "site-packages"
    stamp = target.parent.parent / STAMP
    if stamp.exists():
        return target
    with _locked("win_gpu_1_31_1"):
        if not stamp.exists():
            shutil.rmtree(target.parent.parent, ignore_errors=True)
            target.mkdir(parents=True)
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    wanted = member.startswith(("onnxruntime/capi/", "onnxruntime_gpu-"))
                    if (wanted and member not in _WINDOWS_SKIP) or member == "onnxruntime/__init__.py":
                        archive.extract(member, target)
            stamp.write_text("ok\n")
    return target
