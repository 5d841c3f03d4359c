"""The application's own model (``--model``, ``--dim``) through the real wheels of the broken stacks.

A convolutional model with unnamed height and width and a transformer with Hugging Face's dynamic
dimensions (tests/app_models.py, written with the onnx package), run by ``test-inference`` and
``diagnose`` under the scenario environments' own interpreters:

- ``cpu-only`` (onnxruntime 1.23.2, the CPU package): the CPU baseline measures the model; the GPU
  retry has no CUDA provider to ask for;
- ``gpu13-bare`` (onnxruntime-gpu 1.31.1 without any CUDA library): the GPU retry fails for real,
  the strict run's refusal is ONNX Runtime's own sentence, the placement is one line.

The shapes fed are the ones the parent planned from the model's signature (each dimension's value
and where it came from), in both the JSON and the text of each command.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import app_models
import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario
pytest.importorskip("onnx")

FAST = ("--runs", "3", "--warmup", "1")
_MEMO: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("app-models")
    return {
        "conv": app_models.write_conv_model(folder / "tiny_convnet.onnx"),
        "transformer": app_models.write_transformer_model(folder / "tiny_encoder.onnx"),
    }


def _tool(stack: stacks.Stack, *args: str) -> subprocess.CompletedProcess[str]:
    key = (stack.name, *args)
    if key not in _MEMO:
        _MEMO[key] = subprocess.run(
            [*runs.tool_command(), *args],
            capture_output=True,
            text=True,
            env={**stacks.clean_env(), "LANG": "C.UTF-8"},
            timeout=300,
            check=False,
        )
    return _MEMO[key]


def _test_inference(stack: stacks.Stack, *args: str) -> dict[str, Any]:
    done = _tool(
        stack,
        "test-inference",
        "--target",
        "python",
        "--python",
        str(stack.python_exe),
        *FAST,
        *args,
        "--json",
    )
    assert done.returncode == 1, done.stderr  # nothing ran on a GPU here
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def _latency_is_measured(session: dict[str, Any]) -> None:
    latency = session["latency"]
    assert latency["runs"] == 3
    assert 0 < latency["p50_ms"] <= latency["p95_ms"] <= latency["p99_ms"]


def test_a_convolutional_model_with_unnamed_dims_on_the_cpu_only_package(stack, models) -> None:
    cpu_only = stack("cpu-only")
    dims = ("--dim", "batch=4", "--dim", "images:2=32", "--dim", "images:3=32")
    document = _test_inference(cpu_only, "--model", str(models["conv"]), *dims)
    assert document["model"]["path"] == str(models["conv"].resolve())
    assert document["model"]["dims_used"] == [
        {"name": "batch", "value": 4, "source": "given"},
        {"name": "images:2", "value": 32, "source": "given"},
        {"name": "images:3", "value": 32, "source": "given"},
    ]
    result = document["result"]
    assert result["runtime"]["ort_version"] == "1.23.2"
    assert result["model"]["inputs"][0]["resolved_shape"] == [4, 3, 32, 32]
    assert [o["shape"] for o in result["cpu"]["outputs"]] == [[4, 10]]
    _latency_is_measured(result["cpu"])
    assert result["cpu"]["nodes_per_provider"] == {"CPUExecutionProvider": 7}
    # The CPU package has no CUDA provider: the retry's session runs on the CPU, its outputs the same.
    gpu = result["strategies"][0]["gpu"]
    assert gpu["active_providers"] == ["CPUExecutionProvider"]
    assert gpu["comparison"]["equal"] is True


def test_the_report_names_the_model_and_the_default_it_chose(stack, models) -> None:
    cpu_only = stack("cpu-only")
    done = _tool(
        cpu_only, "test-inference", "--target", "python", "--python", str(cpu_only.python_exe), *FAST,
        "--model", str(models["conv"]), "--dim", "batch=2",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    model_line = next(line for line in done.stdout.splitlines() if line.startswith("Model:"))
    assert model_line.startswith("Model:    tiny_convnet.onnx (7 nodes; batch=2 (given), ")
    assert "images:2=1 (default for a dimension without a name)" in model_line


def test_a_transformer_with_dynamic_dims_where_the_gpu_retry_fails_for_real(stack, models) -> None:
    bare = stack("gpu13-bare")
    document = _test_inference(bare, "--model", str(models["transformer"]), "--dim", "batch_size=3")
    assert document["model"]["dims_used"] == [
        {"name": "batch_size", "value": 3, "source": "given"},
        {"name": "sequence_length", "value": 128, "source": "by_name"},
    ]
    result = document["result"]
    assert result["runtime"]["ort_version"] == "1.31.1"
    assert [i["resolved_shape"] for i in result["model"]["inputs"]] == [[3, 128], [3, 128]]
    _latency_is_measured(result["cpu"])
    gpu = result["strategies"][0]["gpu"]
    assert gpu["requested_providers"][0] == "CUDAExecutionProvider"
    assert gpu["active_providers"] == ["CPUExecutionProvider"]
    assert gpu["comparison"]["equal"] is True
    # ONNX Runtime's own refusal, from the strict session, is the evidence.
    assert "fallback to CPU EP has been explicitly disabled" in gpu["strict"]["error"]
    fell_back = next(f for f in document["findings"] if f["id"] == "inference.fell_back")
    assert "explicitly disabled" in fell_back["detail"]
    # 1.31.1 says where every node went (get_provider_graph_assignment_info).
    assert gpu["nodes_source"] == "get_provider_graph_assignment_info"
    assert sum(gpu["nodes_per_provider"].values()) == gpu["nodes_per_provider"]["CPUExecutionProvider"]


def test_diagnose_runs_the_applications_model_and_says_so(stack, models) -> None:
    bare = stack("gpu13-bare")
    done = _tool(
        bare, "diagnose", "--python", str(bare.python_exe), "--runs", "3",
        "--model", str(models["transformer"]), "--dim", "batch_size=2", "--dim", "sequence_length=16",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    text = done.stdout
    assert (
        "Test inference model: tiny_encoder.onnx (batch_size=2 (given), sequence_length=16 (given))" in text
    )
    assert "Test inference, CPU baseline: median " in text
    placement = next(line for line in text.splitlines() if line.startswith("Node placement in the GPU retry"))
    assert placement.endswith(" nodes") and placement.split(": ", 1)[1].startswith("CPU ")
    assert "CUDA 13" in text  # the static cause is still the first cause
