"""CUDA runtime layer: libraries the provider needs that the loader cannot find, or finds in
another CUDA major.

By hand: ``ldd /path/libonnxruntime_providers_cuda.so | grep "not found"`` and
``ldconfig -p | grep -E "cudart|cublas|cufft|curand|nvrtc"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.facts.libraries import DependencyReport, LibraryFacts, Resolution
from fallback_doctor.core.knowledge.ort_matrix import ort_versions_for_cuda_major, release_tuple
from fallback_doctor.core.loader import names
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import make_finding

_NOT_LOOKED_UP = frozenset({"API set", "KnownDLLs"})

CUDA_PACKAGES: dict[int, dict[str, str]] = {
    13: {"cudart": "nvidia-cuda-runtime", "cublas": "nvidia-cublas", "cublasLt": "nvidia-cublas",
         "cufft": "nvidia-cufft", "curand": "nvidia-curand", "nvrtc": "nvidia-cuda-nvrtc",
         "nvJitLink": "nvidia-nvjitlink"},
    12: {"cudart": "nvidia-cuda-runtime-cu12", "cublas": "nvidia-cublas-cu12",
         "cublasLt": "nvidia-cublas-cu12", "cufft": "nvidia-cufft-cu12",
         "curand": "nvidia-curand-cu12", "nvrtc": "nvidia-cuda-nvrtc-cu12",
         "nvJitLink": "nvidia-nvjitlink-cu12"},
    11: {"cudart": "nvidia-cuda-runtime-cu11", "cublas": "nvidia-cublas-cu11",
         "cublasLt": "nvidia-cublas-cu11", "cufft": "nvidia-cufft-cu11",
         "curand": "nvidia-curand-cu11", "nvrtc": "nvidia-cuda-nvrtc-cu11"},
}
"""pip packages per CUDA major (compat-reference §5.2: CUDA 13 names carry no -cu13 suffix)."""

CUDNN_PACKAGES: dict[int, str] = {13: "nvidia-cudnn-cu13", 12: "nvidia-cudnn-cu12",
                                  11: "nvidia-cudnn-cu11"}


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
    return [item for item in report.resolutions
            if item.path is None and item.via not in _NOT_LOOKED_UP]


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
        return f"python -c \"import ctypes; {loads}\""
    return f"ldd {report.root} | grep \"not found\""


def resolution_evidence(items: Iterable[Resolution]) -> tuple[Evidence, ...]:
    """Evidence lines for each resolution: needed by, searched directories, copies elsewhere."""
    evidence: list[Evidence] = []
    for item in items:
        evidence.append(Evidence("needed", f"{item.name} (needed by {item.needed_by}"
                                 + (", opened at run time)" if item.lazy else ")")))
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
        missing = [item for item in unresolved(report)
                   if names.is_cuda_runtime(item.name) and not item.lazy
                   and item.name not in covered]
        covered.update(item.name for item in missing)
        if not missing:
            continue
        major = cuda_major_needed(snapshot, report)
        elsewhere = [item for item in missing if item.installed_elsewhere]
        other = [item for item in missing
                 if not item.installed_elsewhere and other_major_copies(libraries, item)]
        absent = [item for item in missing if item not in elsewhere and item not in other]
        all_names = [item.name for item in missing]
        params = {
            "provider": report.provider, "provider_path": report.root,
            "names": all_names, "count": len(all_names),
            "cuda_major": major if major is not None else "?",
            "path_var": "PATH" if windows else "LD_LIBRARY_PATH",
        }
        if elsewhere:
            dirs = list(dict.fromkeys(os.path.dirname(item.installed_elsewhere[0])
                                      for item in elsewhere))
            commands = [ld_path_command(dirs, windows)]
            finding_id = "cuda.runtime_not_on_loader_path"
            if preload_dlls_applies(snapshot):
                commands.append(
                    "import onnxruntime; onnxruntime.preload_dlls()  "
                    "# in the application, before creating the InferenceSession")
            yield make_finding(
                finding_id, Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR,
                params={**params, "elsewhere": [item.name for item in elsewhere], "dirs": dirs},
                evidence=resolution_evidence(missing), commands=tuple(commands),
                verify=verify_command(report, windows),
            )
        if absent:
            families = [names.family_of(item.name) or "" for item in absent]
            packages = _packages_for(families, major)
            commands = []
            if packages:
                commands.append(f"{python_executable(snapshot)} -m pip install "
                                + " ".join(packages))
            yield make_finding(
                "cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, Severity.ERROR,
                params={**params, "absent": [item.name for item in absent],
                        "packages": packages or ["the CUDA toolkit runtime"]},
                evidence=resolution_evidence(missing), commands=tuple(commands),
                verify=verify_command(report, windows),
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
        missing = [item for item in unresolved(report)
                   if item.lazy and names.is_cuda_runtime(item.name)]
        if not missing:
            continue
        major = cuda_major_needed(snapshot, report)
        packages = _packages_for([names.family_of(item.name) or "" for item in missing], major)
        commands = ((f"{python_executable(snapshot)} -m pip install " + " ".join(packages),)
                    if packages else ())
        yield make_finding(
            "cuda.optional_runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA,
            Severity.WARNING,
            params={"provider": report.provider, "names": [item.name for item in missing],
                    "packages": packages or ["the CUDA toolkit runtime"]},
            evidence=resolution_evidence(missing), commands=commands,
            verify=verify_command(report, windows, [item.name for item in missing]),
        )


def cuda_major_mismatch(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The build needs CUDA N libraries; only another major's copies are present.

    By hand: ``ldconfig -p | grep cublas`` and ``ls site-packages/nvidia/*/lib``.
    """
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    covered: set[str] = set()
    for report in ordered_reports(libraries):
        items = [item for item in unresolved(report)
                 if names.is_cuda_runtime(item.name) and not item.lazy
                 and not item.installed_elsewhere and other_major_copies(libraries, item)
                 and item.name not in covered]
        covered.update(item.name for item in items)
        if not items:
            continue
        major = cuda_major_needed(snapshot, report)
        copies = [copy for item in items for copy in other_major_copies(libraries, item)]
        found_majors = sorted({parsed.major for parsed in
                               (names.parse_library_name(os.path.basename(copy))
                                for copy in copies)
                               if parsed is not None and parsed.major is not None})
        cuda_found = _cuda_major_of_copies(copies)
        packages = _packages_for([names.family_of(item.name) or "" for item in items], major)
        commands = []
        if packages:
            commands.append(f"{python_executable(snapshot)} -m pip install " + " ".join(packages))
        python_version = snapshot.python.version if snapshot.python else None
        matching = ort_versions_for_cuda_major(cuda_found, python_version=python_version) \
            if cuda_found else ()
        if matching:
            commands.append(f"{python_executable(snapshot)} -m pip install "
                            f"\"onnxruntime-gpu=={matching[0]}\"")
        ort = snapshot.onnxruntime
        yield make_finding(
            "cuda.major_mismatch", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, Severity.ERROR,
            params={
                "provider": report.provider,
                "ort_version": (ort.version if ort and ort.version else "this build"),
                "cuda_major": major if major is not None else "?",
                "found_major": cuda_found if cuda_found is not None else "/".join(
                    str(item) for item in found_majors),
                "names": [item.name for item in items], "copies": copies,
                "ort_match": matching[0] if matching else "a version built for that CUDA",
                "packages": packages or ["the CUDA toolkit runtime"],
            },
            evidence=resolution_evidence(items), commands=tuple(commands),
            verify=verify_command(report, windows),
        )


def _cuda_major_of_copies(copies: Sequence[str]) -> int | None:
    """The CUDA major the copies belong to, judged from cudart/cublas names (not curand/cufft)."""
    for copy in copies:
        parsed = names.parse_library_name(os.path.basename(copy))
        if parsed and parsed.family.lower() in ("cudart", "cublas", "cublaslt", "nvrtc") \
                and parsed.major:
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
    yield from shadowed_findings(snapshot, names.is_cuda_runtime, "cuda.shadowed_by_other_major",
                                 Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA)


def shadowed_findings(snapshot: EnvironmentSnapshot, family_test: object, finding_id: str,
                      cause: Cause, layer: Layer) -> Iterator[Finding]:
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
                finding_id, cause, layer, Severity.ERROR,
                params={"name": item.name, "path": item.path, "actual": actual,
                        "via": item.via, "provider": report.provider},
                evidence=resolution_evidence([item]),
                commands=(f"ls -l {item.path}",) if not windows else (),
                verify=verify_command(report, windows),
            )


CHECKS = (cuda_runtime_missing, cuda_major_mismatch, cuda_shadowed, cuda_optional_missing)
