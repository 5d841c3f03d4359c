"""CUDA runtime layer: libraries the provider needs that the loader cannot find, or finds in
another CUDA major.

By hand: ``ldd /path/libonnxruntime_providers_cuda.so | grep "not found"`` and
``ldconfig -p | grep -E "cudart|cublas|cufft|curand|nvrtc"``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.facts.libraries import (
    DependencyReport,
    LibraryCopy,
    LibraryFacts,
    Resolution,
)
from fallback_doctor.core.knowledge.ort_matrix import ort_versions_for_cuda_major, release_tuple
from fallback_doctor.core.loader import names
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import make_finding

_NOT_LOOKED_UP = frozenset({"API set", "KnownDLLs"})

CUDA_PACKAGES: dict[int, dict[str, str]] = {
    13: {
        "cudart": "nvidia-cuda-runtime",
        "cublas": "nvidia-cublas",
        "cublasLt": "nvidia-cublas",
        "cufft": "nvidia-cufft",
        "curand": "nvidia-curand",
        "nvrtc": "nvidia-cuda-nvrtc",
        "nvJitLink": "nvidia-nvjitlink",
    },
    12: {
        "cudart": "nvidia-cuda-runtime-cu12",
        "cublas": "nvidia-cublas-cu12",
        "cublasLt": "nvidia-cublas-cu12",
        "cufft": "nvidia-cufft-cu12",
        "curand": "nvidia-curand-cu12",
        "nvrtc": "nvidia-cuda-nvrtc-cu12",
        "nvJitLink": "nvidia-nvjitlink-cu12",
    },
    11: {
        "cudart": "nvidia-cuda-runtime-cu11",
        "cublas": "nvidia-cublas-cu11",
        "cublasLt": "nvidia-cublas-cu11",
        "cufft": "nvidia-cufft-cu11",
        "curand": "nvidia-curand-cu11",
        "nvrtc": "nvidia-cuda-nvrtc-cu11",
    },
}
"""pip packages per CUDA major (compat-reference §5.2: CUDA 13 names carry no -cu13 suffix)."""

CUDNN_PACKAGES: dict[int, str] = {13: "nvidia-cudnn-cu13", 12: "nvidia-cudnn-cu12", 11: "nvidia-cudnn-cu11"}


# -- shared helpers (used by the cuDNN and TensorRT checks too) ---------------------------------


def is_windows(snapshot: EnvironmentSnapshot) -> bool:
    """Whether the target is Windows (from the interpreter's platform, else the provider path)."""
    if snapshot.python is not None:
        return snapshot.python.platform.startswith("win")
    libraries = snapshot.libraries
    if libraries is not None and libraries.reports:
        return libraries.reports[0].root.lower().endswith(".dll")
    return False


def ordered_reports(libraries: LibraryFacts) -> list[DependencyReport]:
    """Reports with the CUDA provider first, so other providers only add what it lacks."""
    return sorted(libraries.reports, key=lambda report: 0 if "CUDA" in report.provider else 1)


def unresolved(report: DependencyReport) -> list[Resolution]:
    """Resolutions the loader would fail on (API sets and KnownDLLs are never failures)."""
    return [item for item in report.resolutions if item.path is None and item.via not in _NOT_LOOKED_UP]


def cuda_major_needed(snapshot: EnvironmentSnapshot, report: DependencyReport) -> int | None:
    """The CUDA major the build needs: from the ORT facts, else from the needed names."""
    ort = snapshot.onnxruntime
    if ort is not None and ort.required_cuda_major:
        return ort.required_cuda_major
    for item in report.resolutions:
        parsed = names.parse_library_name(item.name)
        if parsed and parsed.family.lower() in ("cudart", "cublas", "cublaslt") and parsed.major:
            return parsed.major
    return None


def python_executable(snapshot: EnvironmentSnapshot) -> str:
    """The application's interpreter for pip commands ("python" when unknown)."""
    if snapshot.python is not None and snapshot.python.executable:
        return snapshot.python.executable
    return "python"


def preload_dlls_applies(snapshot: EnvironmentSnapshot) -> bool:
    """Whether ``onnxruntime.preload_dlls()`` is a fix: a Python app with ORT >= 1.21.

    1.27.x looks in the per-component layout only and misses the CUDA 13 wheels in nvidia/cu13
    (compat-reference §5.3), so it is not offered there.
    """
    ort = snapshot.onnxruntime
    if snapshot.python is None or ort is None or not ort.version:
        return False
    release = release_tuple(ort.version)
    if not release or len(release) < 2:
        return False
    return release[:2] >= (1, 21) and release[:2] != (1, 27)


def ld_path_command(dirs: Sequence[str], windows: bool) -> str:
    """The command that puts ``dirs`` first on the loader path."""
    if windows:
        return "set PATH=" + ";".join(dirs) + ";%PATH%"
    return "export LD_LIBRARY_PATH=" + ":".join(dirs) + ":$LD_LIBRARY_PATH"


def verify_command(report: DependencyReport, windows: bool, lazy_names: Sequence[str] = ()) -> str:
    """How a technician checks by hand that the loader now finds everything."""
    if windows:
        return f"python -c \"import ctypes; ctypes.WinDLL(r'{report.root}')\""
    if lazy_names:
        loads = "; ".join(f"ctypes.CDLL('{name}')" for name in lazy_names)
        return f'python -c "import ctypes; {loads}"'
    return f'ldd {report.root} | grep "not found"'


def resolution_evidence(items: Iterable[Resolution]) -> tuple[Evidence, ...]:
    """Evidence lines for each resolution: needed by, searched directories, copies elsewhere."""
    evidence: list[Evidence] = []
    for item in items:
        evidence.append(
            Evidence(
                "needed",
                f"{item.name} (needed by {item.needed_by}" + (", opened at run time)" if item.lazy else ")"),
            )
        )
        if item.path is not None:
            evidence.append(Evidence("loader takes", f"{item.name} -> {item.path} (via {item.via})"))
        if item.searched:
            evidence.append(Evidence("searched", ", ".join(item.searched)))
        for copy in item.installed_elsewhere:
            evidence.append(Evidence("installed elsewhere", copy))
        for copy in item.other_majors:
            evidence.append(Evidence("other major", copy))
    return tuple(evidence)


def other_major_copies(libraries: LibraryFacts, item: Resolution) -> list[str]:
    """Copies of another major: from the resolution, plus inventory copies of the same family."""
    found = list(item.other_majors)
    for copy in libraries.inventory:
        if names.is_other_major(item.name, copy.name) and copy.path not in found:
            found.append(copy.path)
    return found


def resolved_major_mismatch(item: Resolution) -> str | None:
    """The version/soname of the file taken when it belongs to another major, else None.

    E.g. ``libcudart.so.12`` that is a symlink to ``libcudart.so.11.8.89``, or a file whose
    DT_SONAME is ``libcudnn.so.8`` found under the name ``libcudnn.so.9``.
    """
    if item.path is None or item.via in (None, "already loaded"):
        return None
    wanted = names.parse_library_name(item.name)
    if wanted is None or wanted.major is None:
        return None
    if item.soname and item.soname != item.name and names.is_other_major(item.name, item.soname):
        return item.soname
    if item.version and not wanted.windows:
        head = item.version.split(".")[0]
        if head.isdigit() and int(head) != wanted.major and item.version != wanted.version:
            return os.path.basename(os.path.realpath(item.path))
    return None


def _packages_for(families: Iterable[str], major: int | None) -> list[str]:
    table = CUDA_PACKAGES.get(major or 0, {})
    return list(dict.fromkeys(table[family] for family in families if family in table))


# -- which CUDA major a library file belongs to --------------------------------------------------

_WHEEL_STEMS: dict[str, str] = {
    "cudart": "nvidia-cuda-runtime",
    "cublas": "nvidia-cublas",
    "cublaslt": "nvidia-cublas",
    "cufft": "nvidia-cufft",
    "curand": "nvidia-curand",
    "nvrtc": "nvidia-cuda-nvrtc",
    "nvjitlink": "nvidia-nvjitlink",
}
"""CUDA library family -> the pip package stem (compat-reference §5.2); cuDNN: nvidia-cudnn."""

_SUFFIXED = re.compile(r"^(?P<stem>.+)-cu(?P<major>\d+)$")


@dataclass(frozen=True)
class Belonging:
    """The CUDA major a library file is built for, and how that is known."""

    major: int
    reason: str


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
                return Belonging(from_name, f"{os.path.basename(real)}: the file name")
        for candidate in dict.fromkeys((path, real)):
            from_path = names.cuda_major_of_path(candidate)
            if from_path is not None:
                return Belonging(from_path, f"{os.path.dirname(candidate)}: a CUDA {from_path} folder")
    if report is not None:
        needs = [item.name for item in report.resolutions if item.needed_by in (path, real) and not item.lazy]
        majors = sorted({major for major in map(names.cuda_major_of_name, needs) if major is not None})
        if len(majors) == 1:
            shown = [need for need in needs if names.cuda_major_of_name(need) == majors[0]]
            return Belonging(majors[0], f"{os.path.basename(path)} needs {', '.join(shown)}")
    return _wheel_major(snapshot, real, name)


def _wheel_major(snapshot: EnvironmentSnapshot, real: str, name: str) -> Belonging | None:
    python = snapshot.python
    family = (names.family_of(name) or "").lower()
    stem = "nvidia-cudnn" if family.startswith("cudnn") else _WHEEL_STEMS.get(family)
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
    return Belonging(major, f"installed by the pip package {owner}")


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


ORT_CUDA_FAMILIES: tuple[tuple[tuple[int, int], tuple[int, int], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        (1, 0),
        (1, 20),
        ("cublasLt", "cublas", "curand", "cufft", "cudart"),
        ("cublasLt", "cublas", "cufft", "cudart"),
    ),
    (
        (1, 20),
        (1, 23),
        ("cublasLt", "cublas", "curand", "cufft", "cudart", "nvrtc"),
        ("cublasLt", "cublas", "cufft", "cudart"),
    ),
    (
        (1, 23),
        (1, 27),
        ("cublasLt", "cublas", "curand", "cufft", "cudart"),
        ("cublasLt", "cublas", "cufft", "cudart"),
    ),
    (
        (1, 27),
        (1, 28),
        ("cublasLt", "cublas", "curand", "cufft", "cudart", "nvrtc"),
        ("cublasLt", "cublas", "cufft", "cudart"),
    ),
    ((1, 28), (99, 0), ("cublasLt", "cublas", "curand", "cudart"), ("cublasLt", "cublas")),
)
"""(from, to) ORT release -> the CUDA libraries its CUDA provider needs at load time, Linux and
Windows (compat-reference §1.2: DT_NEEDED / PE imports of the wheels; cuFFT, nvrtc and cuDNN are
opened at run time from 1.28)."""


def ort_cuda_families(ort_version: str, windows: bool) -> tuple[str, ...]:
    """The CUDA library families an onnxruntime-gpu release's CUDA provider needs to load."""
    release = release_tuple(ort_version) or ()
    key = tuple(release[:2]) + (0,) * max(0, 2 - len(release[:2]))
    for start, end, linux, win in ORT_CUDA_FAMILIES:
        if start <= key < end:
            return win if windows else linux
    return ORT_CUDA_FAMILIES[-1][3] if windows else ORT_CUDA_FAMILIES[-1][2]


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


# -- the checks ---------------------------------------------------------------------------------


def cuda_runtime_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """One finding per provider naming every CUDA runtime library the loader cannot find.

    Split by what to do: installed elsewhere (add the directory / preload_dlls), or not
    installed at all (install the packages of the right CUDA major). Another major present
    is left to cuda_major_mismatch. By hand: ``ldd <provider> | grep "not found"``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    covered: set[str] = set()
    for report in ordered_reports(libraries):
        _, pulled = foreign_resolutions(
            snapshot, report, cuda_major_needed(snapshot, report), names.is_cuda_runtime
        )
        missing = [
            item
            for item in unresolved(report)
            if names.is_cuda_runtime(item.name)
            and not item.lazy
            and item.name not in covered
            and item.needed_by not in pulled
        ]
        covered.update(item.name for item in missing)
        if not missing:
            continue
        major = cuda_major_needed(snapshot, report)
        elsewhere = [item for item in missing if item.installed_elsewhere]
        other = [
            item for item in missing if not item.installed_elsewhere and other_major_copies(libraries, item)
        ]
        absent = [item for item in missing if item not in elsewhere and item not in other]
        all_names = [item.name for item in missing]
        params = {
            "provider": report.provider,
            "provider_path": report.root,
            "names": all_names,
            "count": len(all_names),
            "cuda_major": major if major is not None else "?",
            "path_var": "PATH" if windows else "LD_LIBRARY_PATH",
        }
        if elsewhere:
            dirs = list(dict.fromkeys(os.path.dirname(item.installed_elsewhere[0]) for item in elsewhere))
            commands = [ld_path_command(dirs, windows)]
            finding_id = "cuda.runtime_not_on_loader_path"
            if preload_dlls_applies(snapshot):
                commands.append(
                    "import onnxruntime; onnxruntime.preload_dlls()  "
                    "# in the application, before creating the InferenceSession"
                )
            yield make_finding(
                finding_id,
                Cause.CUDA_RUNTIME_MISSING,
                Layer.CUDA,
                Severity.ERROR,
                params={
                    **params,
                    "elsewhere": [item.name for item in elsewhere],
                    "dirs": dirs,
                    "verify_command": verify_command(report, windows),
                },
                evidence=resolution_evidence(missing),
                commands=tuple(commands),
            )
        if absent:
            families = [names.family_of(item.name) or "" for item in absent]
            packages = _packages_for(families, major)
            commands = []
            if packages:
                commands.append(f"{python_executable(snapshot)} -m pip install " + " ".join(packages))
            yield make_finding(
                "cuda.runtime_missing",
                Cause.CUDA_RUNTIME_MISSING,
                Layer.CUDA,
                Severity.ERROR,
                params={
                    **params,
                    "absent": [item.name for item in absent],
                    "packages": packages or ["the CUDA toolkit runtime"],
                    "verify_command": verify_command(report, windows),
                },
                evidence=resolution_evidence(missing),
                commands=tuple(commands),
            )


def cuda_optional_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """CUDA libraries ONNX Runtime >= 1.28 opens only when needed (cuFFT, nvrtc) and cannot find.

    A warning: only some operators use them (cuFFT: Rfft/Irfft). By hand:
    ``python -c "import ctypes; ctypes.CDLL('libcufft.so.12')"``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    for report in ordered_reports(libraries):
        if "CUDA" not in report.provider:
            continue
        missing = [item for item in unresolved(report) if item.lazy and names.is_cuda_runtime(item.name)]
        if not missing:
            continue
        major = cuda_major_needed(snapshot, report)
        packages = _packages_for([names.family_of(item.name) or "" for item in missing], major)
        commands = (
            (f"{python_executable(snapshot)} -m pip install " + " ".join(packages),) if packages else ()
        )
        yield make_finding(
            "cuda.optional_runtime_missing",
            Cause.CUDA_RUNTIME_MISSING,
            Layer.CUDA,
            Severity.WARNING,
            params={
                "provider": report.provider,
                "names": [item.name for item in missing],
                "packages": packages or ["the CUDA toolkit runtime"],
                "verify_command": verify_command(report, windows, [item.name for item in missing]),
            },
            evidence=resolution_evidence(missing),
            commands=commands,
        )


def cuda_major_mismatch(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The build needs CUDA N libraries; what is here of them belongs to another CUDA major.

    Two ways: a needed name is not found, only another major's copies are (libcublasLt.so.13 for
    libcublasLt.so.12); or the loader takes a file of the same name built for another major
    (libcurand.so.10 is cuRAND's name in CUDA 11, 12 and 13: a CUDA 13 copy, which then needs
    libcudart.so.13, satisfies a CUDA 12 build). Installing the onnxruntime-gpu built for the
    other major is offered only when every CUDA library that build needs is here; otherwise the
    finding says what that build would still miss. By hand: ``ldconfig -p | grep cublas``,
    ``ls site-packages/nvidia/*/lib`` and ``ldd <provider> | grep -E "curand|cudart"``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    covered: set[str] = set()
    for report in ordered_reports(libraries):
        major = cuda_major_needed(snapshot, report)
        foreign, pulled = foreign_resolutions(snapshot, report, major, names.is_cuda_runtime)
        foreign = [entry for entry in foreign if entry.item.name not in covered]
        absent = [
            item
            for item in unresolved(report)
            if names.is_cuda_runtime(item.name)
            and not item.lazy
            and item.needed_by not in pulled
            and not item.installed_elsewhere
            and other_major_copies(libraries, item)
            and item.name not in covered
        ]
        items = [*absent, *(entry.item for entry in foreign)]
        covered.update(item.name for item in items)
        if not items:
            continue
        copies = [copy for item in absent for copy in other_major_copies(libraries, item)]
        copies.extend(entry.item.path or "" for entry in foreign)
        found_majors = sorted(
            {entry.belongs.major for entry in foreign}
            | {
                parsed
                for parsed in (names.cuda_major_of_name(os.path.basename(copy)) for copy in copies)
                if parsed
            }
        )
        cuda_found = _cuda_major_of_copies(copies) or (found_majors[0] if found_majors else None)
        # What the build needs of CUDA N and cannot have as it stands: the path "install CUDA N".
        needed_here = [
            item
            for item in report.resolutions
            if names.is_cuda_runtime(item.name)
            and not item.lazy
            and item.needed_by not in pulled
            and (names.cuda_major_of_name(item.name) in (None, major))
            and (item.path is None or item in items)
        ]
        packages = _packages_for([names.family_of(item.name) or "" for item in needed_here], major)
        python = python_executable(snapshot)
        commands = [f"{python} -m pip install " + " ".join(packages)] if packages else []
        other = other_build_path(snapshot, cuda_found) if cuda_found else None
        ort = snapshot.onnxruntime
        params: dict[str, object] = {
            "provider": report.provider,
            "ort_version": (ort.version if ort and ort.version else "this build"),
            "cuda_major": major if major is not None else "?",
            "found_major": cuda_found
            if cuda_found is not None
            else "/".join(str(item) for item in found_majors) or "?",
            "names": [item.name for item in items],
            "copies": copies,
            "needed_names": [item.name for item in needed_here] or [item.name for item in items],
            "ort_match": other.ort_version if other else "a version built for that CUDA",
            "packages": packages or ["the CUDA toolkit runtime"],
            "other_missing": list(other.missing) if other else [],
            "other_packages": (
                _packages_for([names.family_of(name) or "" for name in other.missing], other.cuda_major)
                if other
                else []
            )
            or ["?"],
        }
        evidence = list(resolution_evidence(items))
        for entry in foreign:
            evidence.append(
                Evidence(f"CUDA {entry.belongs.major} file", f"{entry.item.path}: {entry.belongs.reason}")
            )
        if other is not None:
            evidence.append(
                Evidence(
                    f"onnxruntime-gpu {other.ort_version} (CUDA {other.cuda_major})",
                    "needs "
                    + ", ".join(ort_cuda_families(other.ort_version, windows))
                    + (f"; missing here: {', '.join(other.missing)}" if other.missing else "; all present"),
                )
            )
        if not absent and not _fails_to_load(report, pulled):
            finding_id, severity = "cuda.major_mismatch.loaded_from_other_major", Severity.WARNING
        elif other is not None and not other.missing:
            finding_id, severity = "cuda.major_mismatch", Severity.ERROR
            commands.append(f'{python} -m pip install "onnxruntime-gpu=={other.ort_version}"')
        else:
            finding_id, severity = "cuda.major_mismatch.other_incomplete", Severity.ERROR
        yield make_finding(
            finding_id,
            Cause.CUDA_MAJOR_MISMATCH,
            Layer.CUDA,
            severity,
            params={**params, "verify_command": verify_command(report, windows)},
            evidence=tuple(evidence),
            commands=tuple(commands),
        )


def _fails_to_load(report: DependencyReport, pulled: set[str]) -> bool:
    """Whether a library pulled in by another major's file cannot be found itself."""
    return any(item.path is None and item.needed_by in pulled for item in unresolved(report))


def _cuda_major_of_copies(copies: Sequence[str]) -> int | None:
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


def cuda_shadowed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A needed CUDA library that the loader would take from a copy of another major.

    E.g. ``libcudart.so.12`` found, but it is a link to ``libcudart.so.11.8.89``.
    By hand: ``ls -l $(ldd <provider> | awk '/cudart/ {print $3}')``.
    """
    yield from shadowed_findings(
        snapshot, names.is_cuda_runtime, "cuda.shadowed_by_other_major", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA
    )


def shadowed_findings(
    snapshot: EnvironmentSnapshot, family_test: object, finding_id: str, cause: Cause, layer: Layer
) -> Iterator[Finding]:
    """Shared by the CUDA, cuDNN and TensorRT checks: resolved copies of another major."""
    libraries = snapshot.libraries
    if libraries is None or not callable(family_test):
        return
    windows = is_windows(snapshot)
    seen: set[str] = set()
    for report in ordered_reports(libraries):
        for item in report.resolutions:
            if item.name in seen or not family_test(item.name):
                continue
            actual = resolved_major_mismatch(item)
            if actual is None:
                continue
            seen.add(item.name)
            yield make_finding(
                finding_id,
                cause,
                layer,
                Severity.ERROR,
                params={
                    "name": item.name,
                    "path": item.path,
                    "actual": actual,
                    "via": item.via,
                    "provider": report.provider,
                    "verify_command": verify_command(report, windows),
                },
                evidence=resolution_evidence([item]),
                commands=(f"ls -l {item.path}",) if not windows else (),
            )


CHECKS = (cuda_runtime_missing, cuda_major_mismatch, cuda_shadowed, cuda_optional_missing)
