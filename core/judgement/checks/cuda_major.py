"""Which CUDA major a library file belongs to, and whether another major's ORT build would load.

The file's name, its folder, what it needs itself and the pip wheel that installed it each
may say; the onnxruntime-gpu built for the other major is offered only when every CUDA library
it needs is here (resources/compat/ort_cuda_libraries.json).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from fallback_doctor.core.judgement.checks.resolution import is_windows, unresolved
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.facts.libraries import DependencyReport, LibraryCopy, Resolution
from fallback_doctor.core.model.result import Evidence, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.cuda_packages import cuda_packages, ort_cuda_ranges, wheel_stems
from fallback_doctor.core.readers.knowledge.ort_matrix import ort_versions_for_cuda_major, release_tuple
from fallback_doctor.core.readers.loader import names


def packages_for(families: Iterable[str], major: int | None) -> list[str]:
    """The pip packages (of CUDA ``major``) that install these library families, each once."""
    table = cuda_packages().get(major or 0, {})
    return list(dict.fromkeys(table[family] for family in families if family in table))


_SUFFIXED = re.compile(r"^(?P<stem>.+)-cu(?P<major>\d+)$")


@dataclass(frozen=True)
class Belonging:
    """The CUDA major a library file is built for, and how that is known."""

    major: int
    why: Words
    """How it is known, in the evidence catalogue's words."""

    @property
    def reason(self) -> str:
        """``why`` in English."""
        return words_text(self.why)


def file_cuda_major(
    snapshot: EnvironmentSnapshot, path: str, name: str, report: DependencyReport | None = None
) -> Belonging | None:
    """The CUDA major of the library file at ``path`` (found for ``name``), where anything says.

    In order: the real file's name, symlinks followed (libcudart.so.13, libcufft.so.11,
    libcurand.so.10.4.0.35); the folder
    (site-packages/nvidia/cu13/lib, /usr/local/cuda-12.4/lib64); the CUDA libraries the file
    itself needs (a libcurand.so.10 that needs libcudart.so.13 is CUDA 13's), from ``report``;
    the pip wheel that owns the folder (nvidia-curand-cu12, nvidia-cudnn-cu13). cuDNN is judged
    only by what it needs and by its wheel. None when nothing says.
    By hand: ``readlink -f <file>``, ``readelf -d <file> | grep NEEDED``, ``pip list | grep nvidia``.
    """
    real = os.path.realpath(path)
    is_cuda = names.is_cuda_runtime(name)
    if is_cuda:
        for candidate in dict.fromkeys((os.path.basename(real), name)):
            from_name = names.cuda_major_of_name(candidate)
            if from_name is not None:
                return Belonging(
                    from_name, Words("evidence.belongs.file_name", {"name": os.path.basename(real)})
                )
        for candidate in dict.fromkeys((path, real)):
            from_path = names.cuda_major_of_path(candidate)
            if from_path is not None:
                folder = {"folder": os.path.dirname(candidate), "major": from_path}
                return Belonging(from_path, Words("evidence.belongs.folder", folder))
    if report is not None:
        needs = [item.name for item in report.resolutions if item.needed_by in (path, real) and not item.lazy]
        majors = sorted({major for major in map(names.cuda_major_of_name, needs) if major is not None})
        if len(majors) == 1:
            shown = [need for need in needs if names.cuda_major_of_name(need) == majors[0]]
            needs_words = {"lib": os.path.basename(path), "needed": ", ".join(shown)}
            return Belonging(majors[0], Words("evidence.belongs.needs", needs_words))
    return _wheel_major(snapshot, real, name)


def _wheel_major(snapshot: EnvironmentSnapshot, real: str, name: str) -> Belonging | None:
    python = snapshot.python
    family = (names.family_of(name) or "").lower()
    stem = wheel_stems().get("cudnn" if family.startswith("cudnn") else family)
    if python is None or stem is None:
        return None
    majors: dict[int, str] = {}
    for dist in python.distributions:
        location = os.path.realpath(dist.location) + os.sep
        if not real.startswith(location + "nvidia" + os.sep):
            continue
        match = _SUFFIXED.match(dist.normalized_name)
        if match and match["stem"] == stem:
            majors[int(match["major"])] = f"{dist.name} {dist.version}"
    if len(majors) != 1:
        return None  # none, or two builds of one library in one folder: nothing certain
    major, owner = next(iter(majors.items()))
    return Belonging(major, Words("evidence.belongs.pip", {"owner": owner}))


@dataclass(frozen=True)
class Foreign:
    """A needed library the loader would take from another CUDA major's file."""

    item: Resolution
    belongs: Belonging


