"""Mechanisms, not cases: each rule on lines written for it (not the corpus's), and their limits."""

# ruff: noqa: E501

from __future__ import annotations

import pytest
from fallback_doctor.core.readers.logs.diagnose_log import explain_text
from fallback_doctor.core.readers.logs.facts import cudnn_major_of
from fallback_doctor.core.readers.logs.separators import separator
from fallback_doctor.core.readers.logs.signatures import classify_library
from fallback_doctor.core.readers.logs.versions import compute_capability

LOAD_126 = (
    "[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] LoadLibrary failed "
    'with error 126 "" when trying to load "C:\\app\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"'
)
ERROR_35 = "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0"


def ranked(*lines: str) -> list[str]:
    return [candidate.cause for candidate in explain_text(list(lines)).causes]


@pytest.mark.parametrize(
    ("lines", "top"),
    [
        (["Available providers: CPUExecutionProvider"], "ep_not_in_build"),
        (["  • ['AzureExecutionProvider', 'CPUExecutionProvider']", "CUDA not available"], "ep_not_in_build"),
        (
            ["main.py: error: argument --provider: invalid choice: 'gpu' (choose from 'cpu', 'coreml')"],
            "ep_not_in_build",
        ),
        (["RuntimeError: Unknown Provider Type: TensorrtExecutionProvider"], "ep_not_in_build"),
        (
            ["The given version [21] is not supported, only version 1 to 14 is supported in this build."],
            "windows_dll_load_error",
        ),
        (
            [
                "Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, . Fallback to cpu!"
            ],
            "ep_not_in_build",
        ),
        (["RuntimeError: Failed to dlopen libcuda.so.1"], "driver_missing"),
        (
            ["AttributeError: module 'onnxruntime' has no attribute 'get_available_providers'"],
            "package_conflict",
        ),
        (["ModuleNotFoundError: No module named 'tensorrt_libs'"], "tensorrt_missing"),
        (
            ["System.DllNotFoundException: Unable to load DLL 'cudnn64_9.dll' or one of its dependencies"],
            "cudnn_missing",
        ),
        (["CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED"], "out_of_memory"),
        (
            [
                "Failed to load library libonnxruntime_providers_tensorrt.so with error: libnvonnxparser_x.so: cannot open shared object file"
            ],
            "tensorrt_missing",
        ),
    ],
)
def test_a_mechanism_with_no_library_named(lines: list[str], top: str) -> None:
    assert ranked(*lines)[0] == top


def test_a_provider_list_after_a_load_failure_is_the_sessions_not_the_builds() -> None:
    causes = ranked(
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcudart.so.12: cannot open shared object file",
        "['CPUExecutionProvider']",
    )
    assert causes[0] in ("cuda_runtime_missing", "cuda_major_mismatch")
    assert "ep_not_in_build" not in causes


def test_a_list_with_a_gpu_provider_is_not_a_cpu_only_build() -> None:
    assert ranked("['CUDAExecutionProvider', 'CPUExecutionProvider']") == ["unknown"]


def test_error_35_has_three_causes_and_each_says_what_settles_it() -> None:
    diagnosis = explain_text([ERROR_35])
    causes = [candidate.cause for candidate in diagnosis.causes]
    assert causes[:3] == ["driver_too_old", "container_no_device", "driver_missing"]
    for candidate in diagnosis.causes[:3]:
        assert candidate.to_dict()["told_apart_by"] == f"log_told_apart.{candidate.cause}"
        assert "nvidia" in separator(candidate.cause, "en").lower()


def test_a_driver_older_than_the_build_decides_and_a_new_enough_one_turns_away() -> None:
    old = ranked("onnxruntime-gpu 1.19.2", "Driver Version: 470.82.01", ERROR_35)
    assert old[0] == "driver_too_old"
    new = explain_text(["onnxruntime-gpu 1.19.2", "Driver Version: 550.54.14", ERROR_35]).causes
    assert new[0].cause == "container_no_device"
    assert [c.cause for c in new[:3]].count("driver_too_old") == 1


