"""Library file names of the GPU stack: split into stem and version, tell the family and major.

Linux names look like ``libcublasLt.so.13``, ``libcudart.so.13.0.96``, ``libcudart.so.11.0``
(CUDA 11 sonames carry the minor), ``libnvrtc-builtins.so.13.5``. Windows names look like
``cublasLt64_13.dll``, ``cudart64_110.dll`` (CUDA 11: major and minor run together),
``nvrtc64_130_0.dll``, ``cudnn_ops64_9.dll``, ``nvinfer_10.dll``, ``zlibwapi.dll``.
Sources: compat-reference §5.1 and §3.2 (file names read from the real wheels).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINUX = re.compile(r"^(?P<stem>.+?\.so)(?:\.(?P<version>\d+(?:\.\d+)*))?$")
_WIN64 = re.compile(r"^(?P<stem>.+?)64_(?P<version>\d+(?:_\d+)*)\.dll$", re.IGNORECASE)
_WIN_UNDERSCORE = re.compile(r"^(?P<stem>.+?)_(?P<version>\d+)\.dll$", re.IGNORECASE)

CUDA_FAMILIES: tuple[str, ...] = (
    "cudart",
    "cublas",
    "cublasLt",
    "cufft",
    "curand",
    "nvrtc",
    "nvJitLink",
)
"""The CUDA runtime libraries (cause cuda_runtime_missing): corpus README."""

CUDNN_SUBLIBRARIES_9: tuple[str, ...] = (
    "cudnn_graph",
    "cudnn_ops",
    "cudnn_cnn",
    "cudnn_adv",
    "cudnn_engines_precompiled",
    "cudnn_engines_runtime_compiled",
    "cudnn_heuristic",
)
"""cuDNN 9 sub-libraries that libcudnn.so.9 opens at first use (compat-reference §3.2)."""

CUDNN_SUBLIBRARIES_8: tuple[str, ...] = (
    "cudnn_ops_infer",
    "cudnn_ops_train",
    "cudnn_cnn_infer",
    "cudnn_cnn_train",
    "cudnn_adv_infer",
    "cudnn_adv_train",
)


@dataclass(frozen=True)
class LibraryName:
    """A library file name split into its family (stem without lib/.so) and version."""

    name: str
    family: str
    """``cublasLt``, ``cudart``, ``cudnn_graph``, ``nvinfer`` …"""
    version: str | None
    """The version in the name: ``13``, ``13.0.96``, ``11.0``; Windows ``13``, ``110``, ``130_0``."""
    windows: bool

    @property
    def major(self) -> int | None:
        """The major version: 13 for .so.13.0.96; 11 for cudart64_110.dll; 13 for nvrtc64_130_0."""
        if self.version is None:
            return None
        head = re.split(r"[._]", self.version)[0]
        if not head.isdigit():
            return None
        if self.windows and len(head) == 3 and "_" not in self.version and self.family in ("cudart",):
            return int(head[:-1])
        if self.windows and "_" in self.version and len(head) == 3:
            return int(head[:-1])
        return int(head)


def parse_library_name(name: str) -> LibraryName | None:
    """Split a Linux or Windows library file name; None when it is not a library name."""
    match = _LINUX.match(name)
    if match is not None:
        stem = match["stem"][:-3]
        family = stem[3:] if stem.startswith("lib") else stem
        return LibraryName(name=name, family=family, version=match["version"], windows=False)
    if not name.lower().endswith(".dll"):
        return None
    match = _WIN64.match(name) or _WIN_UNDERSCORE.match(name)
    if match is not None:
        return LibraryName(name=name, family=match["stem"], version=match["version"], windows=True)
    return LibraryName(name=name, family=name[:-4], version=None, windows=True)


def version_from_filename(name: str) -> str | None:
    """The version a file name carries: ``libcudart.so.13.0.96`` -> ``13.0.96``; None if none."""
    parsed = parse_library_name(name)
    return parsed.version if parsed else None


def same_soname_line(needed: str, candidate: str) -> bool:
    """Whether ``candidate`` is a fuller version of the same soname (``.so.13`` vs ``.so.13.0.96``).

    Such a file is the same library, not another major.
    """
    if candidate == needed:
        return True
    return candidate.startswith(needed + ".")


def is_other_major(needed: str, candidate: str) -> bool:
    """Whether ``candidate`` is the same library as ``needed`` but another version line.

    ``libcublasLt.so.12`` is another major for ``libcublasLt.so.13``; ``libcudart.so.13.0.96``
    is not (same soname line); unversioned ``libcudart.so`` is not (a development link).
    """
    wanted = parse_library_name(needed)
    found = parse_library_name(candidate)
    if wanted is None or found is None or found.version is None or wanted.version is None:
        return False
    if wanted.windows != found.windows:
        return False
    if wanted.windows:
        if wanted.family.lower() != found.family.lower():
            return False
        return wanted.version != found.version
    if wanted.family != found.family:
        return False
    return not same_soname_line(needed, candidate)


def linux_name(family: str, version: str) -> str:
    """``libcublasLt.so.13`` from (``cublasLt``, ``13``)."""
    return f"lib{family}.so.{version}"


def cuda_runtime_names(cuda_major: int, windows: bool = False) -> dict[str, str]:
    """The file names of each CUDA runtime family for a CUDA major (compat-reference §5.1)."""
    if windows:
        minor_suffix = {11: "110", 12: "12", 13: "13"}.get(cuda_major, str(cuda_major))
        cufft = {11: "10", 12: "11", 13: "12"}.get(cuda_major, "")
        return {
            "cudart": f"cudart64_{minor_suffix}.dll",
            "cublas": f"cublas64_{cuda_major}.dll",
            "cublasLt": f"cublasLt64_{cuda_major}.dll",
            "cufft": f"cufft64_{cufft}.dll",
            "curand": "curand64_10.dll",
            "nvrtc": f"nvrtc64_{cuda_major}0_0.dll",
        }
    cudart = "11.0" if cuda_major == 11 else str(cuda_major)
    cufft = {11: "10", 12: "11", 13: "12"}.get(cuda_major, "")
    names = {
        "cudart": linux_name("cudart", cudart),
        "cublas": linux_name("cublas", str(cuda_major)),
        "cublasLt": linux_name("cublasLt", str(cuda_major)),
        "cufft": linux_name("cufft", cufft),
        "curand": linux_name("curand", "10"),
    }
    if cuda_major >= 12:
        names["nvrtc"] = linux_name("nvrtc", str(cuda_major))
        names["nvJitLink"] = linux_name("nvJitLink", str(cuda_major))
    return names


def family_of(name: str) -> str | None:
    """The family (``cublasLt``) of a library file name, None for a non-library name."""
    parsed = parse_library_name(name)
    return parsed.family if parsed else None


def is_cuda_runtime(name: str) -> bool:
    """Whether a name is one of the CUDA runtime libraries (cudart, cublas, cublasLt, …)."""
    family = family_of(name)
    return family is not None and family.lower() in {item.lower() for item in CUDA_FAMILIES}


def is_cudnn(name: str) -> bool:
    """Whether a name is cuDNN or one of its sub-libraries."""
    family = family_of(name)
    return family is not None and family.lower().startswith("cudnn")


def is_tensorrt(name: str) -> bool:
    """Whether a name is a TensorRT library (nvinfer*, nvonnxparser*)."""
    family = family_of(name)
    return family is not None and family.lower().startswith(("nvinfer", "nvonnxparser"))


def cudnn_sublibrary_names(cudnn_name: str) -> tuple[str, ...]:
    """The sub-libraries the cuDNN shim ``cudnn_name`` opens at first use, same naming scheme."""
    parsed = parse_library_name(cudnn_name)
    if parsed is None or parsed.family.lower() != "cudnn" or parsed.major is None:
        return ()
    families = CUDNN_SUBLIBRARIES_9 if parsed.major >= 9 else CUDNN_SUBLIBRARIES_8
    if parsed.windows:
        return tuple(f"{family}64_{parsed.major}.dll" for family in families)
    return tuple(linux_name(family, str(parsed.major)) for family in families)


_MAJOR_IS_CUDA = frozenset({"cudart", "cublas", "cublaslt", "nvrtc", "nvjitlink"})
"""Families whose own major is the CUDA major (compat-reference §5.1)."""

_CUFFT_CUDA: dict[int, int] = {10: 11, 11: 12, 12: 13}
"""cuFFT major -> CUDA major (compat-reference §5.1: libcufft.so.10/11/12 for CUDA 11/12/13)."""

_WHEEL_DIR = re.compile(r"[\\/]nvidia[\\/]cu(\d+)[\\/]")
_TOOLKIT_DIR = re.compile(r"[\\/]cuda-(\d+)\.\d+[\\/]|[\\/]CUDA[\\/]v(\d+)\.\d+[\\/]", re.IGNORECASE)


def cuda_major_of_name(name: str) -> int | None:
    """The CUDA major a CUDA library file name belongs to, where the name says so; else None.

    ``libcudart.so.13`` -> 13, ``cublasLt64_12.dll`` -> 12, ``libcufft.so.11`` -> 12 (cuFFT 11
    ships with CUDA 12). cuRAND keeps ``libcurand.so.10`` in CUDA 11, 12 and 13, so only a full
    version in the real file name tells: 10.4.x is CUDA 13, 10.3.1 to 10.3.x CUDA 12, 10.3.0 and
    10.2.x CUDA 11 (the versions of nvidia-curand, nvidia-curand-cu12 and nvidia-curand-cu11 on
    PyPI). Other libraries (cuDNN, TensorRT) have their own versions and give None.
    """
    parsed = parse_library_name(name)
    if parsed is None or parsed.major is None:
        return None
    family = parsed.family.lower()
    if family in _MAJOR_IS_CUDA:
        return parsed.major
    if family == "cufft":
        return _CUFFT_CUDA.get(parsed.major)
    if family == "curand" and parsed.version and not parsed.windows:
        parts = [int(part) for part in parsed.version.split(".") if part.isdigit()]
        if len(parts) >= 3 and parts[0] == 10:
            minor, patch = parts[1], parts[2]
            if minor >= 4:
                return 13
            if minor == 3:
                return 12 if patch >= 1 else 11
            return 11
    return None


def cuda_major_of_path(path: str) -> int | None:
    """The CUDA major a folder names: pip's ``site-packages/nvidia/cu13/lib`` (CUDA 13 wheels),
    a toolkit's ``/usr/local/cuda-12.4/lib64`` or ``C:\\...\\CUDA\\v12.4\\bin``; else None."""
    for pattern in (_WHEEL_DIR, _TOOLKIT_DIR):
        match = pattern.search(path)
        if match:
            return int(next(group for group in match.groups() if group))
    return None
