"""A native server's CUDA libraries: NVIDIA's wheels with ``pip --target`` into a folder of its own.

Snapshots are collected from real library layouts (the wheels' own files, hard-linked); the
server has no Python, so no step may name an application interpreter or preload_dlls().
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from checks_layouts import by_id, ld_path, make_site, run, snapshot, wheels
from fallback_doctor.core.judgement.checks import cuda
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.result import EnvironmentStep, ManualStep, RunStep
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot


def _native(snap: EnvironmentSnapshot, root: Path | None) -> EnvironmentSnapshot:
    target = TargetFacts(
        kind="bareun",
        root=str(root) if root else None,
        config_path=None,
        log_paths=(),
        lib_path=str(root / "lib") if root else None,
        requested_provider="cuda",
    )
    return dataclasses.replace(snap, target=target)


def _steps(snap: EnvironmentSnapshot) -> tuple[object, ...]:
    (finding,) = by_id(run(cuda.CHECKS, snap), "cuda.runtime_missing")
    assert finding.remediation is not None
    return finding.remediation.steps


def test_the_wheels_go_into_a_folder_of_the_server_and_onto_its_loader_path(tmp_path: Path) -> None:
    root = tmp_path / "bareun"
    steps = _steps(_native(snapshot(make_site(tmp_path), python=False), root))
    install, environment, restart, system = steps
    assert isinstance(install, RunStep) and install.where == "host"
    folder = str(root / "nvidia-cu13")
    assert install.argv[:7] == ("python3", "-m", "pip", "install", "--upgrade", "--target", folder)
    packages = set(install.argv[7:])
    assert {"nvidia-cublas", "nvidia-curand", "nvidia-cuda-runtime", "nvidia-cudnn-cu13"} <= packages
    assert isinstance(environment, EnvironmentStep) and environment.option == 1
    dirs = environment.variables["LD_LIBRARY_PATH"].split(":")
    assert dirs == [f"{folder}/nvidia/cu13/lib", f"{folder}/nvidia/cudnn/lib"]
    assert isinstance(restart, ManualStep) and restart.text == "Restart the server."
    assert isinstance(system, ManualStep) and system.option == 2 and "cudnn9-cuda-13" in system.text
    assert "preload_dlls" not in repr(steps) and "/app/venv" not in repr(steps)


def test_run_again_it_installs_the_whole_set_not_only_what_is_still_missing(tmp_path: Path) -> None:
    """pip --target skips a folder's existing nvidia/ (no merge): a second install of what is
    still missing alone would be lost. With cudart and cuRAND already loadable from the folder and
    cuBLAS not, the step still names them all, and --upgrade replaces nvidia/ with the whole set."""
    root = tmp_path / "bareun"
    lib = root / "nvidia-cu13" / "nvidia" / "cu13" / "lib"
    for key in ("cudart13", "curand10"):
        wheels.link_tree(wheels.cu13_lib(key), lib)
    snap = _native(snapshot(make_site(tmp_path), env=ld_path(lib), python=False), root)
    (finding,) = by_id(run(cuda.CHECKS, snap), "cuda.runtime_missing")
    assert "libcublas.so.13" in finding.title and "libcudart.so.13" not in finding.title  # cudart loads
    assert finding.remediation is not None
    install = finding.remediation.steps[0]
    assert isinstance(install, RunStep) and "--upgrade" in install.argv
    assert {"nvidia-cublas", "nvidia-curand", "nvidia-cuda-runtime", "nvidia-cudnn-cu13"} <= set(install.argv)


def test_a_native_target_without_a_folder_gets_no_install_step(tmp_path: Path) -> None:
    snap = _native(snapshot(make_site(tmp_path), python=False), None)
    assert not [step for step in _steps(snap) if isinstance(step, RunStep)]
