"""CUDA runtime layer: libraries the provider needs that the loader cannot find, or finds in
another CUDA major.

By hand: ``ldd /path/libonnxruntime_providers_cuda.so | grep "not found"`` and
``ldconfig -p | grep -E "cudart|cublas|cufft|curand|nvrtc"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from fallback_doctor.core.judgement.checks.cuda_major import (
    Foreign,
    OtherBuildPath,
    cuda_file_evidence,
    cuda_major_of_copies,
    fails_to_load,
    foreign_resolutions,
    ort_cuda_families,
    other_build_path,
    packages_for,
)
from fallback_doctor.core.judgement.checks.remedy import library_fix_steps, pip_steps, provider_wanted
from fallback_doctor.core.judgement.checks.resolution import (
    cuda_major_needed,
    is_windows,
    ordered_reports,
    other_major_copies,
    python_executable,
    resolution_evidence,
    shadowed_findings,
    unresolved,
    verify_command,
)
from fallback_doctor.core.judgement.checks.version_needs import version_needs
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.libraries import DependencyReport, LibraryFacts, Resolution
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity, Step, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.loader import names

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "cuda.runtime_not_on_loader_path",
        Cause.CUDA_RUNTIME_MISSING,
        Layer.CUDA,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cuda.optional_runtime_missing",
        Cause.CUDA_RUNTIME_MISSING,
        Layer.CUDA,
        Severity.WARNING,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "cuda.major_mismatch", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cuda.major_mismatch.other_incomplete",
        Cause.CUDA_MAJOR_MISMATCH,
        Layer.CUDA,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "cuda.major_mismatch.loaded_from_other_major",
        Cause.CUDA_MAJOR_MISMATCH,
        Layer.CUDA,
        Severity.WARNING,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "cuda.shadowed_by_other_major", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, Severity.ERROR, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


# other_build_path is imported from here by the package check.
__all__ = ["CHECKS", "other_build_path"]


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
            "verify_command": verify_command(snapshot, report, windows),
        }
        # Those opened at run time (cuFFT, nvrtc) are part of the same fix (provider_wanted):
        # one finding says so, rather than a second one with the same cause and the same steps.
        lazy = [item for item in unresolved(report) if item.lazy and names.is_cuda_runtime(item.name)]
        evidence = resolution_evidence([*missing, *lazy])
        if elsewhere:
            # Installed, but where the loader does not search: add the directories, or preload_dlls().
            dirs = list(dict.fromkeys(os.path.dirname(item.installed_elsewhere[0]) for item in elsewhere))
            yield _runtime_finding(
                "cuda.runtime_not_on_loader_path",
                {**params, "elsewhere": [item.name for item in elsewhere], "dirs": dirs},
                evidence,
                library_fix_steps(snapshot, provider_wanted(report), major, windows),
            )
        if absent:
            # Not installed anywhere known: the pip packages of the CUDA major the build needs.
            packages = packages_for([names.family_of(item.name) or "" for item in absent], major)
            yield _runtime_finding(
                "cuda.runtime_missing",
                {
                    **params,
                    "absent": [item.name for item in absent],
                    "packages": packages or ["the CUDA toolkit runtime"],
                },
                evidence,
                library_fix_steps(snapshot, provider_wanted(report), major, windows),
            )


def _runtime_finding(
    finding_id: str, params: dict[str, object], evidence: tuple[Evidence, ...], steps: list[Step]
) -> Finding:
    return make_finding(
        finding_id,
        Cause.CUDA_RUNTIME_MISSING,
        Layer.CUDA,
        Severity.ERROR,
        params=params,
        evidence=evidence,
        steps=tuple(steps),
    )


def _required_runtime_finding(libraries: LibraryFacts, report: DependencyReport) -> bool:
    """Whether cuda_runtime_missing reports this provider (a required CUDA library is installed
    elsewhere or not at all; one only of another major is left to cuda_major_mismatch)."""
    return any(
        names.is_cuda_runtime(item.name)
        and not item.lazy
        and (item.installed_elsewhere or not other_major_copies(libraries, item))
        for item in unresolved(report)
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
        if not missing or _required_runtime_finding(libraries, report):
            continue  # cuda.runtime_missing / runtime_not_on_loader_path fixes them with the rest
        major = cuda_major_needed(snapshot, report)
        absent = [item for item in missing if not item.installed_elsewhere]
        packages = packages_for([names.family_of(item.name) or "" for item in absent], major)
        steps = library_fix_steps(snapshot, [item.name for item in missing], major, windows)
        yield make_finding(
            "cuda.optional_runtime_missing",
            Cause.CUDA_RUNTIME_MISSING,
            Layer.CUDA,
            Severity.WARNING,
            params={
                "provider": report.provider,
                "names": [item.name for item in missing],
                "packages": packages or ["none: all are installed, their folders are not on the loader path"],
                "verify_command": verify_command(snapshot, report, windows, [item.name for item in missing]),
            },
            evidence=resolution_evidence(missing),
            steps=tuple(steps),
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
        case = _mismatch_case(snapshot, libraries, report, covered)
        if case is None:
            continue
        covered.update(item.name for item in case.items)
        finding_id, severity = _mismatch_kind(case, report)
        steps = _mismatch_steps(snapshot, report, case, windows, finding_id == "cuda.major_mismatch")
        yield make_finding(
            finding_id,
            Cause.CUDA_MAJOR_MISMATCH,
            Layer.CUDA,
            severity,
            params={
                **_mismatch_params(snapshot, report, case),
                "verify_command": verify_command(snapshot, report, windows),
            },
            evidence=_mismatch_evidence(case, windows),
            steps=tuple(steps),
        )


def _mismatch_steps(
    snapshot: EnvironmentSnapshot, report: DependencyReport, case: _Mismatch, windows: bool, other_fits: bool
) -> list[Step]:
    """Option 1: the libraries of the build's own major (cuDNN of that major too, when the build
    needs it), installed and put first on the loader path; option 2: the build for the major here."""
    wanted = [item.name for item in case.needed_here]
    wanted += [
        item.name
        for item in report.resolutions
        if names.is_cudnn(item.name)
        and item.name not in wanted
        and names.cuda_major_of_name(item.name) is None
    ]
    steps = library_fix_steps(snapshot, wanted, case.major, windows)
    steps = [step for step in steps if step.option == 1]
    other = case.other
    if other is not None and other_fits:
        needs = version_needs(snapshot, other.ort_version, other.cuda_major)
        requirement = f"onnxruntime-gpu=={other.ort_version}"
        steps += pip_steps(snapshot, [requirement, *(needs.packages if needs else ())], option=2)
    return steps


@dataclass(frozen=True)
class _Mismatch:
    """What one provider needs of CUDA ``major`` and has of another major instead."""

    major: int | None
    foreign: list[Foreign]
    """Files the loader takes that belong to another major."""
    pulled: set[str]
    absent: list[Resolution]
    """Needed names not found, of which only another major's copies are here."""
    copies: list[str]
    found_majors: list[int]
    cuda_found: int | None
    needed_here: list[Resolution]
    """What the build needs of CUDA ``major`` and cannot have as it stands."""
    packages: list[str]
    other: OtherBuildPath | None
    """The onnxruntime-gpu built for the major that is here, and what it would still miss."""
    python: str

    @property
    def items(self) -> list[Resolution]:
        return [*self.absent, *(entry.item for entry in self.foreign)]


