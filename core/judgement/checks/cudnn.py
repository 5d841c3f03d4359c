"""cuDNN layer: the cuDNN the build needs, its sub-libraries, zlib, and another major shadowing.

By hand: ``ldconfig -p | grep cudnn``, ``ls site-packages/nvidia/cudnn/lib`` and
``python -c "import ctypes; ctypes.CDLL('libcudnn.so.9')"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.cuda_major import cuda_file_evidence, foreign_resolutions
from fallback_doctor.core.judgement.checks.remedy import (
    elsewhere_dirs,
    library_fix_steps,
    loader_path_steps,
    pip_steps,
    target_python,
)
from fallback_doctor.core.judgement.checks.resolution import (
    cuda_major_needed,
    is_windows,
    ordered_reports,
    other_major_copies,
    resolution_evidence,
    shadowed_findings,
    unresolved,
    verify_command,
)
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.libraries import Resolution
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, RunStep, Severity, Step, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.cuda_packages import cudnn_packages
from fallback_doctor.core.readers.loader import names

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "cudnn.not_on_loader_path", Cause.CUDNN_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cudnn.not_on_loader_path.lazy", Cause.CUDNN_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("cudnn.missing", Cause.CUDNN_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.missing.lazy", Cause.CUDNN_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "cudnn.sublibrary_missing", Cause.CUDNN_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("cudnn.zlib_missing", Cause.ZLIBWAPI_MISSING, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "cudnn.major_mismatch", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cudnn.mixed_versions", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cudnn.built_for_other_cuda", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cudnn.shadowed_by_other_major",
        Cause.CUDNN_MAJOR_MISMATCH,
        Layer.CUDNN,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


def _is_shim(name: str) -> bool:
    family = names.family_of(name)
    return family is not None and family.lower() == "cudnn"


def _is_zlib(name: str) -> bool:
    lowered = name.lower()
    return lowered == "zlibwapi.dll" or lowered.startswith("libz.so")


def cudnn_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """cuDNN of the needed major not resolvable (load-time or opened lazily since ORT 1.28).

    Installed elsewhere -> which directory to add; absent -> which package to install.
    By hand: ``python -c "import ctypes; ctypes.CDLL('libcudnn.so.9')"``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    covered: set[str] = set()
    for report in ordered_reports(libraries):
        for item in unresolved(report):
            if not _is_shim(item.name) or item.name in covered:
                continue
            if not item.installed_elsewhere and other_major_copies(libraries, item):
                continue  # cudnn_major_mismatch
            covered.add(item.name)
            cuda_major = cuda_major_needed(snapshot, report)
            params = {
                "provider": report.provider,
                "name": item.name,
                "cuda_major": cuda_major if cuda_major is not None else "?",
                "path_var": "PATH" if windows else "LD_LIBRARY_PATH",
                "verify_command": verify_command(snapshot, report, windows, [item.name] if item.lazy else ()),
            }
            if item.installed_elsewhere:
                directory = os.path.dirname(item.installed_elsewhere[0])
                steps = loader_path_steps(snapshot, elsewhere_dirs(report), windows)
                yield make_finding(
                    "cudnn.not_on_loader_path.lazy" if item.lazy else "cudnn.not_on_loader_path",
                    Cause.CUDNN_MISSING,
                    Layer.CUDNN,
                    Severity.ERROR,
                    params={**params, "dirs": [directory]},
                    evidence=resolution_evidence([item]),
                    steps=tuple(steps),
                )
                continue
            package = cudnn_packages().get(cuda_major or 0)
            steps = library_fix_steps(snapshot, [item.name], cuda_major, windows)
            yield make_finding(
                "cudnn.missing.lazy" if item.lazy else "cudnn.missing",
                Cause.CUDNN_MISSING,
                Layer.CUDNN,
                Severity.ERROR,
                params={**params, "package": package or "cuDNN for your CUDA major"},
                evidence=resolution_evidence([item]),
                steps=tuple(steps),
            )


