"""The native child probe: real loader errors, fake driver results, crashes, hangs, Python 3.8."""

from __future__ import annotations

import ctypes
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import fakebuild
import pytest
from fakebuild import finding_ids, run_collectors
from fallback_doctor.core.readers.collect.native import child_script, collect_native, parse_child_output
from fallback_doctor.core.readers.probes.runner import ChildOutcome
from hypothesis import given, settings
from hypothesis import strategies as st

PYTHON38 = "/root/.pyenv/versions/3.8.18/bin/python3.8"
CUDNN9_PARTS = [
    f"libcudnn_{part}.so.9"
    for part in ("graph", "ops", "cnn", "adv", "engines_precompiled", "engines_runtime_compiled", "heuristic")
]


def _env(*dirs: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CUDA_", "NVIDIA_"))}
    env["LD_LIBRARY_PATH"] = os.pathsep.join(str(d) for d in dirs)
    return env


def _has_real_libcuda() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def fake_cudnn_dirs(tmp_path_factory: pytest.TempPathFactory, build_fake) -> dict[str, Path]:
    """cuDNN 9 look-alikes: complete, without its sub-libraries, and one that aborts on load."""
    build_fake("gcc-check", "fake_library.c", "libcheck.so")  # skips when gcc is missing
    complete = tmp_path_factory.mktemp("cudnn-complete")
    fakebuild.compile_library(
        "fake_library.c",
        complete,
        "libcudnn.so.9.1.0",
        {"FAKE_CUDNN_VERSION": 90100, "FAKE_CUDNN_CUDART": 12020},
        links=("libcudnn.so.9",),
    )
    fakebuild.empty_libraries(complete, CUDNN9_PARTS)
    shim_only = tmp_path_factory.mktemp("cudnn-shim-only")
    fakebuild.compile_library("fake_library.c", shim_only, "libcudnn.so.9", {"FAKE_CUDNN_VERSION": 90100})
    aborting = tmp_path_factory.mktemp("cudnn-abort")
    fakebuild.compile_library(
        "fake_library.c", aborting, "libcudnn.so.9", {"FAKE_ABORT_IN_CONSTRUCTOR": True}
    )
    hanging = tmp_path_factory.mktemp("hang")
    fakebuild.compile_library("fake_library.c", hanging, "libhang.so", {"FAKE_HANG_IN_CONSTRUCTOR": True})
    cudart = tmp_path_factory.mktemp("cudart12")
    fakebuild.compile_library("fake_library.c", cudart, "libcudart.so.12", {"FAKE_CUDART_VERSION": 12090})
    cudart_old_driver = tmp_path_factory.mktemp("cudart-insufficient")
    fakebuild.compile_library(
        "fake_library.c",
        cudart_old_driver,
        "libcudart.so.12",
        {"FAKE_CUDART_VERSION": 12090, "FAKE_CUDART_RC": 35, "FAKE_CUDART_DRIVER": 11040},
    )
    return {
        "complete": complete,
        "shim_only": shim_only,
        "abort": aborting,
        "hang": hanging,
        "cudart": cudart,
        "cudart_old_driver": cudart_old_driver,
    }


@pytest.mark.skipif(_has_real_libcuda(), reason="this machine has an NVIDIA driver")
def test_real_loader_error_without_a_driver() -> None:
    facts = collect_native(["libdoes-not-exist.so.7"], _env())
    assert facts.ok, facts.outcome
    assert facts.libcuda is not None and not facts.libcuda.loaded
    assert "libcuda.so.1: cannot open shared object file" in (facts.libcuda.error or "")
    assert facts.cu_init_result is None
    (attempt,) = facts.attempts
    assert not attempt.loaded and "libdoes-not-exist.so.7" in (attempt.error or "")


def test_fake_driver_no_device(fake_libcuda) -> None:
    cuda = fake_libcuda("nodevice", FAKE_CUINIT_RESULT=100)
    facts = collect_native([], _env(cuda))
    assert facts.ok
    assert facts.libcuda is not None and facts.libcuda.loaded
    assert facts.libcuda.path == str(cuda / "libcuda.so.1")
    assert facts.cu_driver_version == 12020
    assert facts.cu_init_result == 100
    assert facts.cu_init_error_name == "CUDA_ERROR_NO_DEVICE"
    assert facts.cu_device_count is None


def test_no_device_becomes_no_gpu_finding(fake_nvml, fake_libcuda, tmp_path: Path) -> None:
    nvml = fake_nvml("one-gpu")
    cuda = fake_libcuda("nodevice", FAKE_CUINIT_RESULT=100)
    result = run_collectors({"root": str(tmp_path), "native": []}, [nvml, cuda])
    assert finding_ids(result) == ["device.no_gpu"]


def test_cuda_visible_devices_minus_one(fake_nvml, fake_libcuda, tmp_path: Path) -> None:
    nvml = fake_nvml("one-gpu")
    cuda = fake_libcuda("nodevice", FAKE_CUINIT_RESULT=100)  # what the real driver says under -1
    result = run_collectors(
        {"root": str(tmp_path), "native": []}, [nvml, cuda], {"CUDA_VISIBLE_DEVICES": "-1"}
    )
    assert result["device"]["cuda_visible_devices"] == "-1"
    assert finding_ids(result) == ["device.cuda_visible_devices_hides_all"]
    finding = result["findings"][0]
    assert finding["cause"] == "no_gpu_visible"
    assert any(e["label"] == "cuInit(0)" and e["value"].startswith("100") for e in finding["evidence"])


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (35, ["driver.too_old"]),
        (34, ["driver.stub_library"]),
        (803, ["driver.library_mismatch"]),
        (804, ["driver.forward_compat_unsupported"]),
        (999, ["driver.cuinit_failed"]),
    ],
)
def test_cuinit_codes_become_findings(fake_libcuda, tmp_path: Path, code: int, expected: list[str]) -> None:
    cuda = fake_libcuda(f"init{code}", FAKE_CUINIT_RESULT=code)
    result = run_collectors({"root": str(tmp_path), "native": []}, [cuda])
    assert result["native"]["cu_init_result"] == code
    assert finding_ids(result) == expected