def _mismatch_case(
    snapshot: EnvironmentSnapshot, libraries: LibraryFacts, report: DependencyReport, covered: set[str]
) -> _Mismatch | None:
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
    if not items:
        return None
    copies = [copy for item in absent for copy in other_major_copies(libraries, item)]
    copies.extend(entry.item.path or "" for entry in foreign)
    named = (names.cuda_major_of_name(os.path.basename(copy)) for copy in copies)
    found_majors = sorted({entry.belongs.major for entry in foreign} | {parsed for parsed in named if parsed})
    cuda_found = cuda_major_of_copies(copies) or (found_majors[0] if found_majors else None)
    needed_here = [
        item
        for item in report.resolutions
        if names.is_cuda_runtime(item.name)
        and not item.lazy
        and item.needed_by not in pulled
        and (names.cuda_major_of_name(item.name) in (None, major))
        and (item.path is None or item in items)
    ]
    packages = packages_for([names.family_of(item.name) or "" for item in needed_here], major)
    other = other_build_path(snapshot, cuda_found) if cuda_found else None
    return _Mismatch(
        major,
        foreign,
        pulled,
        absent,
        copies,
        found_majors,
        cuda_found,
        needed_here,
        packages,
        other,
        python_executable(snapshot),
    )


def _mismatch_kind(case: _Mismatch, report: DependencyReport) -> tuple[str, Severity]:
    """Loaded from another major's file and working: a warning; else whether the other build fits."""
    if not case.absent and not fails_to_load(report, case.pulled):
        return "cuda.major_mismatch.loaded_from_other_major", Severity.WARNING
    if case.other is not None and not case.other.missing:
        return "cuda.major_mismatch", Severity.ERROR
    return "cuda.major_mismatch.other_incomplete", Severity.ERROR


def _mismatch_params(
    snapshot: EnvironmentSnapshot, report: DependencyReport, case: _Mismatch
) -> dict[str, object]:
    ort = snapshot.onnxruntime
    other = case.other
    other_packages = (
        packages_for([names.family_of(name) or "" for name in other.missing], other.cuda_major)
        if other
        else []
    )
    return {
        "provider": report.provider,
        "ort_version": (ort.version if ort and ort.version else "this build"),
        "cuda_major": case.major if case.major is not None else "?",
        "found_major": case.cuda_found
        if case.cuda_found is not None
        else "/".join(str(item) for item in case.found_majors) or "?",
        "names": [item.name for item in case.items],
        "copies": case.copies,
        "needed_names": [item.name for item in case.needed_here] or [item.name for item in case.items],
        "ort_match": other.ort_version if other else Words("evidence.version_for_that_cuda"),
        "packages": case.packages or [Words("evidence.cuda_toolkit_runtime")],
        "other_missing": list(other.missing) if other else [],
        "other_packages": other_packages or ["?"],
    }


def _mismatch_evidence(case: _Mismatch, windows: bool) -> tuple[Evidence, ...]:
    evidence = list(resolution_evidence(case.items))
    for entry in case.foreign:
        evidence.append(cuda_file_evidence(entry.item.path, entry.belongs))
    other = case.other
    if other is not None:
        evidence.append(
            said(
                "evidence.other_build",
                "evidence.needs_missing" if other.missing else "evidence.needs_all_present",
                version=other.ort_version,
                major=other.cuda_major,
                families=", ".join(ort_cuda_families(other.ort_version, windows)),
                missing=", ".join(other.missing),
            )
        )
    return tuple(evidence)


def cuda_shadowed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A needed CUDA library that the loader would take from a copy of another major.

    E.g. ``libcudart.so.12`` found, but it is a link to ``libcudart.so.11.8.89``.
    By hand: ``ls -l $(ldd <provider> | awk '/cudart/ {print $3}')``.
    """
    yield from shadowed_findings(
        snapshot, names.is_cuda_runtime, "cuda.shadowed_by_other_major", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA
    )


CHECKS = (cuda_runtime_missing, cuda_major_mismatch, cuda_shadowed, cuda_optional_missing)
