"""Collect the GPU-stack library copies in the known places and each provider's dependency tree.

By hand: ``ldconfig -p | grep -E "cudart|cublas|cudnn|nvinfer"``, ``ls site-packages/nvidia/*/lib``,
``ldd /path/libonnxruntime_providers_cuda.so | grep "not found"``.

Known places only (no walk of the disk): LD_LIBRARY_PATH, the ldconfig cache, the default
directories, the NVIDIA wheels in site-packages (``nvidia/*/lib``, ``nvidia/cu13/lib``,
``nvidia/cudnn/lib``; Windows ``bin`` and ``bin/x86_64``), ``tensorrt_libs``, ``torch/lib``,
CUDA_PATH/CUDA_HOME, ``/usr/local/cuda*/lib64`` (and ``targets/*/lib``), WSL's
``/usr/lib/wsl/lib``, and the application's own directories (``extra_dirs``: its libPath).
"""

from __future__ import annotations

import glob
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from fallback_doctor.core.model.facts.libraries import DependencyReport, LibraryCopy, LibraryFacts
from fallback_doctor.core.readers.loader import names
from fallback_doctor.core.readers.loader.elf_cache import ElfReader, open_cache
from fallback_doctor.core.readers.loader.ldcache import DEFAULT_CACHE_PATH, LdCache, load_ld_cache
from fallback_doctor.core.readers.loader.realpaths import realpath_function
from fallback_doctor.core.readers.loader.resolve import DependencyResolver, DirectoryIndex
from fallback_doctor.core.readers.loader.search_path import (
    LinuxHost,
    detect_linux_host,
    split_search_path,
    split_windows_path,
    windows_system_dirs,
)

PLACE_LD_LIBRARY_PATH = "ld_library_path"
PLACE_LDCONFIG = "ldconfig"
PLACE_DEFAULT = "default_dir"
PLACE_LIB_PATH = "lib_path"
PLACE_NVIDIA_WHEEL = "nvidia_wheel"
PLACE_TENSORRT_WHEEL = "tensorrt_wheel"
PLACE_TORCH = "torch"
PLACE_CUDA_HOME = "cuda_home"
PLACE_USR_LOCAL_CUDA = "usr_local_cuda"
PLACE_WSL = "wsl"
PLACE_PATH = "path"
PLACE_SYSTEM32 = "system32"
PLACE_ORT = "onnxruntime"

_WSL_DIR = "/usr/lib/wsl/lib"


_STACK_STEMS = re.compile(
    r"cud|cubl|cufft|curand|nvrtc|nvjitlink|nvinfer|nvonnx|nvparsers|zlibwapi", re.IGNORECASE
)
"""A cheap first look: system folders hold thousands of files, and only these stems can matter."""


def _is_stack_library(name: str) -> bool:
    if not _STACK_STEMS.search(name):
        return False
    parsed = names.parse_library_name(name)
    if parsed is None:
        return False
    if not parsed.windows and parsed.version is None:
        return False  # development links (libcudart.so) are not what the loader takes
    family = parsed.family.lower()
    return (
        names.is_cuda_runtime(name)
        or family.startswith("cudnn")
        or names.is_tensorrt(name)
        or family in ("cuda", "nvcuda", "zlibwapi")
    )


def _site_dirs(site_packages: Sequence[str], windows: bool) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for site in site_packages:
        patterns = (
            ["nvidia/*/bin", "nvidia/*/bin/x86_64", "nvidia/*/bin/x64"]
            if windows
            else ["nvidia/*/lib", "nvidia/*/lib64"]
        )
        for pattern in patterns:
            for directory in sorted(glob.glob(os.path.join(site, pattern))):
                found.append((directory, PLACE_NVIDIA_WHEEL))
        for name in ("tensorrt_libs", "tensorrt"):
            directory = os.path.join(site, name)
            if os.path.isdir(directory):
                found.append((directory, PLACE_TENSORRT_WHEEL))
        torch_lib = os.path.join(site, "torch", "lib")
        if os.path.isdir(torch_lib):
            found.append((torch_lib, PLACE_TORCH))
    return found