def test_cudnn_of_another_major_beside_error_126_is_a_cudnn_mismatch() -> None:
    assert ranked("onnxruntime version: 1.19.2", "cuDNN version: 8907", LOAD_126)[0] == "cudnn_major_mismatch"
    without_versions = ranked(LOAD_126)
    assert set(without_versions[:4]) == {
        "cudnn_missing",
        "cudnn_major_mismatch",
        "cuda_runtime_missing",
        "cuda_major_mismatch",
    }


def test_a_gpu_newer_than_the_builds_cuda_is_an_architecture_the_build_lacks() -> None:
    causes = ranked("GPU: NVIDIA GeForce RTX 5080", "torch 2.4.0+cu121", ERROR_35)
    assert causes[0] == "unsupported_arch"
    assert ranked("GPU: NVIDIA GeForce RTX 3080", "torch 2.4.0+cu121", ERROR_35)[0] == "driver_too_old"


def test_versions_alone_are_no_failure() -> None:
    assert ranked("onnxruntime 1.19.2", "cuDNN 8.9.7", "Driver Version: 470.82.01") == ["unknown"]


def test_a_cudnn_sub_library_that_fails_without_being_absent_may_be_its_dependency() -> None:
    causes = ranked("Could not load library libcudnn_cnn_infer.so.8")
    assert "driver_missing" in causes[:3]
    wsl = ranked("Could not load library libcudnn_cnn_infer.so.8", "Linux 5.15.153.1-microsoft-standard-WSL2")
    assert wsl[0] == "driver_missing"
    absent = ranked(
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory"
    )
    assert "driver_missing" not in absent


def test_warnings_that_do_not_stop_the_gpu_provider_are_calm() -> None:
    diagnosis = explain_text(
        [
            "[W:onnxruntime:, transformer_memcpy.cc:74 ApplyImpl] 6 Memcpy nodes are added to the graph main_graph for CUDAExecutionProvider.",
            "[W:onnxruntime:, session_state.cc:1166 VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned to the preferred execution providers which may or may not have an negative impact on performance.",
            "TensorRT engine build took 412 s",
            "ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link",
        ]
    )
    assert diagnosis.top.cause == "unknown" or diagnosis.top.confidence < 0.5


def test_an_impossible_allocation_is_not_memory_running_out() -> None:
    assert (
        ranked("Failed to allocate memory for requested buffer of size 4611686018427387904")[0] == "unknown"
    )
    assert ranked("Failed to allocate memory for requested buffer of size 2147483648")[0] == "out_of_memory"


@pytest.mark.parametrize(("text", "major"), [("8907", 8), ("90100", 9), ("8.9.7", 8), ("7605", 7)])
def test_cudnn_versions_as_logs_print_them(text: str, major: int) -> None:
    assert cudnn_major_of(text) == major


def test_a_library_name_whose_first_letters_a_code_page_ate() -> None:
    info = classify_library("ublasLt64_12.dll")
    assert (info.family, info.stack_major) == ("cuda", 12)
    assert classify_library("foo64_12.dll").family is None


@pytest.mark.parametrize(
    ("gpu", "cc"), [("NVIDIA GeForce RTX 4090", "8.9"), ("Tesla T4", "7.5"), ("NVIDIA H100 80GB HBM3", "9.0")]
)
def test_compute_capability_of_gpu_names(gpu: str, cc: str) -> None:
    assert compute_capability(gpu) == cc


def test_the_file_the_loader_could_not_open_is_the_missing_one() -> None:
    causes = ranked(
        "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory"
    )
    assert causes[0] == "cuda_runtime_missing"
    same = ranked(
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory"
    )
    assert same[0].startswith("cudnn")


def test_a_failure_after_the_provider_loaded_still_counts() -> None:
    diagnosis = explain_text(
        [
            "[W:onnxruntime:, session_state.cc:1166 VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned to the preferred execution providers",
            "[E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code returned while running MatMul node. Status Message: CUDA error cudaErrorMemoryAllocation:out of memory",
        ]
    )
    assert diagnosis.top.cause == "out_of_memory" and diagnosis.top.confidence >= 0.5
    engine_failure = ranked(
        "[TensorRT EP] TensorRT engine build failed: Requested amount of GPU memory (4294967296 bytes) could not be allocated"
    )
    assert engine_failure[0] == "out_of_memory"
