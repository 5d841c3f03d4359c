"""Findings about the ONNX Runtime package itself: missing, two at once, or a CPU-only build."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from fallback_doctor.core.judgement.checks.cuda import other_build_path
from fallback_doctor.core.judgement.checks.package_binaries import directml_coreml_package
from fallback_doctor.core.judgement.checks.remedy import install_build_steps
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding, words_text
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.python_env import Distribution, normalize_name
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.onnxruntime import CPU_ONLY_PACKAGES
from fallback_doctor.core.readers.knowledge.ort_matrix import ort_requirements, ort_versions_for_cuda_major
from fallback_doctor.core.readers.targets.registry import remedy_terms

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "package.ort_not_installed", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "package.ort_files_missing", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec("package.conflict", Cause.PACKAGE_CONFLICT, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "package.conflict.cpu_in_effect",
        Cause.PACKAGE_CONFLICT,
        Layer.PACKAGE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "package.conflict.gpu_in_effect",
        Cause.PACKAGE_CONFLICT,
        Layer.PACKAGE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "package.ep_not_in_build", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "package.ep_not_in_build.other_accelerator",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec("native.no_library", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE),
    FindingSpec(
        "native.cpu_only_library", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


GPU_PACKAGE = "onnxruntime-gpu"
NEWEST_CUDA_MAJOR = 13
"""The CUDA major of the newest onnxruntime-gpu on PyPI (the default when nothing else is known)."""

HOST_ONLY_PROVIDERS = frozenset({"CPUExecutionProvider", "AzureExecutionProvider"})
"""Providers of a CPU-only build: the CPU, and Azure (remote calls, compiled into the CPU wheels)."""

_CUDART = re.compile(r"^(?:lib)?cudart(?:\.so\.|64_)(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class VersionChoice:
    """Which onnxruntime-gpu to install, and why that one."""

    version: str | None
    cuda_major: int
    why: Words
    """Why this CUDA major: "PyTorch in this environment is built for CUDA 12" … (catalogue words)."""

    @property
    def reason(self) -> str:
        """``why`` in English."""
        return words_text(self.why)

    @property
    def requirement(self) -> str:
        """onnxruntime-gpu==1.26.0, or plain onnxruntime-gpu where no version is known."""
        return f"{GPU_PACKAGE}=={self.version}" if self.version else GPU_PACKAGE


def pip(snapshot: EnvironmentSnapshot, arguments: str) -> str:
    """A pip command for the target's own interpreter: ``"/app/venv/bin/python" -m pip ARGS``."""
    python = snapshot.python.executable if snapshot.python else "python"
    return f'"{python}" -m pip {arguments}'


def choose_gpu_version(snapshot: EnvironmentSnapshot, prefer_major: int | None = None) -> VersionChoice:
    """The onnxruntime-gpu version to recommend for this machine, from the bundled matrix.

    The CUDA major is, in order: ``prefer_major``; the CUDA build of PyTorch in the same
    environment (so both load the same libraries); a CUDA major of which every library its
    onnxruntime-gpu needs is installed; the CUDA runtime the loader finds; the
    newest the driver supports; else the newest ONNX Runtime's. Versions whose Python floor
    excludes the target interpreter are skipped.
    """
    major, reason = _target_major(snapshot, prefer_major)
    driver_max = _driver_max_major(snapshot)
    if driver_max is not None and major > driver_max:
        major, reason = driver_max, Words("evidence.why.driver_at_most", {"major": driver_max})
    python_version = snapshot.python.version if snapshot.python else None
    versions = ort_versions_for_cuda_major(major, python_version=python_version)
    if not versions and python_version:
        # No build for this CUDA major supports this Python: an older major's build does,
        # and a driver that runs CUDA N runs CUDA N-1 builds too.
        for older in range(major - 1, 10, -1):
            versions = ort_versions_for_cuda_major(older, python_version=python_version)
            if versions:
                reason = Words(
                    "evidence.why.no_build_for_python",
                    {"reason": reason, "major": major, "python": python_version},
                )
                major = older
                break
    return VersionChoice(versions[0] if versions else None, major, reason)


