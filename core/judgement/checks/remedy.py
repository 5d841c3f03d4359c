"""The typed steps of the checks' remedies (core/model/result.py Step records), built from the facts.

Every command names the target's own interpreter (never a bare ``python``); a remedy that needs
an interpreter the facts do not have (a native server) gets its CUDA libraries by ``pip --target``
on the host instead (core/judgement/checks/remedy_native.py). Environment steps take
their scope from where the application runs: its systemd unit (a drop-in), its container (``-e``),
else the process that starts it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from fallback_doctor.core.judgement.checks.resolution import is_windows, preload_dlls_applies, unresolved
from fallback_doctor.core.language.evidence_text import code_step, manual_step
from fallback_doctor.core.model.facts.libraries import DependencyReport
from fallback_doctor.core.model.result import EnvironmentStep, Evidence, ManualStep, RunStep, Step, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.loader import names

PRELOAD_CODE = "import onnxruntime\nonnxruntime.preload_dlls()"


def target_python(snapshot: EnvironmentSnapshot) -> str | None:
    """The application's interpreter, None when the target has none (a native server)."""
    if snapshot.python is not None and snapshot.python.executable:
        return snapshot.python.executable
    return None


def pip_steps(
    snapshot: EnvironmentSnapshot, packages: Iterable[str | None], option: int = 1, *, uninstall: bool = False
) -> list[Step]:
    """``<interpreter> -m pip install|uninstall -y PACKAGES`` (none: no step; no interpreter: none)."""
    wanted = list(dict.fromkeys(package for package in packages if package))
    python = target_python(snapshot)
    if not wanted or python is None:
        return []
    verb = ["uninstall", "-y"] if uninstall else ["install"]
    return [RunStep((python, "-m", "pip", *verb, *wanted), "application", option)]


def shared_folder_uninstall(
    snapshot: EnvironmentSnapshot, packages: Iterable[str], option: int = 1
) -> list[Step]:
    """``pip uninstall -y`` of the installed cuDNN wheels of another CUDA major than the one
    ``packages`` installs: nvidia-cudnn-cu12 and -cu13 share the folder nvidia/cudnn, and one
    installed over the other leaves a mix of both majors' files (seen: issue 27)."""
    from fallback_doctor.core.readers.knowledge.cuda_packages import cudnn_packages

    every = set(cudnn_packages().values())
    wanted = [package for package in packages if package in every]
    python = target_python(snapshot)
    if not wanted or python is None or snapshot.python is None:
        return []
    installed = {dist.normalized_name for dist in snapshot.python.distributions}
    other = sorted(name for name in every - set(wanted) if name in installed)
    return [RunStep((python, "-m", "pip", "uninstall", "-y", *other), "application", option)] if other else []


def environment_scope(snapshot: EnvironmentSnapshot) -> tuple[str, str | None]:
    """("systemd", unit) for a service, ("container", None) in a container, else ("process", None)."""
    process = snapshot.process
    if process is not None:
        unit = getattr(process, "unit", None)
        if unit is not None and getattr(unit, "name", None):
            return "systemd", str(unit.name)
        if getattr(process, "container", None) is not None:
            return "container", None
    return "process", None


def _container_value(snapshot: EnvironmentSnapshot, variable: str) -> str:
    """``variable`` as the application's container has it now ("" when unknown or unset)."""
    process = snapshot.process
    environment = process.effective_environment() if process is not None else None
    return str((environment or {}).get(variable) or "")


def loader_path_steps(
    snapshot: EnvironmentSnapshot, dirs: Sequence[str], windows: bool, option: int = 1
) -> list[Step]:
    """Put ``dirs`` first on the loader path; ``preload_dlls()`` as the alternative where it applies."""
    if not dirs:
        return []
    scope, unit = environment_scope(snapshot)
    variable = "PATH" if windows else "LD_LIBRARY_PATH"
    separator = ";" if windows else ":"
    mode = "set" if scope in ("systemd", "container") else "prepend"
    value = separator.join(dirs)
    if scope == "container":  # -e replaces the image's value: keep what the container has after ours
        current = _container_value(snapshot, variable)
        value = separator.join(
            [*dirs, *(part for part in current.split(separator) if part and part not in dirs)]
        )
    steps: list[Step] = [EnvironmentStep({variable: value}, scope, mode, separator, unit, option)]
    if preload_dlls_applies(snapshot):
        steps.append(code_step(PRELOAD_CODE, "remedy.code_where.first_session", option + 1))
    return steps


