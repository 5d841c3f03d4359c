"""The package-layer checks on facts collected from real environments."""

from __future__ import annotations

import dataclasses
import os
import shlex
from functools import cache

import pytest
from fallback_doctor.core.judgement.checks import package
from fallback_doctor.core.judgement.checks.package import (
    choose_gpu_version,
    ep_not_in_build,
    ort_not_installed,
    package_conflict,
)
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.facts.driver import DriverFacts
from fallback_doctor.core.model.facts.libraries import LibraryCopy, LibraryFacts
from fallback_doctor.core.model.result import Finding
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.onnxruntime import collect_onnxruntime
from fallback_doctor.core.readers.collect.python_env import collect_python_env
from python_env_venvs import files_missing, scenario, site_packages, venv_python


@cache
def snapshot_of(name: str) -> EnvironmentSnapshot:
    venv = files_missing() if name == "files_missing" else scenario(name)
    python = collect_python_env(str(venv_python(venv)), dict(os.environ))
    return EnvironmentSnapshot(python=python, onnxruntime=collect_onnxruntime(python))


def _driver(cuda_driver_version: int) -> DriverFacts:
    """What NVML reports on a machine whose driver supports this CUDA (no driver here: data only)."""
    return DriverFacts(
        nvml_status="ok",
        nvml_error=None,
        driver_version="550.54.14",
        cuda_driver_version=cuda_driver_version,
        gpus=(),
        proc_driver_version=None,
    )


def findings(snapshot: EnvironmentSnapshot) -> list[Finding]:
    return [finding for check in package.CHECKS for finding in check(snapshot)]


def _python(name: str) -> str:
    venv = files_missing() if name == "files_missing" else scenario(name)
    return str(venv_python(venv))


def test_cpu_only_package_is_ep_not_in_build() -> None:
    snapshot = snapshot_of("cpu_1_23_2")
    [finding] = findings(snapshot)
    assert (finding.id, finding.cause, finding.layer, finding.severity) == (
        "package.ep_not_in_build",
        "ep_not_in_build",
        "package",
        "error",
    )
    assert "onnxruntime 1.23.2" in finding.detail and "CPUExecutionProvider" in finding.detail
    assert finding.remediation is not None
    python = _python("cpu_1_23_2")
    uninstall, install, loader, *alternative = (shlex.split(c) for c in finding.remediation.commands)
    assert uninstall == [python, "-m", "pip", "uninstall", "-y", "onnxruntime", "onnxruntime-gpu"]
    # the libraries that install brings, on the loader path (ONNX Runtime does not look there itself)
    assert loader[0] == "export" and "nvidia/cu13/lib" in loader[1] and "nvidia/cudnn/lib" in loader[1]
    assert alternative[:2] == [uninstall, install]  # option 2: the same installs, then preload_dlls()
    # nothing else known: the newest, CUDA 13, with every CUDA 13 library and cuDNN it needs (issue 11)
    assert install[:5] == [python, "-m", "pip", "install", "onnxruntime-gpu==1.31.1"]
    assert {"nvidia-cublas", "nvidia-cudnn-cu13"} <= set(install[5:])
    assert finding.remediation.verify is not None and python in finding.remediation.verify
    assert words_of(finding, "ko")["title"] != finding.title


def test_both_packages_are_a_conflict_whatever_the_order() -> None:
    for name, owner, in_effect in (
        ("gpu_then_cpu", "onnxruntime", "cpu_in_effect"),
        ("cpu_then_gpu", "onnxruntime-gpu", "gpu_in_effect"),
    ):
        [finding] = findings(snapshot_of(name))  # ep_not_in_build is left to the conflict
        assert (finding.id, finding.cause, finding.severity) == (
            f"package.conflict.{in_effect}",
            "package_conflict",
            "error",
        )
        assert "onnxruntime 1.23.2" in finding.detail and "onnxruntime-gpu 1.23.2" in finding.detail
        assert f"files of the CPU-only package {owner} 1.23.2" in finding.detail or (
            f"those of {owner} 1.23.2, installed last" in finding.detail
        )
        assert finding.remediation is not None
        python = _python(name)
        uninstall, install, *_loader = (shlex.split(c) for c in finding.remediation.commands)
        assert uninstall[:5] == [python, "-m", "pip", "uninstall", "-y"]
        assert set(uninstall[-2:]) == {"onnxruntime", "onnxruntime-gpu"}
        assert install[:4] == [python, "-m", "pip", "install"] and install[4].startswith("onnxruntime-gpu==")
        assert any(e.label == "files in onnxruntime/ belong to" for e in finding.evidence)


def test_cpu_package_in_effect_says_the_gpu_libraries_left_on_disk_are_not_used() -> None:
    [finding] = findings(snapshot_of("gpu_then_cpu"))
    assert "CPU-only build" in finding.title
    assert "libonnxruntime_providers_cuda.so" in finding.detail
    assert "never loads them" in finding.detail
    assert "AzureExecutionProvider, CPUExecutionProvider" in finding.detail
    assert any(
        e.label == "provider library on disk, not used"
        and e.value.endswith("libonnxruntime_providers_cuda.so")
        for e in finding.evidence
    )


def test_gpu_package_in_effect_warns_that_it_lasts_only_until_a_reinstall() -> None:
    [finding] = findings(snapshot_of("cpu_then_gpu"))
    assert "CUDAExecutionProvider" in finding.detail
    assert "reinstalling onnxruntime 1.23.2" in finding.detail
    assert not any(e.label == "provider library on disk, not used" for e in finding.evidence)


