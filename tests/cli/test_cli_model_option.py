"""``--model`` and ``--dim`` of ``diagnose`` and ``test-inference``: hostile files and wrong dims.

Each is a usage error (exit 2) that names the file, said before any probe starts, in a few seconds
and without reading a large file into memory (the reader maps it). Real files, real processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import app_models
import pytest
from fallback_doctor.cli.test_inference_model import parse_dims
from fallback_doctor.core.readers.inference.model_info import read_model
from fallback_doctor.core.readers.inference.model_inputs import MAX_INPUT_BYTES, plan_inputs

onnx = pytest.importorskip("onnx")

BOUND_S = 30.0
"""Generous for a loaded 2-core machine: each case answers in about a second when idle."""


def _run(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "LANG": "C.UTF-8"},
        check=False,
    )
    return done, time.monotonic() - started


def _usage_error(*args: str) -> str:
    done, seconds = _run(*args)
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert seconds < BOUND_S
    assert done.stdout == ""  # no report, no probe: the error alone
    return done.stderr


@pytest.mark.parametrize("command", ["diagnose", "test-inference"])
def test_a_file_that_is_not_onnx_is_named(tmp_path: Path, command: str) -> None:
    text = tmp_path / "notes.onnx"
    text.write_text("this is a README, not a model\n" * 100)
    error = _usage_error(command, "--model", str(text))
    assert f"--model {text.resolve()}: not an ONNX model this tool can read" in error


def test_a_truncated_model_is_named(tmp_path: Path) -> None:
    whole = app_models.write_conv_model(tmp_path / "whole.onnx").read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(whole[: len(whole) // 2])
    error = _usage_error("diagnose", "--quick", "--model", str(cut))
    assert str(cut.resolve()) in error and "not an ONNX model" in error


def test_a_large_file_of_garbage_is_refused_without_reading_it_into_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.onnx"
    with big.open("wb") as handle:  # a length prefix that claims more than the file holds, then zeros
        handle.write(b"\x3a\xff\xff\xff\xff\x0f")
        handle.truncate(512 * 2**20)
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    # Linux counts a child's peak memory from the process it was forked from (exec keeps the old
    # image's high-water mark), and a test worker may hold hundreds of MiB: a fresh small Python
    # starts the tool and reports the peak of that one child.
    launcher = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
        "sys.stderr.buffer.write(done.stderr); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            launcher,
            sys.executable,
            "-m",
            "fallback_doctor",
            "test-inference",
            "--model",
            str(big),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "LANG": "C.UTF-8"},
        check=False,
    )
    returncode, peak_kib = map(int, done.stdout.split())
    assert returncode == 2 and str(big.resolve()) in done.stderr, done.stderr
    assert peak_kib < 400 * 1024  # KiB: far below the file's 512 MiB


def test_huge_fixed_dims_are_refused_before_any_allocation(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [100_000, 100_000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [100_000, 100_000])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "huge", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "huge.onnx"
    path.write_bytes(model.SerializeToString())
    error = _usage_error("test-inference", "--model", str(path))
    assert f"{path.resolve()}: its inputs would take 37.3 GiB" in error
    assert "at most 1 GiB" in error


def test_a_huge_dim_asked_for_is_refused_with_the_dims(tmp_path: Path) -> None:
    model = app_models.write_transformer_model(tmp_path / "enc.onnx")
    error = _usage_error(
        "diagnose", "--model", str(model), "--dim", "batch_size=100000", "--dim", "sequence_length=4096"
    )
    assert "batch_size=100000, sequence_length=4096" in error and str(model.resolve()) in error


def test_a_dim_the_model_does_not_have_lists_those_it_has(tmp_path: Path) -> None:
    model = app_models.write_conv_model(tmp_path / "conv.onnx")
    error = _usage_error("test-inference", "--model", str(model), "--dim", "seq=128")
    assert "--dim seq: conv.onnx has no dynamic dimension of that name" in error
    assert "(its dynamic dimensions: batch, images:2, images:3)" in error


def test_a_missing_model_and_a_malformed_dim() -> None:
    assert "--model /nonexistent/model.onnx: no such file" in _usage_error(
        "diagnose", "--model", "/nonexistent/model.onnx"
    )
    assert "expected NAME=VALUE" in _usage_error("test-inference", "--dim", "batch")
    assert parse_dims(["images:2=224", "batch=4"]) == {"images:2": 224, "batch": 4}


def test_planned_shapes_stay_within_the_bound_and_say_where_each_value_came_from(tmp_path: Path) -> None:
    info = read_model(app_models.write_conv_model(tmp_path / "conv.onnx"))
    plan = plan_inputs(info, {"images:2": 224, "images:3": 224}, {"batch": 8})
    assert plan.shapes == {"images": (8, 3, 224, 224)}
    assert [(c.name, c.value, c.source) for c in plan.choices] == [
        ("batch", 8, "model"),
        ("images:2", 224, "given"),
        ("images:3", 224, "given"),
    ]
    assert plan.total_bytes == 8 * 3 * 224 * 224 * 4 < MAX_INPUT_BYTES


def test_the_c_api_probe_runs_the_applications_model_with_the_planned_shapes(tmp_path: Path) -> None:
    """A native target (onnxruntime-node's real libonnxruntime.so.1 in a Bareun layout): the C-API child
    feeds the shapes the parent planned, unnamed dimensions included."""
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))
    from bareun_layout import make_install

    root = make_install(tmp_path)
    model = app_models.write_conv_model(tmp_path / "conv.onnx")
    done, _ = _run(
        "test-inference", "--target", "bareun", "--bareun-root", str(root), "--runs", "3", "--warmup", "1",
        "--model", str(model), "--dim", "batch=2", "--dim", "images:2=16", "--dim", "images:3=24", "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["kind"] == "capi"
    assert result["model"]["inputs"][0]["resolved_shape"] == [2, 3, 16, 24]
    assert [o["shape"] for o in result["cpu"]["outputs"]] == [[2, 10]]
    latency = result["cpu"]["latency"]
    assert 0 < latency["p50_ms"] <= latency["p95_ms"] <= latency["p99_ms"]
