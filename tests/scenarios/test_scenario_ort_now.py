"""ONNX Runtime as it is now, on the real wheels: exact placement, the log callback, automatic
provider selection, get_ep_devices() and get_device().

- onnxruntime-gpu 1.31.1 (``gpu13-bare``): placement from get_provider_graph_assignment_info, with
  the nodes it puts on the CPU provider; PREFER_GPU picks the CPU and prints nothing.
- onnxruntime-gpu 1.23.2 (``gpu12-full``): no assignment API, placement from the VERBOSE lines.
- onnxruntime 1.32.0 (CPU wheel, its own environment): set_default_logger_callback receives the
  messages. Its wheel is fetched once with ``pip download --no-deps`` into ~/.cache/gfd-wheels; the
  test is skipped when it is not there and cannot be fetched (offline).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import scenario_stacks as stacks
from fallback_doctor.core.readers.inference.findings import inference_findings
from fallback_doctor.core.readers.inference.python_probe import run_python_probe
from fallback_doctor.core.readers.inference.result import ProbeResult, StrategyName, Verdict
from fallback_doctor.core.readers.inference.run import plan_inference

pytestmark = pytest.mark.scenario

CPU = "CPUExecutionProvider"
WHEELS = Path.home() / ".cache" / "gfd-wheels"
ORT_132 = "onnxruntime==1.32.0"
CPU_132 = stacks.Stack("cpu-132", ((ORT_132, *stacks.ORT_1_31_DEPS),), "the CPU onnxruntime 1.32.0")

_PIP_DOWNLOAD = (sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:")
_MEMO: dict[str, ProbeResult] = {}


def _probe(python: Path, key: str) -> ProbeResult:
    if key not in _MEMO:
        plan = plan_inference(None, runs=2, warmup=1)
        _MEMO[key] = run_python_probe(str(python), plan.request, strategies=(StrategyName.AS_IS,))
    return _MEMO[key]


def _stack_132() -> stacks.Stack:
    if not any(WHEELS.glob("onnxruntime-1.32.0-*.whl")):
        WHEELS.mkdir(parents=True, exist_ok=True)
        fetched = subprocess.run(
            [*_PIP_DOWNLOAD, ORT_132, "-d", str(WHEELS)],
            capture_output=True,
            check=False,
        )
        if fetched.returncode != 0:
            pytest.skip("onnxruntime 1.32.0 is not cached and could not be downloaded (offline?)")
    stacks.build(CPU_132)
    return CPU_132


def test_131_placement_comes_from_the_assignment_api(stack):
    result = _probe(stack("gpu13-bare").python_exe, "131")
    assert result.runtime.ort_version == "1.31.1"
    gpu = result.as_is.gpu
    assert gpu.verdict == Verdict.FELL_BACK_TO_CPU
    assert gpu.nodes_source == "get_provider_graph_assignment_info"
    cpu_nodes = gpu.nodes_per_provider[CPU]
    assert cpu_nodes > 100 and set(gpu.nodes_per_provider) == {CPU}
    (placed,) = gpu.placement
    assert placed.provider == CPU and placed.nodes == cpu_nodes
    assert sum(placed.op_types.values()) == cpu_nodes
    assert placed.op_types["MatMul"] > 0 and placed.names
    assert result.runtime.log_source == "stderr"  # 1.31.1 has no set_default_logger_callback


def test_123_placement_comes_from_the_verbose_log(stack):
    result = _probe(stack("gpu12-full").python_exe, "123")
    assert result.runtime.ort_version == "1.23.2"
    gpu = result.as_is.gpu
    assert gpu.nodes_source == "verbose log"
    assert gpu.nodes_per_provider[CPU] > 50
    assert [p.provider for p in gpu.placement] == [CPU] and gpu.placement[0].op_types == {}


@pytest.mark.parametrize(("name", "key"), [("gpu13-bare", "131"), ("gpu12-full", "123")])
def test_automatic_selection_picks_the_cpu_silently_and_that_is_a_finding(stack, name, key):
    result = _probe(stack(name).python_exe, key)
    selection = result.as_is.selection
    assert selection is not None and selection.supported
    assert selection.policy == "PREFER_GPU"
    assert selection.active_providers == (CPU,)
    assert selection.messages == () and selection.silent
    assert [d.ep_name for d in selection.ep_devices] == [CPU]
    assert result.runtime.ep_devices[0].device_type == "CPU"
    findings = {f.id: f for f in inference_findings(result)}
    silent = findings["inference.auto_select_silent"]
    assert "PREFER_GPU" in silent.title and "CPUExecutionProvider on the CPU" in silent.detail
    # The probe tried the fix too (register the CUDA provider's library): here, without a GPU or
    # a driver, the library does not load or no GPU device appears, and the finding quotes why.
    registered = selection.registered
    assert registered is not None and registered.library.endswith("libonnxruntime_providers_cuda.so")
    assert registered.error or "CUDAExecutionProvider" not in registered.active_providers
    assert "register_execution_provider_library" in str(silent.evidence)
    assert silent.remediation is not None and silent.remediation.steps == ()


def test_get_device_says_gpu_for_a_gpu_build_that_ran_on_the_cpu(stack):
    result = _probe(stack("gpu13-bare").python_exe, "131")
    assert result.runtime.get_device == "GPU"
    ids = [f.id for f in inference_findings(result)]
    assert "inference.get_device_misleading" in ids
    assert result.runtime.plugin_eps == ()  # PyPI 1.31.1's build info has no cuda-plugin-ep=
    assert "cuda-plugin-ep=" not in (result.runtime.build_info or "")


def test_132_messages_arrive_through_the_logger_callback():
    st = _stack_132()
    result = _probe(st.python_exe, "132")
    assert result.runtime.ort_version == "1.32.0"
    assert result.runtime.log_source == "logger callback and stderr"
    (note,) = [n for n in result.notes if "came through set_default_logger_callback" in n]
    assert int(note.split()[0]) > 100  # the VERBOSE session logs, through the callback
    assert result.runtime.get_device == "CPU"
    gpu = result.as_is.gpu
    assert gpu.nodes_source == "get_provider_graph_assignment_info"
    # The CPU wheel has no CUDA provider: the Python warning still comes (it is not ORT's log).
    assert any("not in available provider names" in line for line in gpu.ort_messages)
    assert result.as_is.selection is not None and result.as_is.selection.silent
