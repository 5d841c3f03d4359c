"""Everything an onnxruntime-gpu release needs of CUDA and cuDNN, and what of it is here.

A version recommendation names every library its CUDA provider needs (the load-time families of
resources/compat/ort_cuda_libraries.json, the families opened at run time from 1.28 — cuFFT,
nvrtc — and cuDNN of its major), states which are present by the same rule the CUDA major check
uses for the other build (``other_build_path``: an inventory copy with the needed name that
nothing says belongs to another major), and installs by package name only what is missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fallback_doctor.core.judgement.checks.cuda_major import file_cuda_major, ort_cuda_families, packages_for
from fallback_doctor.core.judgement.checks.resolution import is_windows
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.model.result import Evidence
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.cuda_packages import cudnn_packages
from fallback_doctor.core.readers.knowledge.ort_matrix import release_tuple
from fallback_doctor.core.readers.loader import names

CUDNN_MAJOR = 9
"""cuDNN major of every onnxruntime-gpu from 1.19 (compat-reference §1.1)."""


@dataclass(frozen=True)
class VersionNeeds:
    """What ``onnxruntime-gpu==ort_version`` (CUDA ``cuda_major``) needs, present and missing."""

    ort_version: str
    cuda_major: int
    needed: tuple[str, ...]
    present: tuple[str, ...]
    """Paths of the copies it would use."""
    missing: tuple[str, ...]
    """File names not installed as CUDA ``cuda_major`` files anywhere known."""
    packages: tuple[str, ...]
    """The pip packages that install the missing files."""

    def evidence(self) -> tuple[Evidence, ...]:
        """Three lines: what the release needs, what is here, what the fix installs."""
        return (
            said(
                "evidence.build_needs_these",
                value=", ".join(self.needed),
                version=self.ort_version,
                major=self.cuda_major,
            ),
            said("evidence.installed_of_these", value=", ".join(self.present), otherwise="evidence.none"),
            said(
                "evidence.missing_installed_by_fix",
                value=(", ".join(self.missing) + " (" + ", ".join(self.packages) + ")")
                if self.missing
                else "",
                otherwise="evidence.none",
            ),
        )


def _families(ort_version: str, windows: bool) -> list[str]:
    families = list(ort_cuda_families(ort_version, windows))
    release = release_tuple(ort_version) or (0, 0)
    if tuple(release[:2]) >= (1, 28):
        families += [family for family in ("cufft", "nvrtc") if family not in families]
    return families


def version_needs(
    snapshot: EnvironmentSnapshot, ort_version: str | None, cuda_major: int
) -> VersionNeeds | None:
    """The needs of that release on this machine (None without a version or library facts)."""
    libraries = snapshot.libraries
    if not ort_version:
        return None
    windows = is_windows(snapshot)
    table = names.cuda_runtime_names(cuda_major, windows=windows)
    families = [family for family in _families(ort_version, windows) if family in table]
    wanted = [(family, table[family]) for family in families]
    cudnn = f"cudnn64_{CUDNN_MAJOR}.dll" if windows else f"libcudnn.so.{CUDNN_MAJOR}"
    wanted.append(("cudnn", cudnn))
    inventory = libraries.inventory if libraries is not None else ()
    present: list[str] = []
    missing: list[tuple[str, str]] = []
    for family, name in wanted:
        copy = next(
            (
                copy
                for copy in inventory
                if _same(name, copy.name, windows) and _belongs(snapshot, copy.path, copy.name, cuda_major)
            ),
            None,
        )
        if copy is None:
            missing.append((family, name))
        else:
            present.append(copy.path)
    packages = packages_for([family for family, _ in missing if family != "cudnn"], cuda_major)
    if any(family == "cudnn" for family, _ in missing) and cuda_major in cudnn_packages():
        packages.append(cudnn_packages()[cuda_major])
    return VersionNeeds(
        ort_version,
        cuda_major,
        tuple(name for _, name in wanted),
        tuple(dict.fromkeys(present)),
        tuple(name for _, name in missing),
        tuple(dict.fromkeys(packages)),
    )


def _same(needed: str, candidate: str, windows: bool) -> bool:
    if windows:
        return needed.lower() == candidate.lower()
    return names.same_soname_line(needed, candidate)


def _belongs(snapshot: EnvironmentSnapshot, path: str, name: str, cuda_major: int) -> bool:
    belongs = file_cuda_major(snapshot, path, name)
    return belongs is None or belongs.major == cuda_major


def lib_dirs(paths: tuple[str, ...]) -> list[str]:
    """The folders of ``paths``, each once, in order."""
    return list(dict.fromkeys(os.path.dirname(path) for path in paths))