def _target_major(snapshot: EnvironmentSnapshot, prefer_major: int | None) -> tuple[int, Words]:
    if prefer_major is not None:
        return prefer_major, Words("evidence.why.rest_uses", {"major": prefer_major})
    torch = snapshot.torch
    if torch is not None and torch.cuda_major is not None:
        return torch.cuda_major, Words(
            "evidence.why.torch", {"version": torch.version, "build": torch.cuda_build}
        )
    complete = _complete_cuda_major(snapshot)
    if complete is not None:
        return complete, Words("evidence.why.complete", {"major": complete})
    runtime = _loader_cudart_major(snapshot)
    if runtime is not None:
        return runtime, Words("evidence.why.runtime_found", {"major": runtime})
    driver_max = _driver_max_major(snapshot)
    if driver_max is not None:
        return min(driver_max, NEWEST_CUDA_MAJOR), Words(
            "evidence.why.driver_supports", {"major": driver_max}
        )
    return NEWEST_CUDA_MAJOR, Words("evidence.why.newest", {"major": NEWEST_CUDA_MAJOR})


def _complete_cuda_major(snapshot: EnvironmentSnapshot) -> int | None:
    """The newest CUDA major of which every library its onnxruntime-gpu needs is installed."""
    for major in (13, 12, 11):
        other = other_build_path(snapshot, major)
        if other is not None and not other.missing:
            return major
    return None


def _loader_cudart_major(snapshot: EnvironmentSnapshot) -> int | None:
    libraries = snapshot.libraries
    if libraries is None:
        return None
    majors = sorted(
        {
            int(match.group(1))
            for copy in libraries.inventory
            if copy.on_loader_path and (match := _CUDART.match(copy.name))
        },
        reverse=True,
    )
    return majors[0] if majors else None


def _driver_max_major(snapshot: EnvironmentSnapshot) -> int | None:
    driver = snapshot.driver
    if driver is None or not driver.cuda_driver_version:
        return None
    return driver.cuda_driver_version // 1000


def _why(choice: VersionChoice) -> Evidence:
    return said(
        "evidence.why_this_version",
        "evidence.why.choice",
        requirement=choice.requirement,
        major=choice.cuda_major,
        reason=choice.why,
    )


def _notes(ort: OrtFacts) -> list[Evidence]:
    """What the collector noted about the package (`ls SITE_PACKAGES/onnxruntime*`), in its words."""
    if len(ort.note_words) == len(ort.notes):
        return [said("evidence.note", "evidence.as_said", said=words) for words in ort.note_words]
    return [said("evidence.note", value=note) for note in ort.notes]


def _describe(dist: Distribution) -> str:
    return f"{dist.name} {dist.version} ({dist.location})"


def _verify_python(snapshot: EnvironmentSnapshot) -> str:
    """The interpreter the "verify" text's commands run (resources/texts/package.json)."""
    return snapshot.python.executable if snapshot.python else "python"


def _uninstall_names(ort: OrtFacts) -> tuple[str, ...]:
    names = [dist.name for dist in ort.distributions]
    for name in ("onnxruntime", GPU_PACKAGE):
        if name not in names:
            names.append(name)
    unique: list[str] = []
    for name in names:
        if name.lower() not in (item.lower() for item in unique):
            unique.append(name)
    return tuple(unique)


def _keep_installed_gpu(ort: OrtFacts, choice: VersionChoice) -> VersionChoice:
    """Keep the onnxruntime-gpu version already installed when it fits the chosen CUDA major."""
    for dist in ort.distributions:
        if dist.normalized_name != GPU_PACKAGE or not dist.version:
            continue
        requirement = ort_requirements(dist.version)
        if requirement is not None and requirement.cuda_major == choice.cuda_major:
            reason = Words(
                "evidence.why.installed_already",
                {"name": dist.name, "version": dist.version, "major": choice.cuda_major},
            )
            return VersionChoice(dist.version, choice.cuda_major, reason)
    return choice