def _cuda_home_dirs(env: Mapping[str, str], windows: bool) -> list[tuple[str, str]]:
    homes = [
        value
        for key, value in sorted(env.items())
        if key in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT") or key.startswith("CUDA_PATH_V")
    ]
    found: list[tuple[str, str]] = []
    subdirs = ("bin", "bin/x64", "bin/x86_64") if windows else ("lib64", "lib")
    for home in dict.fromkeys(homes):
        for sub in subdirs:
            found.append((os.path.join(home, sub), PLACE_CUDA_HOME))
        if not windows:
            for directory in sorted(glob.glob(os.path.join(home, "targets", "*", "lib"))):
                found.append((directory, PLACE_CUDA_HOME))
    return found


def _system_dirs(windows: bool) -> list[tuple[str, str]]:
    if windows:
        found: list[tuple[str, str]] = []
        for pattern in (
            "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*/bin",
            "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*/bin/x64",
            "C:/Program Files/NVIDIA/CUDNN/v*/bin/*",
        ):
            found.extend((item, PLACE_CUDA_HOME) for item in sorted(glob.glob(pattern)))
        return found
    found = []
    for pattern in ("/usr/local/cuda*/lib64", "/usr/local/cuda*/lib", "/usr/local/cuda*/targets/*/lib"):
        found.extend((item, PLACE_USR_LOCAL_CUDA) for item in sorted(glob.glob(pattern)))
    if os.path.isdir(_WSL_DIR):
        found.append((_WSL_DIR, PLACE_WSL))
    return found


def _unique_dirs(items: Sequence[tuple[str, str]], realpath: Callable[[str], str]) -> list[tuple[str, str]]:
    """First place wins; a directory reached twice (symlinks) is listed once."""
    seen: set[str] = set()
    unique: list[tuple[str, str]] = []
    for directory, place in items:
        if not directory or not os.path.isdir(directory):
            continue
        real = realpath(directory)
        if real in seen:
            continue
        seen.add(real)
        unique.append((os.path.normpath(directory), place))
    return unique


def _copies_in(
    directory: str,
    place: str,
    loader_dirs: set[str],
    cache: LdCache | None,
    windows: bool,
    index: DirectoryIndex,
    realpath: Callable[[str], str],
) -> list[LibraryCopy]:
    # The resolver reads the same folders: one listing each, shared through ``index``.
    entries = sorted(index.listing(directory).values())
    chosen: dict[str, str] = {}
    for name in entries:
        if not _is_stack_library(name):
            continue
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            continue
        real = realpath(path)
        current = chosen.get(real)
        # One copy per file: keep the shortest name (the soname link, not libx.so.13.0.96).
        if current is None or len(name) < len(current):
            chosen[real] = name
    copies: list[LibraryCopy] = []
    real_dir = realpath(directory)
    for real, name in sorted(chosen.items(), key=lambda item: item[1]):
        path = os.path.join(directory, name)
        version = names.version_from_filename(os.path.basename(real)) or names.version_from_filename(name)
        on_path = os.path.normpath(directory) in loader_dirs or real_dir in loader_dirs
        if not on_path and cache is not None and not windows:
            on_path = any(realpath(item) == real for item in cache.lookup(name))
        copies.append(LibraryCopy(path=path, name=name, version=version, place=place, on_loader_path=on_path))
    return copies


