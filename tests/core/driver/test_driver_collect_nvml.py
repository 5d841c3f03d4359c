"""The driver collector and the driver checks against real NVML behaviour (fake libnvidia-ml).

This machine has no NVIDIA driver: the "no driver" case is the real one. Every other state
comes from a tiny libnvidia-ml.so.1 compiled here and found through LD_LIBRARY_PATH, as
the real one is, returning the codes a real driver returns.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from fakebuild import finding_ids, run_collectors
from fallback_doctor.core.language.texts import finding_words
from fallback_doctor.core.readers.collect.driver import (
    collect_driver,
    library_version,
    parse_proc_driver_version,
)
from fallback_doctor.core.readers.knowledge.nvml_errors import describe_nvml_error

PROC_570 = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Wed Jan 22 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
)


def _has_real_nvml() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(_has_real_nvml(), reason="this machine has an NVIDIA driver")
def test_no_driver_on_this_machine_is_library_not_found(tmp_path: Path) -> None:
    facts = collect_driver({}, root=str(tmp_path))
    assert facts.nvml_status == "library_not_found"
    assert facts.nvml_error_code == 12
    assert "no NVIDIA driver" in (facts.nvml_error or "")
    assert facts.gpus == ()
    assert facts.proc_driver_version is None


def test_rm_version_mismatch_names_both_versions(fake_nvml, tmp_path: Path) -> None:
    lib_dir = fake_nvml("mismatch", driver_version="580.95.05", FAKE_NVML_INIT_RESULT=18)
    proc = tmp_path / "proc/driver/nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text(PROC_570)
    result = run_collectors({"root": str(tmp_path)}, [lib_dir])
    driver = result["driver"]
    assert driver["nvml_status"] == "lib_rm_version_mismatch"
    assert driver["nvml_error_code"] == 18
    assert driver["kernel_module_version"] == "570.86.15"
    assert driver["nvml_library_path"].endswith("libnvidia-ml.so.580.95.05")
    assert driver["nvml_library_version"] == "580.95.05"
    assert "driver.library_mismatch" in finding_ids(result)
    finding = next(f for f in result["findings"] if f["id"] == "driver.library_mismatch")
    assert finding["cause"] == "nvml_driver_library_mismatch"
    assert "570.86.15" in finding["detail"] and "580.95.05" in finding["detail"]
    assert "sudo reboot" in finding["remediation"]["commands"]
    assert "570.86.15" in finding_words(finding, "ko")["detail"]


def test_working_old_driver_is_read_and_too_old_for_cuda_12(fake_nvml, fake_libcuda, tmp_path: Path) -> None:
    nvml = fake_nvml(
        "r470",
        driver_version="470.57.02",
        FAKE_CUDA_DRIVER_VERSION=11040,
        FAKE_CC_MAJOR=7,
        FAKE_CC_MINOR=5,
        FAKE_GPU_NAME="Tesla T4",
    )
    cuda = fake_libcuda("r470", FAKE_DRIVER_VERSION=11040)
    result = run_collectors(
        {"root": str(tmp_path), "native": [], "cuda_major": 12, "ort_version": "1.23.2"}, [nvml, cuda]
    )
    driver = result["driver"]
    assert driver["nvml_status"] == "ok"
    assert driver["driver_version"] == "470.57.02"
    assert driver["cuda_driver_version"] == 11040
    assert driver["cuda_driver_version_source"] == "nvmlSystemGetCudaDriverVersion_v2"
    assert driver["gpus"] == [
        {
            "index": 0,
            "name": "Tesla T4",
            "compute_capability": [7, 5],
            "memory_total_mib": 24576,
            "uuid": "GPU-00000000-1111-2222-3333-444444444444",
            "error": None,
        }
    ]
    assert result["native"]["cu_driver_version"] == 11040
    ids = finding_ids(result)
    assert ids == ["driver.too_old"]
    finding = result["findings"][0]
    assert finding["cause"] == "driver_too_old"
    assert "525.60.13" in finding["detail"] and "470.57.02" in finding["title"]
    assert "11.4" in finding["detail"]


def test_new_enough_driver_gives_no_driver_finding(fake_nvml, fake_libcuda, tmp_path: Path) -> None:
    nvml = fake_nvml("r580")
    cuda = fake_libcuda("r580", FAKE_DRIVER_VERSION=13000)
    result = run_collectors(
        {"root": str(tmp_path), "native": [], "cuda_major": 13, "ort_version": "1.31.1"}, [nvml, cuda]
    )
    assert result["native"]["cu_init_result"] == 0
    assert result["native"]["cu_device_count"] == 1
    assert result["native"]["cu_devices"] == [["Fake NVIDIA GPU", 8, 6]]
    assert finding_ids(result) == []


@pytest.mark.parametrize(
    ("code", "status", "finding"),
    [
        (9, "driver_not_loaded", "driver.not_loaded"),
        (4, "no_permission", "driver.nvml_no_permission"),
        (15, "gpu_lost", "driver.nvml_failed"),
    ],
)
def test_nvml_init_errors_map_to_meanings(
    fake_nvml, tmp_path: Path, code: int, status: str, finding: str
) -> None:
    nvml = fake_nvml(f"init{code}", FAKE_NVML_INIT_RESULT=code)
    result = run_collectors({"root": str(tmp_path)}, [nvml])
    assert result["driver"]["nvml_status"] == status
    assert result["driver"]["nvml_error_code"] == code
    assert finding in finding_ids(result)


def test_nvml_without_libcuda(fake_nvml, tmp_path: Path) -> None:
    nvml = fake_nvml("nolibcuda", FAKE_NO_LIBCUDA=True)
    result = run_collectors({"root": str(tmp_path), "native": []}, [nvml])
    driver = result["driver"]
    assert driver["nvml_status"] == "ok"
    assert "libcuda" in driver["libcuda_error"]
    assert driver["cuda_driver_version_source"] == "nvmlSystemGetCudaDriverVersion"
    assert finding_ids(result) == ["driver.libcuda_missing"]


def test_no_gpu_reported_by_nvml(fake_nvml, tmp_path: Path) -> None:
    nvml = fake_nvml("nogpu", FAKE_GPU_COUNT=0)
    result = run_collectors({"root": str(tmp_path)}, [nvml])
    assert result["driver"]["gpus"] == []
    assert finding_ids(result) == ["device.no_gpu"]


def test_proc_version_and_library_name_parsers() -> None:
    assert parse_proc_driver_version(PROC_570.splitlines()[0]) == "570.86.15"
    aarch64 = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release Build"
    assert parse_proc_driver_version(aarch64) == "580.65.06"
    assert parse_proc_driver_version("garbage") is None
    assert library_version("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.65.06") == "580.65.06"
    assert library_version("/usr/lib/wsl/lib/libnvidia-ml.so.1") is None
    assert describe_nvml_error(18).status == "lib_rm_version_mismatch"
    assert describe_nvml_error(12345, "weird").status == "error"