def cudnn_sublibraries_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """cuDNN found, but sub-libraries it opens (libcudnn_graph …) or zlib are not loadable.

    By hand: ``ls $(dirname <libcudnn.so.9>)`` and ``ldd <libcudnn_graph.so.9>``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    seen: set[str] = set()
    for report in ordered_reports(libraries):
        subs: list[Resolution] = []
        zlib: list[Resolution] = []
        for item in unresolved(report):
            if item.name in seen:
                continue
            family = (names.family_of(item.name) or "").lower()
            if family.startswith("cudnn_") and not other_major_copies(libraries, item):
                subs.append(item)
            elif _is_zlib(item.name) and names.is_cudnn(os.path.basename(item.needed_by)):
                zlib.append(item)
        seen.update(item.name for item in (*subs, *zlib))
        if subs:
            directory = os.path.dirname(subs[0].needed_by)
            yield make_finding(
                "cudnn.sublibrary_missing",
                Cause.CUDNN_MISSING,
                Layer.CUDNN,
                Severity.ERROR,
                params={
                    "provider": report.provider,
                    "names": [item.name for item in subs],
                    "cudnn": subs[0].needed_by,
                    "dir": directory,
                    "verify_command": verify_command(snapshot, report, windows, [item.name for item in subs]),
                },
                evidence=resolution_evidence(subs),
            )
        if zlib:
            zlib_steps = (RunStep(("apt-get", "install", "-y", "zlib1g"), "host"),) if not windows else ()
            yield make_finding(
                "cudnn.zlib_missing",
                Cause.ZLIBWAPI_MISSING,
                Layer.CUDNN,
                Severity.ERROR,
                params={
                    "provider": report.provider,
                    "name": zlib[0].name,
                    "needed_by": zlib[0].needed_by,
                    "verify_command": verify_command(snapshot, report, windows, [zlib[0].name]),
                },
                evidence=resolution_evidence(zlib),
                steps=zlib_steps,
            )


def cudnn_major_mismatch(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The build needs cuDNN N; only another major (e.g. 8 for 9) is present.

    By hand: ``ldconfig -p | grep libcudnn``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    seen: set[str] = set()
    for report in ordered_reports(libraries):
        for item in unresolved(report):
            if not names.is_cudnn(item.name) or item.installed_elsewhere or item.name in seen:
                continue
            copies = other_major_copies(libraries, item)
            if not copies:
                continue
            seen.add(item.name)
            cuda_major = cuda_major_needed(snapshot, report)
            package = cudnn_packages().get(cuda_major or 0)
            wanted = names.parse_library_name(item.name)
            steps = pip_steps(snapshot, [package])
            yield make_finding(
                "cudnn.major_mismatch",
                Cause.CUDNN_MAJOR_MISMATCH,
                Layer.CUDNN,
                Severity.ERROR,
                params={
                    "provider": report.provider,
                    "name": item.name,
                    "copies": copies,
                    "cudnn_major": wanted.major if wanted and wanted.major else "?",
                    "package": package or "cuDNN for your CUDA major",
                    "verify_command": verify_command(
                        snapshot, report, windows, [item.name] if item.lazy else ()
                    ),
                },
                evidence=resolution_evidence([item]),
                steps=tuple(steps),
            )


def cudnn_mixed_versions(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """cuDNN's shim and its sub-libraries would come from different cuDNN releases.

    cuDNN 9 refuses sub-libraries of another version. By hand: ``ls -l`` the resolved files.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    for report in ordered_reports(libraries):
        versions: dict[str, list[Resolution]] = {}
        for item in report.resolutions:
            if item.path is None or not names.is_cudnn(item.name) or not item.version:
                continue
            if item.version.count(".") < 1:
                continue  # only the major is known (pip wheels): nothing to compare
            versions.setdefault(item.version, []).append(item)
        if len(versions) < 2:
            continue
        items = [item for group in versions.values() for item in group]
        yield make_finding(
            "cudnn.mixed_versions",
            Cause.CUDNN_MAJOR_MISMATCH,
            Layer.CUDNN,
            Severity.ERROR,
            params={
                "provider": report.provider,
                "versions": sorted(versions),
                "dirs": sorted({os.path.dirname(item.path or "") for item in items}),
            },
            evidence=resolution_evidence(items),
        )
        return


def cudnn_built_for_other_cuda(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The loader takes a cuDNN built for another CUDA major than ONNX Runtime's.

    cuDNN 9 keeps libcudnn.so.9 / cudnn64_9.dll for its CUDA 12 and CUDA 13 builds, so the name
    is found, but the file opens the other major's cuBLAS and runtime. Known from the pip wheel
    that installed it (nvidia-cudnn-cu12 / -cu13) or from the CUDA libraries it links.
    By hand: ``pip list | grep nvidia-cudnn`` and ``readelf -d <libcudnn*.so.9> | grep NEEDED``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    seen: set[str] = set()
    for report in ordered_reports(libraries):
        major = cuda_major_needed(snapshot, report)
        foreign, _pulled = foreign_resolutions(snapshot, report, major, names.is_cudnn, include_lazy=True)
        for entry in foreign:
            item = entry.item
            if item.name in seen:
                continue
            seen.add(item.name)
            package = cudnn_packages().get(major or 0)
            wrong = cudnn_packages().get(entry.belongs.major)
            python = target_python(snapshot)
            steps: list[Step] = []
            if (
                wrong
                and python is not None
                and snapshot.python is not None
                and any(dist.normalized_name == wrong for dist in snapshot.python.distributions)
            ):
                steps.append(RunStep((python, "-m", "pip", "uninstall", "-y", wrong)))
            if package and python is not None:
                steps.append(RunStep((python, "-m", "pip", "install", "--force-reinstall", package)))
            yield make_finding(
                "cudnn.built_for_other_cuda",
                Cause.CUDNN_MAJOR_MISMATCH,
                Layer.CUDNN,
                Severity.ERROR,
                params={
                    "provider": report.provider,
                    "name": item.name,
                    "path": item.path,
                    "found_major": entry.belongs.major,
                    "reason": entry.belongs.why,
                    "cuda_major": major if major is not None else "?",
                    "package": package or Words("evidence.cudnn_for_your_cuda"),
                    "wrong": wrong or Words("evidence.cudnn_for_cuda", {"major": entry.belongs.major}),
                    "verify_command": verify_command(
                        snapshot, report, windows, [item.name] if item.lazy else ()
                    ),
                },
                evidence=(
                    *resolution_evidence([item]),
                    cuda_file_evidence(item.path, entry.belongs),
                ),
                steps=tuple(steps),
            )


def cudnn_shadowed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A cuDNN library the loader would take from a copy of another major.

    By hand: ``readelf -d <file> | grep SONAME``.
    """
    yield from shadowed_findings(
        snapshot, names.is_cudnn, "cudnn.shadowed_by_other_major", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN
    )


CHECKS = (
    cudnn_missing,
    cudnn_major_mismatch,
    cudnn_built_for_other_cuda,
    cudnn_sublibraries_missing,
    cudnn_mixed_versions,
    cudnn_shadowed,
)