def test_cudart_insufficient_driver(fake_libcuda, fake_cudnn_dirs: dict[str, Path], tmp_path: Path) -> None:
    cuda = fake_libcuda("r470cuda", FAKE_DRIVER_VERSION=11040)
    result = run_collectors(
        {"root": str(tmp_path), "native": ["libcudart.so.12"]}, [cuda, fake_cudnn_dirs["cudart_old_driver"]]
    )
    (attempt,) = result["native"]["attempts"]
    assert attempt["kind"] == "cudart" and attempt["version_rc"] == 35 and attempt["driver_version"] == 11040
    assert finding_ids(result) == ["driver.too_old"]


def test_cudart_and_complete_cudnn_report_versions(fake_cudnn_dirs: dict[str, Path]) -> None:
    facts = collect_native(
        ["libcudnn.so.9", "libcudart.so.12"], _env(fake_cudnn_dirs["cudart"], fake_cudnn_dirs["complete"])
    )
    assert facts.ok, facts.outcome
    cudart, cudnn = facts.attempts  # cuDNN is probed last whatever the order asked
    assert (cudart.kind, cudart.version, cudart.version_rc, cudart.driver_version) == (
        "cudart",
        12090,
        0,
        12090,
    )
    assert cudart.path == str(fake_cudnn_dirs["cudart"] / "libcudart.so.12")
    assert (cudnn.kind, cudnn.version, cudnn.cudart_version) == ("cudnn", 90100, 12020)
    assert cudnn.missing_companions == () and cudnn.skipped is None


def test_cudnn_without_sub_libraries_is_not_called(fake_cudnn_dirs: dict[str, Path]) -> None:
    facts = collect_native(["libcudnn.so.9"], _env(fake_cudnn_dirs["shim_only"]))
    assert facts.ok
    (cudnn,) = facts.attempts
    assert cudnn.loaded and cudnn.version is None
    assert "libcudnn_graph.so.9" in cudnn.missing_companions
    assert cudnn.skipped is not None and "abort" in cudnn.skipped