def test_conflict_keeps_the_installed_gpu_version_when_it_fits() -> None:
    base = snapshot_of("gpu_then_cpu")
    cuda_12_driver = _driver(12040)
    [finding] = findings(dataclasses.replace(base, driver=cuda_12_driver))
    assert finding.remediation is not None
    assert "onnxruntime-gpu==1.23.2" in shlex.split(finding.remediation.commands[1])


def test_gpu_packages_alone_are_fine() -> None:
    assert findings(snapshot_of("gpu_1_23_2")) == []
    assert findings(snapshot_of("gpu_1_31_1")) == []


def test_metadata_without_files() -> None:
    [finding] = findings(snapshot_of("files_missing"))
    assert (finding.id, finding.cause) == ("package.ort_files_missing", "ort_not_installed")
    assert "onnxruntime-gpu 1.23.2" in finding.detail
    assert finding.remediation is not None
    assert "--force-reinstall" in finding.remediation.commands[1]


def test_not_installed_at_all() -> None:
    venv_facts = snapshot_of("cpu_1_23_2").python
    assert venv_facts is not None
    bare = dataclasses.replace(venv_facts, distributions=(), sys_path=("/nonexistent",), site_packages=())
    snapshot = EnvironmentSnapshot(python=bare, onnxruntime=collect_onnxruntime(bare))
    [finding] = findings(snapshot)
    assert (finding.id, finding.cause) == ("package.ort_not_installed", "ort_not_installed")
    assert finding.remediation is not None
    [install] = (shlex.split(command) for command in finding.remediation.commands)
    assert install[:5] == [bare.executable, "-m", "pip", "install", "onnxruntime-gpu==1.31.1"]


def test_nothing_is_said_without_facts() -> None:
    assert findings(EnvironmentSnapshot()) == []


@pytest.mark.parametrize(
    ("driver_cuda", "cudart", "python_version", "expected", "major"),
    [
        (None, None, "3.11.9", "1.31.1", 13),
        (12040, None, "3.11.9", "1.26.0", 12),  # the driver cannot run CUDA 13
        (12040, None, "3.10.12", "1.24.1", 12),  # and Python 3.10 caps the version
        (13000, "libcudart.so.12", "3.11.9", "1.26.0", 12),  # the runtime the loader finds
        (11080, None, "3.11.9", "1.18.1", 11),
    ],
)
def test_version_choice(
    driver_cuda: int | None, cudart: str | None, python_version: str, expected: str, major: int
) -> None:
    base = snapshot_of("cpu_1_23_2")
    assert base.python is not None
    driver = _driver(driver_cuda) if driver_cuda else None
    libraries = None
    if cudart:
        copy = LibraryCopy(
            path="/usr/local/cuda/lib64/" + cudart,
            name=cudart,
            version=None,
            place="ldconfig",
            on_loader_path=True,
        )
        libraries = LibraryFacts(
            search_dirs=("/usr/local/cuda/lib64",), inventory=(copy,), reports=(), budget_exhausted=False
        )
    snapshot = dataclasses.replace(
        base,
        driver=driver,
        libraries=libraries,
        python=dataclasses.replace(base.python, version=python_version),
    )
    choice = choose_gpu_version(snapshot)
    assert (choice.version, choice.cuda_major) == (expected, major)
    assert choice.requirement == f"onnxruntime-gpu=={expected}"


def test_checks_are_registered() -> None:
    assert (ort_not_installed, package_conflict, ep_not_in_build) == package.CHECKS[:3]
    assert [check.__name__ for check in package.CHECKS[3:]] == ["native_library", "directml_coreml_package"]


def _with_pythonpath(venv_name: str, extra_venv: str) -> EnvironmentSnapshot:
    env = dict(os.environ, PYTHONPATH=str(site_packages(scenario(extra_venv))))
    python = collect_python_env(_python(venv_name), env)
    return EnvironmentSnapshot(python=python, onnxruntime=collect_onnxruntime(python))


def test_copies_in_two_folders_shadow_each_other_and_are_no_conflict() -> None:
    # PYTHONPATH comes first on sys.path: the GPU package there is the one imported
    gpu_first = _with_pythonpath("cpu_1_23_2", "gpu_1_31_1")
    assert gpu_first.onnxruntime is not None and len(gpu_first.onnxruntime.distributions) == 2
    assert gpu_first.onnxruntime.version == "1.31.1"
    assert findings(gpu_first) == []
    # the CPU package first: it is what the application gets
    cpu_first = _with_pythonpath("gpu_1_31_1", "cpu_1_23_2")
    [finding] = findings(cpu_first)
    assert finding.id == "package.ep_not_in_build"


def test_a_build_for_other_hardware_is_named_as_such() -> None:
    base = snapshot_of("cpu_1_23_2")
    assert base.onnxruntime is not None
    directml = dataclasses.replace(
        base.onnxruntime,
        build_package_name="onnxruntime-directml",
        providers_in_build=("DmlExecutionProvider", "CPUExecutionProvider"),
    )
    [finding] = findings(dataclasses.replace(base, onnxruntime=directml))
    assert (finding.id, finding.cause) == ("package.ep_not_in_build.other_accelerator", "ep_not_in_build")
    assert "DmlExecutionProvider" in finding.detail and "onnxruntime-directml" in finding.detail


def test_an_old_python_gets_the_newest_build_it_can_install() -> None:
    base = snapshot_of("cpu_1_23_2")
    assert base.python is not None
    old = dataclasses.replace(base, python=dataclasses.replace(base.python, version="3.8.18"))
    choice = choose_gpu_version(old)
    assert (choice.version, choice.cuda_major) == ("1.20.2", 12)
    assert "Python 3.8.18" in choice.reason