def installed_lib_dirs(snapshot: EnvironmentSnapshot, packages: Iterable[str | None]) -> list[str]:
    """Where pip will put the Linux libraries of ``packages`` in the application's site-packages
    (resources/compat/pip_packages.json ``wheel_lib_dirs``): ONNX Runtime does not look there by
    itself, so an install is only a fix with these folders on the loader path (seen: after
    ``pip install nvidia-cublas nvidia-curand`` alone ONNX Runtime still failed on libcublasLt.so.13)."""
    from fallback_doctor.core.readers.knowledge.cuda_packages import wheel_lib_dirs

    python = snapshot.python
    if python is None or not python.site_packages:
        return []
    ort = snapshot.onnxruntime
    package_dir = ort.package_dir if ort is not None and ort.package_dir else ""
    sites = python.site_packages
    site = next((folder for folder in sites if package_dir.startswith(folder)), sites[0])
    folders = wheel_lib_dirs()
    names_only = (re.split(r"[=<>!~ \[;]", package, maxsplit=1)[0] for package in packages if package)
    return list(dict.fromkeys(os.path.join(site, folders[name]) for name in names_only if name in folders))


def _with_loader_path(
    snapshot: EnvironmentSnapshot, steps: list[Step], packages: Sequence[str | None]
) -> list[Step]:
    """``steps`` (a pip install of ``packages``) followed by the loader-path step for the folders the
    install fills, and ``preload_dlls()`` after the same install as the alternative where it applies."""
    if is_windows(snapshot) or not steps:
        return steps
    dirs = installed_lib_dirs(snapshot, packages)
    loader = loader_path_steps(snapshot, dirs, False, 1)
    out = [*steps, *(step for step in loader if step.option == 1)]
    if len(loader) > 1:
        out += [*(_as_option(step, 2) for step in steps), loader[-1]]
    return out


def _as_option(step: Step, option: int) -> Step:
    return replace(step, option=option)


def install_build_steps(
    snapshot: EnvironmentSnapshot,
    requirement: str,
    version: str | None,
    cuda_major: int,
    uninstall: Sequence[str] = (),
    *,
    force: bool = False,
) -> tuple[list[Step], tuple[Evidence, ...]]:
    """Install ``requirement`` with every CUDA/cuDNN package that release needs and is missing here.

    The uninstall of ``uninstall`` first (packages sharing the onnxruntime/ folder), then one pip
    install of the build and the missing libraries' packages. The evidence says what the release
    needs and what of it is present (core/judgement/checks/version_needs.py).
    """
    from fallback_doctor.core.judgement.checks.version_needs import version_needs

    needs = version_needs(snapshot, version, cuda_major)
    steps = pip_steps(snapshot, uninstall, uninstall=True)
    install = pip_steps(snapshot, [requirement, *(needs.packages if needs else ())])
    if force and install and isinstance(install[0], RunStep):
        argv = install[0].argv
        install = [RunStep((*argv[:4], "--force-reinstall", *argv[4:]))]
    packages = [requirement, *(needs.packages if needs else ())]
    steps = _with_loader_path(snapshot, [*steps, *install], packages)
    return steps, (needs.evidence() if needs else ())


def elsewhere_dirs(report: DependencyReport) -> list[str]:
    """The folders of every library the provider needs that is installed where the loader does not
    look (CUDA, cuDNN, those opened at run time): one loader-path step then covers them all."""
    ordered = sorted(unresolved(report), key=lambda item: 0 if names.is_cuda_runtime(item.name) else 1)
    return list(
        dict.fromkeys(
            os.path.dirname(item.installed_elsewhere[0]) for item in ordered if item.installed_elsewhere
        )
    )


def library_fix_steps(
    snapshot: EnvironmentSnapshot,
    wanted: Sequence[str],
    cuda_major: int | None,
    windows: bool,
    option: int = 1,
) -> list[Step]:
    """Make the library files ``wanted`` (of CUDA ``cuda_major``) loadable: install what is not
    installed anywhere as that major's file (by package name), then put the folders of the copies
    that are installed but not on the loader path first on it."""
    from fallback_doctor.core.judgement.checks.cuda_major import file_cuda_major, packages_for
    from fallback_doctor.core.readers.knowledge.cuda_packages import cudnn_packages

    libraries = snapshot.libraries
    inventory = libraries.inventory if libraries is not None else ()
    dirs: list[str] = []
    absent: list[str] = []
    for name in wanted:
        copies = [
            copy
            for copy in inventory
            if (copy.name.lower() == name.lower() if windows else names.same_soname_line(name, copy.name))
            and (
                cuda_major is None
                or (belongs := file_cuda_major(snapshot, copy.path, copy.name)) is None
                or belongs.major == cuda_major
            )
        ]
        if any(copy.on_loader_path for copy in copies):
            continue
        if copies:
            dirs.append(os.path.dirname(copies[0].path))
        else:
            absent.append(name)
    families = [names.family_of(name) or "" for name in absent]
    packages = packages_for(
        [family for family in families if not family.lower().startswith("cudnn")], cuda_major
    )
    if any(family.lower().startswith("cudnn") for family in families) and cuda_major in cudnn_packages():
        packages.append(cudnn_packages()[cuda_major or 0])
    if target_python(snapshot) is None and not windows:
        return _native_fix_steps(snapshot, cuda_major, absent, dirs, option)
    steps = [*shared_folder_uninstall(snapshot, packages, option), *pip_steps(snapshot, packages, option)]
    if steps and not windows:  # what the install fills is not on the loader path either
        dirs += installed_lib_dirs(snapshot, packages)
    loader = loader_path_steps(snapshot, list(dict.fromkeys(dirs)), windows, option)
    steps += [step for step in loader if step.option == option]
    if len(loader) > 1:  # the preload_dlls() alternative: the same installs, then the code
        uninstall = shared_folder_uninstall(snapshot, packages, option + 1)
        steps += [*uninstall, *pip_steps(snapshot, packages, option + 1), loader[-1]]
    return steps


