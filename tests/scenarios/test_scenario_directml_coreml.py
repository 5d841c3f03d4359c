"""DirectML and CoreML from the real win_amd64 and macOS wheels' files (neither can run here).

The wheels (onnxruntime-directml 1.24.4 win_amd64, onnxruntime 1.32.0 macosx_14_0_arm64) are
fetched once with ``pip download --no-deps`` into ~/.cache/gfd-wheels; skipped when offline.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks.package import directml_coreml_package
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts, PackageBinaries
from fallback_doctor.core.model.facts.platform import PlatformFacts
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.ort_binaries import (
    coreml_binaries,
    directml_problems,
    macho_facts,
    read_package_binaries,
)
from fallback_doctor.core.readers.logs.signatures import load_signatures, match_text

pytestmark = pytest.mark.scenario

WHEELS = Path.home() / ".cache" / "gfd-wheels"
DIRECTML = ("onnxruntime-directml==1.24.4", "win_amd64", "onnxruntime_directml-1.24.4-*win_amd64.whl")
MACOS = ("onnxruntime==1.32.0", "macosx_14_0_arm64", "onnxruntime-1.32.0-*macosx_14_0_arm64.whl")


def _wheel(spec: tuple[str, str, str]) -> Path:
    found = sorted(WHEELS.glob(spec[2]))
    if not found:
        WHEELS.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", "3.11", "--platform", spec[1], spec[0], "-d", str(WHEELS)]
        if subprocess.run(command, capture_output=True, check=False).returncode != 0:
            pytest.skip(f"{spec[0]} ({spec[1]}) is not cached and could not be downloaded")
        found = sorted(WHEELS.glob(spec[2]))
    return found[0]


def _capi(spec: tuple[str, str, str], target: Path, leave_out: str = "") -> Path:
    with zipfile.ZipFile(_wheel(spec)) as archive:
        for name in archive.namelist():
            if (
                name.startswith("onnxruntime/capi/")
                and not name.endswith(".py")
                and not (leave_out and leave_out in name)
            ):
                archive.extract(name, target)
    return target / "onnxruntime" / "capi"


def _ort(capi: Path, package: str, platform: str = "win32") -> OrtFacts:
    """The package's facts as the collector makes them: its binaries read (collect/ort_binaries.py)."""
    ort = OrtFacts(
        distributions=(),
        package_dir=str(capi.parent),
        version="1.24.4",
        cuda_build_version=None,
        providers_in_build=("CPUExecutionProvider",),
        provider_libraries=(),
        required_cuda_major=None,
        required_cudnn_major=None,
        requirement_source=None,
        build_package_name=package,
    )
    return dataclasses.replace(ort, binaries=read_package_binaries(ort, platform))


def _macos(version: str) -> PlatformFacts:
    return PlatformFacts(system="Darwin", release="23.2.0", machine="arm64", os_name=f"macOS {version}")


def test_directml_wheel_is_complete_and_says_so_when_directml_dll_is_gone(tmp_path):
    assert directml_problems(str(_capi(DIRECTML, tmp_path / "whole"))) == []
    broken = _capi(DIRECTML, tmp_path / "broken", leave_out="DirectML.dll")
    (problem,) = directml_problems(str(broken))
    assert problem.startswith("DirectML.dll is missing from")
    snapshot = EnvironmentSnapshot(onnxruntime=_ort(broken, "onnxruntime-directml"))
    (finding,) = directml_coreml_package(snapshot)
    assert finding.id == "package.directml_incomplete" and "DirectML.dll is missing" in finding.detail


def test_macos_wheel_links_coreml_and_needs_macos_14(tmp_path):
    capi = _capi(MACOS, tmp_path)
    binding = next(capi.glob("onnxruntime_pybind11_state*.so"))
    read = macho_facts(str(binding))
    assert read is not None
    libraries, minimum = read
    assert "/System/Library/Frameworks/CoreML.framework/Versions/A/CoreML" in libraries
    assert minimum == "14.0"
    assert coreml_binaries(str(capi)) == PackageBinaries("coreml", (), binding.name, "14.0")
    ort = _ort(capi, "onnxruntime", platform="darwin")
    assert list(directml_coreml_package(EnvironmentSnapshot(onnxruntime=ort, platform=_macos("14.2")))) == []
    (finding,) = directml_coreml_package(EnvironmentSnapshot(onnxruntime=ort, platform=_macos("13.6")))
    assert finding.id == "package.coreml_unusable"
    assert f"{binding.name} needs macOS 14.0 or newer; this machine runs macOS 13.6" in finding.detail


def test_a_linux_package_is_no_macos_package(tmp_path):
    capi = _capi(DIRECTML, tmp_path)  # a Windows .pyd: not Mach-O either
    (capi / "onnxruntime_pybind11_state.so").write_bytes(b"\x7fELF" + b"\0" * 60)
    for pyd in capi.glob("*.pyd"):
        pyd.unlink()
    (problem,) = coreml_binaries(str(capi)).problems
    assert "is not a macOS (Mach-O 64-bit) binary" in problem


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        (
            "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:Fail] "
            "D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\"
            "CommandQueue.cpp(16)\\onnxruntime.dll!00007FF869EDCFB6: (caller: 00007FF869E4EE3E) "
            "Exception(1) tid(28e8) 887A0005 The GPU device instance has been suspended.",
            "dml.device_removed",
        ),
        (
            "[W:onnxruntime:, coreml_execution_provider.cc:113 GetCapability] "
            "CoreMLExecutionProvider::GetCapability, number of partitions supported by CoreML: 14 "
            "number of nodes in the graph: 226 number of nodes "
            "supported by CoreML: 212",
            "coreml.partial_partition",
        ),
    ],
)
def test_directml_and_coreml_log_lines_from_other_reports(line, signature):
    # better-genshin-impact#1166 (a C# application on DirectML) and onnxruntime#28022 (CoreML, ORT 1.24.4)
    assert signature in [match.signature.id for match in match_text(line, load_signatures())]