def ort_not_installed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """ONNX Runtime is not importable in the target environment (or only its metadata is left).

    By hand: ``/path/to/python -m pip list | grep -i onnxruntime`` and
    ``/path/to/python -c "import onnxruntime"``.
    """
    ort = snapshot.onnxruntime
    if snapshot.python is None or ort is None or ort.package_dir is not None:
        return
    choice = choose_gpu_version(snapshot)
    python = snapshot.python.executable
    evidence = [
        said("evidence.interpreter", value=python),
        said("evidence.import_path", value=", ".join(snapshot.python.sys_path)),
        *_notes(ort),
    ]
    evidence.append(_why(choice))
    steps, needs = install_build_steps(snapshot, choice.requirement, choice.version, choice.cuda_major)
    if not ort.distributions:
        yield make_finding(
            "package.ort_not_installed",
            Cause.ORT_NOT_INSTALLED,
            Layer.PACKAGE,
            Severity.ERROR,
            params={
                "python": python,
                "requirement": choice.requirement,
                "cuda_major": choice.cuda_major,
                "verify_python": _verify_python(snapshot),
            },
            evidence=tuple(evidence) + needs,
            steps=tuple(steps),
        )
        return
    listed = "; ".join(_describe(dist) for dist in ort.distributions)
    evidence.extend(said("evidence.distribution", value=_describe(dist)) for dist in ort.distributions)
    yield make_finding(
        "package.ort_files_missing",
        Cause.ORT_NOT_INSTALLED,
        Layer.PACKAGE,
        Severity.ERROR,
        params={
            "python": python,
            "distributions": listed,
            "requirement": choice.requirement,
            "cuda_major": choice.cuda_major,
            "verify_python": _verify_python(snapshot),
        },
        evidence=tuple(evidence) + needs,
        steps=tuple(
            install_build_steps(
                snapshot,
                choice.requirement,
                choice.version,
                choice.cuda_major,
                _uninstall_names(ort),
                force=True,
            )[0]
        ),
    )


def sharing_one_folder(ort: OrtFacts) -> tuple[Distribution, ...]:
    """The ONNX Runtime distributions installed into one site-packages folder, if two or more.

    The folder import takes comes first; copies in different folders only shadow each other
    (import takes the first on sys.path) and are not this conflict.
    """
    groups: dict[str, list[Distribution]] = {}
    for dist in ort.distributions:
        group = groups.setdefault(dist.location, [])
        if all(other.normalized_name != dist.normalized_name for other in group):
            group.append(dist)
    taken = os.path.dirname(ort.package_dir) if ort.package_dir else None
    ordered = sorted(groups.items(), key=lambda item: item[0] != taken)
    return next((tuple(group) for _, group in ordered if len(group) > 1), ())


