"""ONNX Runtime facts read from real installed wheels, checked against ONNX Runtime itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import pytest
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.python_env import Distribution, PythonEnvFacts
from fallback_doctor.core.readers.collect.onnxruntime import (
    _binding,
    collect_onnxruntime,
    is_ort_distribution,
)
from fallback_doctor.core.readers.collect.ort_binaries import has_azure_provider
from fallback_doctor.core.readers.collect.python_env import collect_python_env
from hypothesis import given, settings
from hypothesis import strategies as st
from python_env_venvs import WHEELS, files_missing, scenario, site_packages, venv_python, windows_site

_TRUTH = """
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import onnxruntime as o
print(json.dumps({"file": o.__file__, "version": o.__version__,
                  "providers": o.get_available_providers(),
                  "cuda_version": getattr(o, "cuda_version", None)}))
"""


@cache
def ort_itself(site: str) -> dict[str, object]:
    """What onnxruntime says about itself when imported from ``site`` (numpy from our venv)."""
    out = subprocess.run(
        [sys.executable, "-c", _TRUTH, site], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    value = json.loads(out.strip().splitlines()[-1])
    assert isinstance(value, dict)
    return value


@cache
def facts_of(name: str) -> tuple[PythonEnvFacts, OrtFacts]:
    venv = scenario(name)
    python = collect_python_env(str(venv_python(venv)), dict(os.environ))
    return python, collect_onnxruntime(python)


def _compiled_providers(truth: dict[str, object]) -> set[str]:
    providers = truth["providers"]
    assert isinstance(providers, list)
    return set(providers)  # AzureExecutionProvider included: read from the binding's RTTI names


@pytest.mark.parametrize("name", ["cpu_1_23_2", "gpu_1_23_2", "gpu_1_31_1", "gpu_then_cpu", "cpu_then_gpu"])
def test_facts_agree_with_onnxruntime_itself(name: str) -> None:
    _, ort = facts_of(name)
    truth = ort_itself(str(site_packages(scenario(name))))
    assert ort.package_dir == os.path.dirname(str(truth["file"]))
    assert ort.version == truth["version"]
    assert set(ort.providers_in_build) == _compiled_providers(truth)
    assert ort.providers_in_build[-1] == "CPUExecutionProvider"
    assert (ort.cuda_build_version or "") == (truth["cuda_version"] or "")


def test_cpu_only_package() -> None:
    _, ort = facts_of("cpu_1_23_2")
    assert [(d.name, d.version) for d in ort.distributions] == [("onnxruntime", "1.23.2")]
    assert ort.build_package_name == "onnxruntime"
    assert ort.version_source == "build_and_package_info.py"
    assert ort.providers_in_build == ("AzureExecutionProvider", "CPUExecutionProvider")
    assert ort.provider_libraries == ()
    assert ort.shared_library is not None and ort.shared_library.endswith(
        "libonnxruntime_providers_shared.so"
    )
    assert ort.cuda_build_version is None
    assert (ort.required_cuda_major, ort.required_cudnn_major, ort.requirement_source) == (None, None, None)
    assert not ort.has_cuda_provider


def test_gpu_1_23_2_needs_cuda_12_and_cudnn_9_from_its_own_files() -> None:
    _, ort = facts_of("gpu_1_23_2")
    assert ort.build_package_name == "onnxruntime-gpu"
    assert ort.cuda_build_version == "12.2"
    assert ort.providers_in_build == (
        "TensorrtExecutionProvider",
        "CUDAExecutionProvider",
        "CPUExecutionProvider",
    )
    cuda = next(lib for lib in ort.provider_libraries if lib.provider == "CUDAExecutionProvider")
    assert cuda.path.endswith("onnxruntime/capi/libonnxruntime_providers_cuda.so")
    assert "libcudart.so.12" in cuda.needed and "libcudnn.so.9" in cuda.needed
    assert (ort.required_cuda_major, ort.required_cudnn_major, ort.required_tensorrt_major) == (12, 9, 10)
    assert ort.requirement_source is not None
    assert "build_and_package_info.py cuda_version '12.2'" in ort.requirement_source
    assert "libonnxruntime_providers_cuda.so needs libcudnn.so.9" in ort.requirement_source
    assert ort.cudnn_loaded_lazily is False
    assert ort.notes == ()


def test_gpu_1_31_1_loads_cudnn_lazily_so_the_matrix_names_its_major() -> None:
    _, ort = facts_of("gpu_1_31_1")
    assert ort.version == "1.31.1"
    assert ort.cuda_build_version == "13.0"
    assert (ort.required_cuda_major, ort.required_cudnn_major) == (13, 9)
    assert ort.cudnn_loaded_lazily is True
    assert ort.requirement_source is not None
    assert "cuDNN 9: bundled matrix, ONNX Runtime 1.31" in ort.requirement_source


def test_cpu_installed_over_gpu_leaves_a_cpu_build_with_leftover_libraries() -> None:
    _, ort = facts_of("gpu_then_cpu")
    assert sorted(d.name for d in ort.distributions) == ["onnxruntime", "onnxruntime-gpu"]
    assert ort.build_package_name == "onnxruntime"
    # onnxruntime itself agrees (see above): the CPU wheel's binding, with its Azure provider
    assert ort.providers_in_build == ("AzureExecutionProvider", "CPUExecutionProvider")
    assert ort.provider_libraries == ()
    assert {lib.provider for lib in ort.leftover_libraries} == {
        "CUDAExecutionProvider",
        "TensorrtExecutionProvider",
    }
    assert any("left over" in note for note in ort.notes)
    assert ort.owning_distribution is not None and ort.owning_distribution.name == "onnxruntime"


def test_gpu_installed_over_cpu_is_a_gpu_build() -> None:
    _, ort = facts_of("cpu_then_gpu")
    assert len(ort.distributions) == 2
    assert ort.build_package_name == "onnxruntime-gpu"
    assert ort.has_cuda_provider
    assert ort.required_cuda_major == 12


def test_uninstalling_one_of_two_leaves_no_importable_package() -> None:
    venv = files_missing()
    python = collect_python_env(str(venv_python(venv)), dict(os.environ))
    ort = collect_onnxruntime(python)
    assert [d.name for d in ort.distributions] == ["onnxruntime-gpu"]  # pip still lists it
    assert ort.package_dir is None
    assert ort.version is None and ort.providers_in_build == ()
    assert any("no __init__.py" in note for note in ort.notes)


def test_no_onnxruntime_at_all(tmp_path: Path) -> None:
    python = PythonEnvFacts(
        "/p/python", "3.11.0", "/p", "linux", "x86_64", (str(tmp_path),), (), sys_path=(str(tmp_path),)
    )
    ort = collect_onnxruntime(python)
    assert ort.distributions == () and ort.package_dir is None and ort.notes == ()


def test_the_windows_wheel_layout() -> None:
    site = windows_site((Path.home() / ".cache" / "gpu-fallback-doctor" / "win", WHEELS))
    if site is None:
        pytest.skip("the win_amd64 onnxruntime-gpu 1.31.1 wheel is not on this machine")
    info = site / "onnxruntime_gpu-1.31.1.dist-info"
    dist = Distribution("onnxruntime-gpu", "1.31.1", str(site), str(info))
    python = PythonEnvFacts(
        "C:/app/python.exe",
        "3.11.9",
        "C:/app",
        "win32",
        "AMD64",
        (str(site),),
        (dist,),
        sys_path=(str(site),),
    )
    ort = collect_onnxruntime(python)
    assert ort.providers_in_build == (  # no Azure: the GPU .pyd has no AzureProviderFactory
        "TensorrtExecutionProvider",
        "CUDAExecutionProvider",
        "CPUExecutionProvider",
    )
    assert ort.shared_library is not None and ort.shared_library.endswith("onnxruntime_providers_shared.dll")
    assert (ort.required_cuda_major, ort.required_cudnn_major, ort.required_tensorrt_major) == (13, 9, 10)
    assert (
        ort.requirement_source is not None and "version_info.py cudnn_version '9'" in ort.requirement_source
    )
    trt = next(lib for lib in ort.provider_libraries if lib.provider == "TensorrtExecutionProvider")
    assert "nvinfer_10.dll" in trt.needed and "cudnn64_9.dll" in trt.needed
    cuda = next(lib for lib in ort.provider_libraries if lib.provider == "CUDAExecutionProvider")
    assert cuda.needed == ()  # 200 MB not read: build info and version_info.py already say it all


def _dist(tmp_path: Path, name: str, record: str | None) -> Distribution:
    folder = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
    folder.mkdir()
    if record is not None:
        (folder / "RECORD").write_text(record)
    return Distribution(name, "1.0", str(tmp_path), str(folder))


def test_which_distributions_are_onnx_runtime(tmp_path: Path) -> None:
    ort_record = "onnxruntime/__init__.py,sha256=x,1\nonnxruntime_gpu-1.0.dist-info/RECORD,,\n"
    assert is_ort_distribution(_dist(tmp_path, "onnxruntime-gpu", ort_record))
    assert is_ort_distribution(_dist(tmp_path, "ort-nightly-gpu", ort_record))
    assert not is_ort_distribution(
        _dist(tmp_path, "onnxruntime-extensions", "onnxruntime_extensions/__init__.py,sha256=x,1\n")
    )
    assert not is_ort_distribution(_dist(tmp_path, "onnxruntime-genai-cuda", None))  # by name
    assert is_ort_distribution(_dist(tmp_path, "onnxruntime-directml", None))
    assert not is_ort_distribution(Distribution("onnx", "1.17", str(tmp_path)))


def _binding_of(capi: Path) -> str:
    found = _binding(str(capi))
    assert found is not None, capi
    return found


@pytest.mark.parametrize(
    ("name", "azure"), [("cpu_1_23_2", True), ("gpu_1_23_2", False), ("gpu_1_31_1", False)]
)
def test_azure_provider_is_read_from_the_binding_in_milliseconds(name: str, azure: bool) -> None:
    binding = _binding_of(site_packages(scenario(name)) / "onnxruntime" / "capi")
    has_azure_provider(binding)  # warm the page cache: what is timed is our reading, not the disk
    start = time.perf_counter()
    assert has_azure_provider(binding) is azure
    assert time.perf_counter() - start < 0.05


def test_azure_provider_in_the_windows_cpu_wheel_not_in_the_gpu_wheel() -> None:
    win = Path.home() / ".cache" / "gpu-fallback-doctor" / "win"
    cpu = win / "onnxruntime-1.23.2-cp311-cp311-win_amd64" / "onnxruntime" / "capi"
    gpu = win / "onnxruntime_gpu-1.31.1-cp311-cp311-win_amd64" / "onnxruntime" / "capi"
    if not (cpu.is_dir() and gpu.is_dir()):
        pytest.skip("the win_amd64 onnxruntime 1.23.2 / onnxruntime-gpu 1.31.1 wheels are not unpacked here")
    assert has_azure_provider(_binding_of(cpu)) is True  # .?AVAzureProviderFactory@onnxruntime@@ in .data
    assert has_azure_provider(_binding_of(gpu)) is False


def test_azure_marker_in_sections_and_in_plain_files(tmp_path: Path) -> None:
    plain = tmp_path / "onnxruntime_pybind11_state.so"
    plain.write_bytes(b"x" * (5 << 20) + b"N11onnxruntime20AzureProviderFactoryE" + b"y" * 100)
    assert has_azure_provider(str(plain))  # not ELF or PE: the whole file, across chunk borders
    plain.write_bytes(b"x" * ((4 << 20) - 10) + b"AzureProviderFactory")
    assert has_azure_provider(str(plain))
    plain.write_bytes(b"AzureExecutionProvider\0CPUExecutionProvider")  # the name table of any build
    assert not has_azure_provider(str(plain))
    assert not has_azure_provider(str(tmp_path / "missing.so")) and not has_azure_provider(None)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_azure_reader_survives_garbage_headers(data: bytes) -> None:
    for head in (b"\x7fELF", b"MZ", b""):
        with tempfile.NamedTemporaryFile(suffix=".so") as handle:
            handle.write(head + data)
            handle.flush()
            assert has_azure_provider(handle.name) in (True, False)
