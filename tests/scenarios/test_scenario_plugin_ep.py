"""A plugin execution provider, for real: onnxruntime-ep-nv-tensorrt-rtx-cu13 0.5.0 beside
onnxruntime-gpu 1.31.1 (no NVIDIA driver here).

The plugin's library is found from its package's RECORD and its needs read like a built-in
provider's (DT_NEEDED: libcudart.so.13 and TensorRT RTX bundled beside it, libcuda.so.1 from the
driver); the probe registers it the package's own way (``get_library_path()``, then
``register_execution_provider_library``) and quotes ONNX Runtime's refusal. The 146 MB wheel is
fetched once with ``pip download --no-deps`` into ~/.cache/gfd-wheels; skipped when offline.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import scenario_stacks as stacks
from fallback_doctor.core.readers.collect.onnxruntime import collect_onnxruntime
from fallback_doctor.core.readers.collect.python_env import collect_python_env
from fallback_doctor.core.readers.inference.findings import inference_findings
from fallback_doctor.core.readers.inference.python_probe import run_python_probe
from fallback_doctor.core.readers.inference.result import StrategyName
from fallback_doctor.core.readers.inference.run import plan_inference

pytestmark = pytest.mark.scenario

PLUGIN = "onnxruntime-ep-nv-tensorrt-rtx-cu13==0.5.0"
WHEELS = Path.home() / ".cache" / "gfd-wheels"
STACK = stacks.Stack(
    "gpu13-rtx-plugin",
    ((stacks.ORT_GPU_CUDA13, *stacks.ORT_1_31_DEPS, PLUGIN),),
    "onnxruntime-gpu 1.31.1 with the TensorRT RTX plugin provider (CUDA 13)",
)
RTX = "NvTensorRTRTXExecutionProvider"


@pytest.fixture(scope="module")
def plugin_stack() -> stacks.Stack:
    if not any(WHEELS.glob("onnxruntime_ep_nv_tensorrt_rtx_cu13-0.5.0-*.whl")):
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", PLUGIN]
        if subprocess.run([*command, "-d", str(WHEELS)], capture_output=True, check=False).returncode:
            pytest.skip(f"{PLUGIN} is not cached and could not be downloaded (offline?)")
    stacks.build(STACK)
    return STACK


def test_the_plugin_library_is_found_and_its_needs_read_like_a_built_in_provider(plugin_stack):
    python = collect_python_env(str(plugin_stack.python_exe), {})
    ort = collect_onnxruntime(python)
    assert ort.version == "1.31.1" and len(ort.distributions) == 1  # the plugin is no second runtime
    (plugin,) = [lib for lib in ort.provider_libraries if lib.provider == RTX]
    assert plugin.path.endswith("onnxruntime_ep_nv_tensorrt_rtx/libonnxruntime_providers_nv_tensorrt_rtx.so")
    assert {"libcudart.so.13", "libcuda.so.1", "libtensorrt_rtx.so.1"} <= set(plugin.needed)
    assert any("plugin execution provider NvTensorRTRTXExecutionProvider" in note for note in ort.notes)


def test_the_probe_registers_it_and_quotes_the_refusal(plugin_stack):
    plan = plan_inference(None, runs=1, warmup=1)
    result = run_python_probe(str(plugin_stack.python_exe), plan.request, strategies=(StrategyName.AS_IS,))
    (entry,) = result.runtime.plugin_eps
    assert " did not load: " in entry and "libcuda.so.1: cannot open shared object file" in entry
    ids = [finding.id for finding in inference_findings(result)]
    assert "inference.plugin_ep_failed" in ids