def foreign_resolutions(
    snapshot: EnvironmentSnapshot,
    report: DependencyReport,
    major: int | None,
    family_test: Callable[[str], bool],
    include_lazy: bool = False,
) -> tuple[list[Foreign], set[str]]:
    """Resolved libraries (of ``family_test``) that belong to another CUDA major than ``major``.

    Also returns the paths pulled in by them (their own needs, e.g. the libcudart.so.13 a CUDA
    13 libcurand.so.10 needs, or the sub-libraries a cuDNN shim opens): consequences, not needs
    of the build. ``include_lazy``: libraries opened at run time count too (cuDNN from 1.28).
    """
    if major is None:
        return [], set()
    found: list[Foreign] = []
    pulled: set[str] = set()
    for item in report.resolutions:
        if item.needed_by in pulled:
            if item.path is not None:
                pulled.add(item.path)
            continue
        if item.path is None or item.via in (None, "already loaded"):
            continue
        if item.lazy and not include_lazy:
            continue
        if not family_test(item.name):
            continue
        wanted = names.cuda_major_of_name(item.name)
        if wanted is not None and wanted != major:
            continue  # a name of another major: needed by something else, not a wrong file
        belongs = file_cuda_major(snapshot, item.path, item.name, report)
        if belongs is None or belongs.major == major:
            continue
        found.append(Foreign(item, belongs))
        pulled.add(item.path)
    return found, pulled


def ort_cuda_families(ort_version: str, windows: bool) -> tuple[str, ...]:
    """The CUDA library families an onnxruntime-gpu release's CUDA provider needs to load."""
    release = release_tuple(ort_version) or ()
    key = tuple(release[:2]) + (0,) * max(0, 2 - len(release[:2]))
    ranges = ort_cuda_ranges()
    for start, end, linux, win in ranges:
        if start <= key < end:
            return win if windows else linux
    return ranges[-1][3] if windows else ranges[-1][2]


@dataclass(frozen=True)
class OtherBuildPath:
    """Whether the libraries of another CUDA major suffice for the onnxruntime-gpu built for it."""

    ort_version: str
    cuda_major: int
    present: tuple[str, ...]
    """Paths of the copies that build would use."""
    missing: tuple[str, ...]
    """File names it needs that are not installed (as CUDA ``cuda_major`` files) anywhere known."""


def other_build_path(snapshot: EnvironmentSnapshot, cuda_major: int) -> OtherBuildPath | None:
    """The newest onnxruntime-gpu for ``cuda_major`` and which of its CUDA libraries are here.

    A copy counts when its file carries the needed name (or a fuller version of it) and nothing
    says it belongs to another CUDA major. By hand: ``ldconfig -p | grep -E "cublas|curand"``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return None
    python_version = snapshot.python.version if snapshot.python else None
    versions = ort_versions_for_cuda_major(cuda_major, python_version=python_version)
    if not versions:
        return None
    windows = is_windows(snapshot)
    table = names.cuda_runtime_names(cuda_major, windows=windows)
    wanted = [table[family] for family in ort_cuda_families(versions[0], windows) if family in table]
    present: list[str] = []
    missing: list[str] = []
    for name in wanted:
        copy = next(
            (
                copy
                for copy in libraries.inventory
                if _same_library(name, copy.name, windows) and _may_belong(snapshot, copy, cuda_major)
            ),
            None,
        )
        if copy is None:
            missing.append(name)
        else:
            present.append(copy.path)
    return OtherBuildPath(versions[0], cuda_major, tuple(present), tuple(missing))


def _may_belong(snapshot: EnvironmentSnapshot, copy: LibraryCopy, cuda_major: int) -> bool:
    belongs = file_cuda_major(snapshot, copy.path, copy.name)
    return belongs is None or belongs.major == cuda_major


def _same_library(needed: str, candidate: str, windows: bool) -> bool:
    if windows:
        return needed.lower() == candidate.lower()
    return names.same_soname_line(needed, candidate)


def fails_to_load(report: DependencyReport, pulled: set[str]) -> bool:
    """Whether a library pulled in by another major's file cannot be found itself."""
    return any(item.path is None and item.needed_by in pulled for item in unresolved(report))


def cuda_major_of_copies(copies: Sequence[str]) -> int | None:
    """The CUDA major the copies belong to, judged from cudart/cublas names (not curand/cufft)."""
    for copy in copies:
        parsed = names.parse_library_name(os.path.basename(copy))
        if parsed and parsed.family.lower() in ("cudart", "cublas", "cublaslt", "nvrtc") and parsed.major:
            return parsed.major
    for copy in copies:
        parsed = names.parse_library_name(os.path.basename(copy))
        if parsed and parsed.family.lower() == "cufft" and parsed.major:
            return {10: 11, 11: 12, 12: 13}.get(parsed.major)
    return None


def cuda_file_evidence(path: str | None, belongs: Belonging) -> Evidence:
    """A library file of another CUDA major and how that is known (`ls -l PATH`, `readelf -d PATH`)."""
    return said(
        "evidence.cuda_major_file", "evidence.path_reason", major=belongs.major, path=path, reason=belongs.why
    )
