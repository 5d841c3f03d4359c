"""CUDA and cuDNN libraries for a native server (no Python of its own, e.g. Bareun): NVIDIA's pip
wheels installed with ``pip --target`` into a folder of the server's, that folder's library
directories put on the server's loader path, the server restarted.

pip does not merge a ``--target`` install into a folder that already holds the same top-level
directory (every NVIDIA wheel installs under ``nvidia/``): it warns "Target directory … already
exists" and skips it. So the step always installs the whole set of what the providers need of
that CUDA major and find nowhere else, with ``--upgrade`` (which replaces ``nvidia/``): run again,
it gives the same folder, never one with half the libraries.

By hand: ``ls <folder>/nvidia/*/lib`` and, with the server's environment,
``ldd <libPath>/libonnxruntime_providers_cuda.so | grep "not found"``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from fallback_doctor.core.judgement.checks.resolution import cuda_major_needed
from fallback_doctor.core.language.evidence_text import manual_step
from fallback_doctor.core.model.result import ManualStep, RunStep, Step
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.loader import names

#: The interpreter that runs pip on the host: any Python 3 with pip; the server does not use it.
HOST_PYTHON = "python3"


def native_library_folder(snapshot: EnvironmentSnapshot, cuda_major: int) -> str | None:
    """Where a native server's NVIDIA libraries go: ``<root>/nvidia-cu<major>`` (the installation
    folder, else the folder above libPath); None when the target has neither."""
    target = snapshot.target
    if target is None:
        return None
    base = target.root or (os.path.dirname(target.lib_path.rstrip("/")) if target.lib_path else None)
    return os.path.join(base, f"nvidia-cu{cuda_major}") if base else None


def _needed_from_folder(snapshot: EnvironmentSnapshot, cuda_major: int, folder: str) -> list[str]:
    """Every CUDA runtime and cuDNN library name of this major that a provider needs and that
    the loader finds nowhere, or finds (or could find) only in ``folder``."""
    libraries = snapshot.libraries
    if libraries is None:
        return []
    inside = folder.rstrip("/") + "/"
    wanted: list[str] = []
    for report in libraries.reports:
        if cuda_major_needed(snapshot, report) != cuda_major:
            continue
        for item in report.resolutions:
            if not (names.is_cuda_runtime(item.name) or names.is_cudnn(item.name)):
                continue
            copies = [item.path] if item.path else list(item.installed_elsewhere)
            if not copies or all(copy.startswith(inside) for copy in copies):
                wanted.append(item.name)
    return list(dict.fromkeys(wanted))


def native_packages(
    snapshot: EnvironmentSnapshot, cuda_major: int, folder: str, absent: Sequence[str]
) -> list[str]:
    """The pip packages of that whole set (``absent`` names included), each once, cuDNN last."""
    from fallback_doctor.core.judgement.checks.cuda_major import packages_for
    from fallback_doctor.core.readers.knowledge.cuda_packages import cudnn_packages

    wanted = list(dict.fromkeys([*_needed_from_folder(snapshot, cuda_major, folder), *absent]))
    families = [names.family_of(name) or "" for name in wanted]
    packages = packages_for(
        [family for family in families if not family.lower().startswith("cudnn")], cuda_major
    )
    if any(family.lower().startswith("cudnn") for family in families) and cuda_major in cudnn_packages():
        packages.append(cudnn_packages()[cuda_major])
    return packages


def native_install_steps(
    snapshot: EnvironmentSnapshot, cuda_major: int | None, absent: Sequence[str], option: int = 1
) -> tuple[list[Step], list[str]]:
    """The ``pip --target`` step (on the host) and the library folders it fills; ([], []) when
    nothing is absent, the CUDA major is unknown, or the target has no folder of its own."""
    from fallback_doctor.core.readers.knowledge.cuda_packages import wheel_lib_dirs

    if not absent or cuda_major is None:
        return [], []
    folder = native_library_folder(snapshot, cuda_major)
    if folder is None:
        return [], []
    packages = native_packages(snapshot, cuda_major, folder, absent)
    if not packages:
        return [], []
    lib_dirs = [
        os.path.join(folder, wheel_lib_dirs()[package]) for package in packages if package in wheel_lib_dirs()
    ]
    argv = (HOST_PYTHON, "-m", "pip", "install", "--upgrade", "--target", folder, *packages)
    return [RunStep(argv, "host", option)], list(dict.fromkeys(lib_dirs))


def system_packages_step(cuda_major: int, option: int) -> ManualStep:
    """The alternative to the wheels: NVIDIA's own system packages, which ldconfig finds (source:
    docs.nvidia.com/deeplearning/cudnn/installation/linux.html, package cudnn9-cuda-<major>)."""
    return manual_step("remedy.manual.system_packages", option, major=cuda_major)
