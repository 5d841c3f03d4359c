"""What ONNX Runtime itself does on each broken stack (recorded in docs/scenarios.md).

These pin the behaviour the diagnosis must agree with. When a new ONNX Runtime changes it, these
fail first, and docs/scenarios.md and the diagnosis tests need a look.
"""

from __future__ import annotations

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario

CPU_ONLY = [runs.CPU]


@pytest.mark.parametrize("scenario_id", ["s1_cpu_only", "s2_conflict"])
def test_cpu_package_has_no_cuda_provider_and_warns_only_in_python(ort, scenario_id):
    run = ort(scenario_id)
    assert runs.CUDA not in run.available
    assert run.available[-1] == runs.CPU
    assert run.session_providers == CPU_ONLY
    assert run.result["output"] == [[2.0, 2.0, 2.0, 2.0]]
    # The only trace: a Python UserWarning, not an ONNX Runtime log line.
    assert "Specified provider 'CUDAExecutionProvider' is not in available provider names" in (run.output)
    assert "Failed to load library" not in run.output


def test_conflict_leaves_both_distributions_and_the_cpu_build_wins(stack, ort):
    st = stack("gpu-and-cpu")
    site = stacks.site_packages(st)
    dists = sorted(p.name for p in site.glob("onnxruntime*.dist-info"))
    assert dists == ["onnxruntime-1.23.2.dist-info", "onnxruntime_gpu-1.23.2.dist-info"]
    # The GPU package's provider libraries stay on disk (the CPU wheel does not have them),
    # yet the CPU package's Python binding, installed last, has no CUDA provider compiled in.
    assert stacks.provider_lib(st, "cuda").exists()
    assert ort("s2_conflict").available == ["AzureExecutionProvider", runs.CPU]


def test_conflict_the_other_way_round_the_gpu_build_wins(stack, ort):
    # Installed the other way round, the GPU wheel's binding is in effect: the conflict is
    # latent (uninstalling "onnxruntime" later deletes files onnxruntime-gpu needs), and
    # ONNX Runtime goes on to fail on the CUDA libraries like any GPU build.
    run = ort("s2b_conflict_gpu_last")
    assert run.available == [runs.TRT, runs.CUDA, runs.CPU]
    assert run.first_missing_library() == "libcublasLt.so.12"
    assert run.session_providers == CPU_ONLY


def test_no_cuda_library_names_only_the_first_missing_one(stack, ort):
    run = ort("s3_no_cuda")
    assert run.result["version"] == "1.31.1"
    assert runs.CUDA in run.available  # compiled in: enumeration proves nothing
    assert run.session_providers == CPU_ONLY
    assert run.first_missing_library() == "libcublasLt.so.13"
    assert "Require cuDNN 9.* and CUDA 13.*" in run.output
    # The loader misses several libraries; ONNX Runtime names one. (libcudart.so.13 is missing
    # too unless the machine has a CUDA 13 toolkit in its ldconfig cache, as this one has:
    # /usr/local/cuda-13.0/lib holds cudart, cupti and nvvm but no cuBLAS or cuRAND.)
    missing = set(stacks.ldd_not_found(stacks.provider_lib(stack("gpu13-bare"))))
    assert {"libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcuda.so.1"} <= missing
    assert missing <= {
        "libcublasLt.so.13",
        "libcublas.so.13",
        "libcurand.so.10",
        "libcudart.so.13",
        "libcuda.so.1",
    }
    for name in missing:
        if name != "libcublasLt.so.13":
            assert name not in run.output


def test_wheels_not_on_path_look_exactly_like_no_wheels(ort):
    assert ort("s4_wheels_not_on_path").first_missing_library() == "libcublasLt.so.13"
    assert ort("s4_wheels_not_on_path").session_providers == CPU_ONLY


def test_preload_dlls_finds_the_wheels_and_then_hits_the_driver(ort):
    run = ort("s4_wheels_not_on_path", preload=True)
    assert run.first_missing_library() == "libcuda.so.1"
    assert run.session_providers == CPU_ONLY


def test_no_cudnn_is_not_what_onnxruntime_1_31_blames(ort):
    # cuDNN is loaded lazily since 1.28 (not in DT_NEEDED): with the CUDA libraries on the
    # path the provider fails on the driver, and nothing mentions cuDNN except the generic
    # "Require cuDNN 9.*" advice.
    run = ort("s5_no_cudnn")
    assert run.first_missing_library() == "libcuda.so.1"
    assert "libcudnn" not in run.output
    assert run.session_providers == CPU_ONLY


def test_cudnn_wheel_off_the_path_is_invisible_to_onnxruntime_1_31(ort):
    run = ort("s5b_cudnn_not_on_path")
    assert run.first_missing_library() == "libcuda.so.1"
    assert "libcudnn" not in run.output


def test_cuda12_build_with_cuda13_libraries_names_a_cuda12_soname(stack, ort):
    run = ort("s6_cuda12_build_cuda13_libs")
    assert run.result["version"] == "1.23.2"
    assert run.first_missing_library() == "libcublasLt.so.12"
    assert "Require cuDNN 9.* and CUDA 12.*" in run.output
    assert run.session_providers == CPU_ONLY
    # libcurand.so.10 has the same soname in CUDA 12 and 13: the CUDA 13 copy satisfies the
    # CUDA 12 build's DT_NEEDED, so the loader reports everything else but not curand.
    sc = runs.SCENARIOS["s6_cuda12_build_cuda13_libs"]
    missing = stacks.ldd_not_found(stacks.provider_lib(stack(sc.stack)), sc.env())
    assert set(missing) == {
        "libcublasLt.so.12",
        "libcublas.so.12",
        "libcufft.so.11",
        "libcudart.so.12",
        "libcudnn.so.9",
    }


def test_tensorrt_provider_fails_on_libnvinfer_once_cuda_is_there(ort):
    run = ort("s8_tensorrt", providers=(runs.TRT, runs.CPU))
    assert "libnvinfer.so.10: cannot open shared object file" in run.output
    assert "Please install TensorRT libraries" in run.output
    assert run.session_providers == CPU_ONLY


def test_tensorrt_provider_without_cuda_blames_cublas_not_tensorrt(ort):
    run = ort("s3_no_cuda", providers=(runs.TRT, runs.CPU))
    assert run.first_missing_library() == "libcublas.so.13"
    assert "libnvinfer" not in run.output
    assert "Please install TensorRT libraries" in run.output


def test_complete_cuda13_stack_stops_at_libcuda(ort):
    run = ort("s8_tensorrt")
    assert run.first_missing_library() == "libcuda.so.1"
    assert run.session_providers == CPU_ONLY


def test_cuda12_build_gets_further_and_reports_insufficient_driver(ort):
    # 1.23.2's provider does not link libcuda.so.1: it loads, and the CUDA runtime itself then
    # fails cudaSetDevice with error 35, which says "insufficient driver" although there is none.
    run = ort("s9_cuda12_full_stack")
    assert run.first_missing_library() is None
    assert "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version" in (run.output)
    assert "Falling back to ['CPUExecutionProvider'] and retrying." in run.output
    assert run.session_providers == CPU_ONLY