def test_crash_while_loading_keeps_partial_results(fake_cudnn_dirs: dict[str, Path]) -> None:
    facts = collect_native(
        ["libcudnn.so.9", "libcudart.so.12"], _env(fake_cudnn_dirs["abort"], fake_cudnn_dirs["cudart"])
    )
    assert not facts.ok
    assert facts.outcome == "the probe crashed with SIGABRT while loading libcudnn.so.9"
    assert facts.crashed_step == "loading libcudnn.so.9"
    assert [a.name for a in facts.attempts] == ["libcudart.so.12"]
    assert facts.attempts[0].version == 12090
    assert facts.libcuda is not None  # the driver step before it survived too


def test_timeout_is_a_sentence(fake_cudnn_dirs: dict[str, Path]) -> None:
    facts = collect_native([str(fake_cudnn_dirs["hang"] / "libhang.so")], _env(), timeout_s=1.5)
    assert facts.timed_out and not facts.ok
    assert re.match(r"the probe did not finish within \d+ s while loading ", facts.outcome)
    assert facts.outcome.endswith("libhang.so, and was stopped")


def test_hung_cuinit_is_a_driver_finding(fake_libcuda, tmp_path: Path) -> None:
    cuda = fake_libcuda("hang", FAKE_HANG_IN_CUINIT=True)
    result = run_collectors({"root": str(tmp_path), "native": [], "native_timeout": 1.5}, [cuda])
    assert result["native"]["crashed_step"] == "calling cuInit(0) in libcuda.so.1"
    assert result["native"]["cu_driver_version"] == 12020
    assert finding_ids(result) == ["driver.probe_hung"]


@pytest.mark.skipif(not os.path.exists(PYTHON38), reason="Python 3.8 is not installed here")
def test_child_runs_on_python_38(fake_libcuda, fake_cudnn_dirs: dict[str, Path]) -> None:
    cuda = fake_libcuda("nodevice", FAKE_CUINIT_RESULT=100)
    facts = collect_native(
        ["libcudart.so.12", "libcudnn.so.9"],
        _env(cuda, fake_cudnn_dirs["cudart"], fake_cudnn_dirs["complete"]),
        python=PYTHON38,
    )
    assert facts.ok, facts.outcome + facts.stderr
    assert facts.python == PYTHON38
    assert facts.cu_init_result == 100
    assert [a.version for a in facts.attempts] == [12090, 90100]


def test_child_script_is_python38_syntax() -> None:
    if not os.path.exists(PYTHON38):
        pytest.skip("Python 3.8 is not installed here")
    subprocess.run([PYTHON38, "-m", "py_compile", str(child_script())], check=True)


def test_garbage_and_missing_interpreters(tmp_path: Path) -> None:
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho 'this is not python'\n")
    fake_python.chmod(fake_python.stat().st_mode | stat.S_IEXEC)
    facts = collect_native([], _env(), python=str(fake_python))
    assert facts.outcome.startswith("the probe's output could not be read while")
    assert "this is not python" in facts.outcome
    missing = collect_native([], _env(), python=str(tmp_path / "nope"))
    assert missing.outcome.startswith("the probe could not be started")


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(), st.one_of(st.none(), st.integers(-20, 300)), st.booleans())
def test_parser_never_raises(stdout: str, stderr: str, returncode: int | None, timed_out: bool) -> None:
    outcome = ChildOutcome(("python",), returncode, stdout, stderr, timed_out, 0.1)
    facts = parse_child_output(outcome)
    assert isinstance(facts.outcome, str) and facts.outcome


def test_parser_takes_json_lines_among_noise() -> None:
    stdout = (
        'noise from a constructor\n{"event": "hello"}\n{"event": "begin", "step": "loading x"}\n'
        '{"event": "attempt", "attempt": {"name": "x", "loaded": false, "error": "nope"}}\n'
        '{"event": "done"}\n'
    )
    facts = parse_child_output(ChildOutcome(("p",), 0, stdout, "", False, 0.1))
    assert facts.ok and facts.attempts[0].error == "nope"


def test_child_rejects_a_bad_request() -> None:
    completed = subprocess.run(
        [sys.executable, str(child_script())], input="not json", capture_output=True, text=True, check=False
    )
    assert completed.returncode == 2 and '"error"' in completed.stdout