def package_conflict(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """More than one onnxruntime* distribution shares the onnxruntime/ folder.

    They overwrite each other's files, so which build `import onnxruntime` gets depends on the
    install order. The finding says whose files are in effect: a CPU-only package installed last
    makes ONNX Runtime a CPU-only build even though the GPU package's provider libraries are left
    on disk (they are never loaded); a GPU package installed last works until the other package
    is reinstalled or removed. By hand: ``/path/to/python -m pip list | grep -i onnxruntime`` and
    ``cat SITE_PACKAGES/onnxruntime/capi/build_and_package_info.py`` (package_name).
    """
    ort = snapshot.onnxruntime
    if ort is None:
        return
    sharing = sharing_one_folder(ort)
    if not sharing:
        return
    choice = _keep_installed_gpu(ort, choose_gpu_version(snapshot))
    listed = "; ".join(_describe(dist) for dist in sharing)
    owner = ort.build_package_name or "?"
    owner_key = normalize_name(owner)
    cpu_dists = [dist for dist in sharing if dist.normalized_name in CPU_ONLY_PACKAGES]
    gpu_dists = [dist for dist in sharing if dist.normalized_name not in CPU_ONLY_PACKAGES]
    evidence = [said("evidence.distribution", value=_describe(dist)) for dist in sharing]
    evidence.append(
        said("evidence.files_belong_to", value=f"{owner} {ort.version or '?'}", source=ort.package_dir)
    )
    providers = ", ".join(ort.providers_in_build)
    evidence.append(said("evidence.providers_of_that_build", value=providers, otherwise="evidence.none"))
    evidence.extend(said("evidence.provider_not_used", value=lib.path) for lib in ort.leftover_libraries)
    evidence.extend(_notes(ort))
    evidence.append(_why(choice))
    finding_id = "package.conflict"
    if owner_key in CPU_ONLY_PACKAGES and gpu_dists and not ort.has_cuda_provider:
        finding_id = "package.conflict.cpu_in_effect"
    elif ort.has_cuda_provider and cpu_dists and owner_key not in CPU_ONLY_PACKAGES:
        finding_id = "package.conflict.gpu_in_effect"
    steps, needs = install_build_steps(
        snapshot, choice.requirement, choice.version, choice.cuda_major, _uninstall_names(ort)
    )
    leftovers = ", ".join(os.path.basename(lib.path) for lib in ort.leftover_libraries)
    yield make_finding(
        finding_id,
        Cause.PACKAGE_CONFLICT,
        Layer.PACKAGE,
        Severity.ERROR,
        params={
            "distributions": listed,
            "owner": owner,
            "version": ort.version or "?",
            "providers": providers or Words("evidence.none"),
            "package_dir": ort.package_dir or "?",
            "requirement": choice.requirement,
            "cuda_major": choice.cuda_major,
            "gpu_package": " / ".join(f"{dist.name} {dist.version}" for dist in gpu_dists) or "?",
            "cpu_package": " / ".join(f"{dist.name} {dist.version}" for dist in cpu_dists) or "?",
            "leftovers": leftovers or Words("evidence.none"),
            "verify_python": _verify_python(snapshot),
        },
        evidence=tuple(evidence) + needs,
        steps=tuple(steps),
    )


def ep_not_in_build(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The installed ONNX Runtime build has no CUDA provider: it is a CPU-only package.

    (Left to package_conflict when two packages share the folder: that finding explains
    it.) By hand: ``ls SITE_PACKAGES/onnxruntime/capi | grep providers`` and
    ``python -c "import onnxruntime as o; print(o.get_available_providers())"``.
    """
    ort = snapshot.onnxruntime
    if ort is None or ort.package_dir is None or ort.has_cuda_provider:
        return
    if sharing_one_folder(ort) or remedy_terms(snapshot.target) == "application":
        return  # an application's own folder: native_library says it in the application's terms
    choice = choose_gpu_version(snapshot)
    package = ort.build_package_name or (ort.distributions[0].name if ort.distributions else "onnxruntime")
    evidence = [
        said("evidence.package", value=f"{package} {ort.version or '?'}", source=ort.package_dir),
        said("evidence.providers_in_build", value=", ".join(ort.providers_in_build)),
    ]
    evidence.extend(said("evidence.leftover_library", value=lib.path) for lib in ort.leftover_libraries)
    evidence.extend(_notes(ort))
    evidence.append(_why(choice))
    steps, needs = install_build_steps(
        snapshot, choice.requirement, choice.version, choice.cuda_major, _uninstall_names(ort)
    )
    cpu_only = not set(ort.providers_in_build) - HOST_ONLY_PROVIDERS
    yield make_finding(
        "package.ep_not_in_build" if cpu_only else "package.ep_not_in_build.other_accelerator",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        Severity.ERROR,
        params={
            "package": package,
            "version": ort.version or "?",
            "providers": ", ".join(ort.providers_in_build),
            "requirement": choice.requirement,
            "cuda_major": choice.cuda_major,
            "verify_python": _verify_python(snapshot),
        },
        evidence=tuple(evidence) + needs,
        steps=tuple(steps),
    )


def native_library(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A native application's library folder holds no ONNX Runtime, or a CPU-only build of it.

    The remedy is in the application's own terms: the NuGet package Microsoft.ML.OnnxRuntime.Gpu,
    the Maven artifact onnxruntime_gpu, ORT_DYLIB_PATH for Rust's ort, onnxruntime-node's CUDA
    install flag, the GPU release archive. By hand: ``ls -l DIR | grep onnxruntime``.
    """
    target = snapshot.target
    if target is None or remedy_terms(target) != "application" or target.lib_ort is None:
        return
    from fallback_doctor.core.readers.knowledge.native_apps import app_named

    lib = target.lib_ort
    app = app_named(target.app or "c")
    evidence = [said("evidence.library_folder", value=lib.directory, source=target.root_source)]
    if lib.load_error:
        evidence.append(said("evidence.not_read", value=lib.load_error))
    if lib.core_library is None:
        yield make_finding(
            "native.no_library",
            Cause.ORT_NOT_INSTALLED,
            Layer.PACKAGE,
            Severity.ERROR,
            params={"lib_dir": lib.directory, "app": app.words},
            evidence=tuple(evidence),
        )
        return
    if any(name not in HOST_ONLY_PROVIDERS for name in lib.gpu_providers):
        return
    version = lib.version or "?"
    evidence.append(
        said(
            "evidence.ort_library",
            value=f"{os.path.basename(lib.core_library)} {version}",
            source=lib.version_source,
        )
    )
    evidence.append(said("evidence.application", value=app.words, source=app.source))
    matrix = ort_requirements(lib.version) if lib.version else None
    yield make_finding(
        "native.cpu_only_library",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        Severity.ERROR,
        params={
            "lib_dir": lib.directory,
            "library": os.path.basename(lib.core_library),
            "version": version,
            "app": app.words,
            "app_fix": app.fix,
            "cuda_major": matrix.cuda_major if matrix else "?",
        },
        evidence=tuple(evidence),
        commands=app.remedy(lib.version),
    )


CHECKS = (ort_not_installed, package_conflict, ep_not_in_build, native_library, directml_coreml_package)