def _native_fix_steps(
    snapshot: EnvironmentSnapshot,
    cuda_major: int | None,
    absent: Sequence[str],
    dirs: Sequence[str],
    option: int,
) -> list[Step]:
    """A native server (no interpreter): the wheels with pip --target into a folder of its own
    (core/judgement/checks/remedy_native.py), its folders and those of copies installed elsewhere on the
    server's loader path, a restart; NVIDIA's system packages as the alternative."""
    from fallback_doctor.core.judgement.checks.remedy_native import native_install_steps, system_packages_step

    install, lib_dirs = native_install_steps(snapshot, cuda_major, absent, option)
    folders = list(dict.fromkeys([*lib_dirs, *dirs]))
    if not folders:
        return []
    steps = [
        *install,
        *(s for s in loader_path_steps(snapshot, folders, False, option) if s.option == option),
    ]
    steps.append(restart_step(snapshot, option))
    if install and cuda_major is not None:
        steps.append(system_packages_step(cuda_major, option + 1))
    return steps


def provider_wanted(report: DependencyReport) -> list[str]:
    """Every CUDA runtime and cuDNN library the provider needs and the loader cannot find now
    (those opened at run time too): the remedy of one of them makes the provider whole."""
    wanted = [
        item.name
        for item in unresolved(report)
        if names.is_cuda_runtime(item.name) or names.is_cudnn(item.name)
    ]
    return list(dict.fromkeys(wanted))


def release_archive_steps(
    lib_path: str, version: str | None, windows: bool, snapshot: EnvironmentSnapshot
) -> list[Step]:
    """Put ONNX Runtime's GPU release into a native server's libPath: the exact archive of its
    version (onnxruntime-linux-x64-gpu-VERSION.tgz, github.com/microsoft/onnxruntime/releases),
    its lib folder unpacked into libPath, then the server restarted."""
    if not version or version == "?":
        return [manual_step("remedy.manual.release_put", lib_path=lib_path)]
    stem = f"onnxruntime-{'win' if windows else 'linux'}-x64-gpu-{version}"
    archive = stem + (".zip" if windows else ".tgz")
    url = f"https://github.com/microsoft/onnxruntime/releases/download/v{version}/{archive}"
    if windows:
        restart = restart_phrase(snapshot)
        return [manual_step("remedy.manual.release_download", url=url, lib_path=lib_path, restart=restart)]
    return [
        RunStep(("curl", "-fLO", url), "host"),
        RunStep(("tar", "-xzf", archive, "-C", lib_path, "--strip-components=2", f"{stem}/lib"), "host"),
        restart_step(snapshot),
    ]


def _restart_how(snapshot: EnvironmentSnapshot) -> tuple[str, dict[str, str]]:
    """How the server is restarted (its unit, its container, else plainly): the catalogue's
    word for it and its parameters."""
    scope, unit = environment_scope(snapshot)
    if scope == "systemd" and unit:
        return "unit", {"unit": unit}
    return ("container", {}) if scope == "container" else ("server", {})


def restart_phrase(snapshot: EnvironmentSnapshot) -> Words:
    """How the server is restarted, as words inside a sentence ("restart the server")."""
    how, params = _restart_how(snapshot)
    return Words(f"remedy.restart.{how}", params)


def restart_step(snapshot: EnvironmentSnapshot, option: int = 1) -> ManualStep:
    """The restart as a manual step ("Restart the server: systemctl restart app.service.")."""
    how, params = _restart_how(snapshot)
    return manual_step(f"remedy.manual.restart_{how}", option, **params)
