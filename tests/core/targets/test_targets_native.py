"""The generic native target, on real ONNX Runtime libraries in plain folders.

- onnxruntime-node 1.23.2's ``libonnxruntime.so.1`` (npm; a CPU build): in its own npm folder it is
  recognised as a Node application, copied to a plain folder as a C/C++/Go one; its remedy is in
  that application's terms.
- the onnxruntime-gpu 1.31.1 wheel's ``capi/libonnxruntime.so.1.31.1`` with its provider libraries,
  linked into a plain folder: the providers' needs come from their DT_NEEDED, and the test inference
  drives the library through the C API exactly like Bareun's libPath.
- a running process that loaded the library: its /proc/PID/maps gives the folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bareun_layout import cpu_library, gpu_capi, place
from fallback_doctor.core.judgement.checks.package import native_library
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.inference.result import Verdict
from fallback_doctor.core.readers.inference.run import plan_inference, run_inference
from fallback_doctor.core.readers.knowledge.native_apps import app_named
from fallback_doctor.core.readers.targets.libpath import lib_path_ort_facts
from fallback_doctor.core.readers.targets.profile import TargetNotFound
from fallback_doctor.core.readers.targets.resolve import resolve_target
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec

NATIVE = TargetKind.NATIVE
GPU_FILES = (
    "libonnxruntime.so.1.31.1",
    "libonnxruntime_providers_shared.so",
    "libonnxruntime_providers_cuda.so",
    "libonnxruntime_providers_tensorrt.so",
)


def _plain_cpu(tmp_path: Path) -> Path:
    folder = tmp_path / "app" / "lib"
    place(cpu_library(), folder / "libonnxruntime.so.1")
    return folder


def _plain_gpu(tmp_path: Path) -> Path:
    folder = tmp_path / "server" / "lib"
    capi = gpu_capi()
    for name in GPU_FILES:
        place(capi / name, folder / name)
    return folder


def _findings(target):  # the native check on a snapshot holding only the target
    snapshot = EnvironmentSnapshot(target=target)
    return list(native_library(snapshot))


def test_node_library_in_its_npm_folder_is_a_node_app_with_the_npm_remedy():
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(cpu_library().parent)), {})
    assert (target.kind, target.app, target.root_source) == ("native", "node", "--lib-dir")
    assert (target.lib_ort.version, target.lib_ort.version_source) == ("1.23.2", "ELF version definition")
    (finding,) = _findings(target)
    assert finding.id == "native.cpu_only_library"
    npm = "npm install onnxruntime-node@1.23.2 --onnxruntime-node-install=cuda12"
    assert finding.remediation.commands[0] == npm
    assert "CUDA 12" in finding.detail


def test_the_same_library_in_a_plain_folder_is_a_c_app_with_the_release_archive(tmp_path):
    folder = _plain_cpu(tmp_path)
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(folder)), {})
    assert target.app == "c"
    (finding,) = _findings(target)
    assert "onnxruntime-linux-x64-gpu-1.23.2.tgz" in finding.remediation.commands[0]
    # the check runs as written: the folder itself, no placeholder (issue 27)
    assert f'`ls "{folder}" | grep onnxruntime_providers_cuda`' in finding.remediation.verify
    assert "DIR" not in finding.remediation.verify


def test_ort_dylib_path_names_the_folder_of_a_rust_app(tmp_path):
    folder = _plain_cpu(tmp_path)
    env = {"ORT_DYLIB_PATH": str(folder / "libonnxruntime.so.1")}
    target = resolve_target(TargetSpec(kind=NATIVE), env)
    assert (target.lib_path, target.app, target.root_source) == (str(folder), "rust", "ORT_DYLIB_PATH")
    (finding,) = _findings(target)
    assert any("export ORT_DYLIB_PATH=" in command for command in finding.remediation.commands)


@pytest.mark.parametrize("app", ["dotnet", "java"])
def test_dotnet_and_java_remedies_name_their_gpu_packages(tmp_path, app):
    folder = _plain_cpu(tmp_path)
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(folder), app=app), {})
    (finding,) = _findings(target)
    wanted = {"dotnet": "Microsoft.ML.OnnxRuntime.Gpu --version 1.23.2", "java": "onnxruntime_gpu"}[app]
    assert any(wanted in command for command in finding.remediation.commands)
    assert app_named(app).source


def test_gpu_wheel_library_in_a_plain_folder_is_read_like_lib_path(tmp_path):
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(_plain_gpu(tmp_path))), {})
    lib = target.lib_ort
    assert (lib.version, lib.version_source) == ("1.31.1", "ELF version definition")
    assert {"CUDAExecutionProvider", "TensorrtExecutionProvider"} <= set(lib.gpu_providers)
    assert _findings(target) == []  # a GPU build: the layer checks take over
    facts = lib_path_ort_facts(lib)
    assert (facts.required_cuda_major, facts.required_cudnn_major) == (13, 9)
    assert facts.cudnn_loaded_lazily is True


def test_gpu_wheel_library_driven_through_the_c_api(tmp_path):
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(_plain_gpu(tmp_path))), {})
    plan = plan_inference(None, runs=2, warmup=1)
    result = run_inference(target, plan, python=sys.executable, env=dict(os.environ), timeout_s=120)
    assert result.kind == "capi" and result.completed
    assert result.runtime.ort_version == "1.31.1"
    gpu = result.as_is.gpu
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU
    assert any("libcublasLt.so.13" in line for line in gpu.ort_messages)


def test_a_running_process_maps_give_the_folder(tmp_path):
    folder = _plain_cpu(tmp_path)
    code = "import ctypes, sys, time; ctypes.CDLL(sys.argv[1]); print('ready', flush=True); time.sleep(60)"
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(folder / "libonnxruntime.so.1")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        target = resolve_target(TargetSpec(kind=NATIVE, pid=child.pid), {})
        assert target.lib_path == str(folder)
        assert target.root_source == f"/proc/{child.pid}/maps (libonnxruntime.so.1)"
    finally:
        child.kill()
        child.wait()


def test_a_pid_that_does_not_exist_is_said_and_no_folder_is_a_usage_error(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with pytest.raises(TargetNotFound, match="no such process"):
        resolve_target(TargetSpec(kind=NATIVE, pid=gone.pid), {})
    with pytest.raises(TargetNotFound, match="--lib-dir DIR"):
        resolve_target(TargetSpec(kind=NATIVE), {})


def test_a_fifo_as_the_library_is_refused_and_the_folder_has_no_library(tmp_path):
    folder = tmp_path / "lib"
    folder.mkdir()
    os.mkfifo(folder / "libonnxruntime.so.1")
    started = time.monotonic()
    target = resolve_target(TargetSpec(kind=NATIVE, lib_dir=str(folder)), {})
    assert time.monotonic() - started < 5
    (finding,) = _findings(target)
    assert finding.id == "native.no_library"
    assert any("FIFO" in item.value for item in finding.evidence)