def collect_libraries(
    *,
    site_packages: Sequence[str],
    provider_libraries: Sequence[tuple[str, str]],
    env: Mapping[str, str],
    platform: str = sys.platform,
    extra_dirs: Sequence[str] = (),
    budget_s: float = 2.0,
    cache_path: str | None = DEFAULT_CACHE_PATH,
    system_places: bool = True,
    host: LinuxHost | None = None,
    persistent_cache: bool = True,
) -> LibraryFacts:
    """Inventory the GPU-stack libraries in the known places and resolve each provider's tree.

    By hand: ``ldconfig -p | grep -E "cudart|cublas|cudnn"`` and
    ``ldd /path/libonnxruntime_providers_cuda.so | grep "not found"``.
    ``cache_path=None`` ignores the ldconfig cache and ``system_places=False`` skips
    /usr/local/cuda*, WSL and the Windows toolkit folders (for hermetic tests).
    Each folder is listed once (the inventory and the resolver share the listing); the ELF
    dynamic sections read are kept by file identity in the user's cache directory
    (core/readers/cache.py; ``persistent_cache=False`` keeps them in memory only).
    """
    deadline = time.monotonic() + budget_s
    windows = platform.startswith("win")
    cache = load_ld_cache(cache_path) if (cache_path is not None and not windows) else None

    loader_dirs_ordered, search_order, places, linux_host = _loader_places(env, windows, cache, host)
    provider_dirs = [(os.path.dirname(path), PLACE_ORT) for _provider, path in provider_libraries]
    places.extend((item, PLACE_LIB_PATH) for item in extra_dirs)
    places.extend(_site_dirs(site_packages, windows))
    places.extend(_cuda_home_dirs(env, windows))
    if system_places:
        places.extend(_system_dirs(windows))
    places.extend(provider_dirs)
    realpath = realpath_function()
    unique = _unique_dirs(places, realpath)
    loader_dirs = {os.path.normpath(item) for item in loader_dirs_ordered}
    loader_dirs |= {realpath(item) for item in loader_dirs_ordered}

    index = DirectoryIndex(windows=windows)
    inventory: list[LibraryCopy] = []
    exhausted = False
    for directory, place in unique:
        if time.monotonic() > deadline:
            exhausted = True
            break
        inventory.extend(_copies_in(directory, place, loader_dirs, cache, windows, index, realpath))

    search_dirs = tuple(dict.fromkeys(search_order))

    resolver = DependencyResolver(
        env=env,
        platform="win32" if windows else "linux",
        cache=cache,
        host=linux_host,
        known_dirs=[directory for directory, _place in unique],
        elf=ElfReader(open_cache(persistent=persistent_cache)),
        index=index,
        realpath=realpath,
    )
    reports: list[DependencyReport] = []
    for provider, path in provider_libraries:
        preloaded = _ort_preloaded(path, windows)
        report = resolver.resolve(provider, path, preloaded=preloaded, deadline=deadline)
        exhausted = exhausted or report.budget_exhausted
        reports.append(report)
    resolver.elf.save()
    return LibraryFacts(
        search_dirs=search_dirs,
        inventory=tuple(inventory),
        reports=tuple(reports),
        budget_exhausted=exhausted,
    )


def _loader_places(
    env: Mapping[str, str], windows: bool, cache: LdCache | None, host: LinuxHost | None
) -> tuple[list[str], list[str], list[tuple[str, str]], LinuxHost | None]:
    """The loader's own folders in its order, the search order, and each folder's place.

    By hand: ``echo $LD_LIBRARY_PATH; ldconfig -p`` (Linux) or ``echo %PATH%`` (Windows).
    """
    places: list[tuple[str, str]]
    if windows:
        system32, _system16, windows_dir = windows_system_dirs(env)
        path_dirs = split_windows_path(env.get("PATH") or env.get("Path"))
        loader_dirs_ordered = [system32, windows_dir, *path_dirs]
        search_order = loader_dirs_ordered
        places = [
            *((item, PLACE_PATH) for item in path_dirs),
            (system32, PLACE_SYSTEM32),
        ]
        linux_host = None
    else:
        linux_host = host or detect_linux_host()
        ld_dirs = [item for item in split_search_path(env.get("LD_LIBRARY_PATH")) if item != "."]
        cache_dirs = (
            list(dict.fromkeys(os.path.dirname(entry.path) for entry in cache.entries))
            if cache is not None
            else []
        )
        loader_dirs_ordered = [*ld_dirs, *linux_host.default_dirs]
        search_order = [*ld_dirs, *cache_dirs, *linux_host.default_dirs]
        places = [
            *((item, PLACE_LD_LIBRARY_PATH) for item in ld_dirs),
            *((item, PLACE_LDCONFIG) for item in cache_dirs),
            *((item, PLACE_DEFAULT) for item in linux_host.default_dirs),
        ]
    return loader_dirs_ordered, search_order, places, linux_host


def _ort_preloaded(provider_path: str, windows: bool) -> dict[str, str]:
    """What ONNX Runtime has loaded before it opens a provider: its providers_shared library.

    onnxruntime_pybind11_state loads libonnxruntime_providers_shared.so (RTLD_GLOBAL) from its
    own directory before any provider; on Windows the provider imports
    onnxruntime_providers_shared.dll, found in the provider's directory.
    """
    name = "onnxruntime_providers_shared.dll" if windows else "libonnxruntime_providers_shared.so"
    sibling = os.path.join(os.path.dirname(provider_path), name)
    return {name: sibling} if os.path.exists(sibling) else {}
