"""The bundled test model and the minimal ONNX reader (core/readers/inference/model_info.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fallback_doctor.core.readers.inference.model_info import (
    default_dim,
    parse_model,
    read_model,
    resolve_dims,
)
from fallback_doctor.core.readers.inference.protobuf_wire import ModelReadError
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "resources" / "model" / "encoder.onnx"
DESCRIPTION = json.loads((ROOT / "resources" / "model" / "encoder.json").read_text())


def test_bundled_model_is_a_bert_shaped_encoder() -> None:
    info = read_model(MODEL)
    blocks = DESCRIPTION["blocks"]
    assert info.ir_version == 8
    assert info.opsets == {"ai.onnx": 17}
    assert [v.describe() for v in info.inputs] == [
        "input_ids: int64 [batch, seq]",
        "attention_mask: int64 [batch, seq]",
    ]
    assert [v.describe() for v in info.outputs] == ["logits: float32 [batch, 2]"]
    ops = info.op_counts
    assert ops == DESCRIPTION["op_counts"]
    # Per block: Softmax, Erf (GELU) once; LayerNormalization twice (+ the embeddings' and the convolution's).
    assert ops["Softmax"] == blocks == ops["Erf"] == 4
    assert ops["LayerNormalization"] == 2 * blocks + 2
    # One convolution on the main path, so the GPU retry makes ONNX Runtime's CUDA provider load cuDNN.
    assert ops["Conv"] == 1
    conv = next(node for node in info.nodes if node.op_type == "Conv")
    assert info.shape_of(conv.inputs[1]) == (128, 128, 3)
    assert ops["MatMul"] == blocks * 8 + 2  # Q, K, V, QK^T, AV, out, FFN in, FFN out; pooler, classifier
    assert {"Gather", "CumSum", "Tanh"} <= set(ops)
    assert 1_000_000 < info.size_bytes < 8_000_000


def test_flops_per_batch_counted_from_the_graph() -> None:
    info = read_model(MODEL)
    flops = info.matmul_flops({"batch": 16, "seq": 128})
    assert flops == DESCRIPTION["matmul_flops_per_batch"]
    # Analytically (hidden 128, FFN 512, 4 heads of 32, 4 blocks), batch 16, sequence 128:
    b, s, h, f, heads, d = 16, 128, 128, 512, 4, 32
    block = 2 * b * s * (4 * h * h + 2 * h * f) + 2 * 2 * b * heads * s * s * d
    assert flops == 4 * block + 2 * b * (h * h + h * 2)
    assert info.matmul_flops({"batch": 16}) is None  # a dim not given: unknown, not a guess


def test_reader_agrees_with_the_onnx_package() -> None:
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(MODEL))
    info = read_model(MODEL)
    assert len(info.nodes) == len(model.graph.node)
    assert [n.op_type for n in info.nodes] == [n.op_type for n in model.graph.node]
    assert set(info.initializers) == {t.name for t in model.graph.initializer}
    assert info.ir_version == model.ir_version
    onnx.checker.check_model(model)


def test_symbolic_dims_get_sensible_defaults_and_overrides() -> None:
    info = read_model(MODEL)
    assert info.symbolic_dims == ("batch", "seq")
    assert resolve_dims(info, {}) == {"batch": 1, "seq": 128}
    assert resolve_dims(info, {"batch": 4}, DESCRIPTION["dims"]) == {"batch": 4, "seq": 128}
    assert default_dim("height") == 224
    assert default_dim("unk__42") == 1


def test_a_model_with_a_string_input_is_not_runnable(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["text"], ["out"])],
        "g",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["n"])],
        [helper.make_tensor_value_info("out", TensorProto.STRING, ["n"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "text.onnx"
    path.write_bytes(model.SerializeToString())
    problems = read_model(path).unrunnable()
    assert problems == ["input 'text' has element type string"]
    del onnx


def test_not_a_model() -> None:
    with pytest.raises(ModelReadError):
        parse_model(b"this is not a model at all")
    with pytest.raises(ModelReadError):
        parse_model(b"")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_reader_never_fails_other_than_with_model_read_error(data: bytes) -> None:
    try:
        parse_model(data)
    except ModelReadError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=4000))
def test_truncated_bundled_model_is_a_clean_error(cut: int) -> None:
    data = MODEL.read_bytes()[:cut]
    try:
        parse_model(data)
    except ModelReadError:
        pass
