"""Reading the loader's dependency reports: shared by the CUDA, cuDNN and TensorRT checks.

What the loader would fail on, which CUDA major a build needs, the commands that fix or verify
a loader path, and the evidence lines of each resolution.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.libraries import DependencyReport, LibraryFacts, Resolution
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.ort_matrix import release_tuple
from fallback_doctor.core.readers.loader import names

_NOT_LOOKED_UP = frozenset({"API set", "KnownDLLs"})


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


def verify_command(
    snapshot: EnvironmentSnapshot, report: DependencyReport, windows: bool, lazy_names: Sequence[str] = ()
) -> str:
    """How a technician checks by hand that the loader now finds everything: with the target's own
    interpreter where it has one; a native target without one gets ``ldconfig``/``ldd``. The
    driver's libcuda.so.1 is left out of ``ldd``'s missing names (the driver has its own check)."""
    python = (
        snapshot.python.executable if snapshot.python is not None and snapshot.python.executable else None
    )
    if windows:
        return f"{python or 'python'} -c \"import ctypes; ctypes.WinDLL(r'{report.root}')\""
    if lazy_names:
        if python is None:
            return "ldconfig -p | grep -F " + " ".join(f"-e {name}" for name in lazy_names)
        loads = "; ".join(f"ctypes.CDLL('{name}')" for name in lazy_names)
        return f'{python} -c "import ctypes; {loads}"'
    # libcuda.so.1 is the driver's own library: it is "not found" on a machine without a driver
    # (whose check is the driver layer's), so the check can pass there once CUDA and cuDNN load.
    return f'ldd {report.root} | grep "not found" | grep -v libcuda.so.1'


def resolution_evidence(items: Iterable[Resolution]) -> tuple[Evidence, ...]:
    """Evidence lines for each resolution: needed by, searched directories, copies elsewhere."""
    evidence: list[Evidence] = []
    for item in items:
        needed_by = "evidence.needed_by_at_run_time" if item.lazy else "evidence.needed_by"
        evidence.append(said("evidence.needed", needed_by, lib=item.name, path=item.needed_by))
        if item.path is not None:
            taken = said(
                "evidence.loader_takes", "evidence.taken_via", name=item.name, path=item.path, via=item.via
            )
            evidence.append(taken)
        if item.searched:
            evidence.append(said("evidence.searched", value=", ".join(item.searched)))
        for copy in item.installed_elsewhere:
            evidence.append(said("evidence.installed_elsewhere", value=copy))
        for copy in item.other_majors:
            evidence.append(said("evidence.other_major", value=copy))
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
                    "verify_command": verify_command(snapshot, report, windows),
                },
                evidence=resolution_evidence([item]),
                commands=(f"ls -l {item.path}",) if not windows else (),
            )
