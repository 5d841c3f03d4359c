"""Small real models of the two kinds applications bring, written with the onnx package (tests only).

- :func:`write_conv_model`: an image classifier (Conv, Relu, strided Conv, GlobalAveragePool, Gemm)
  whose input ``images`` is float32 ``[batch, 3, ?, ?]``: the batch is named, height and width have
  neither a name nor a value (as many exported vision models), so they are set as ``images:2`` and
  ``images:3``.
- :func:`write_transformer_model`: a one-layer encoder with Hugging Face's names, ``input_ids`` and
  ``attention_mask`` int64 ``[batch_size, sequence_length]`` (embedding Gather, single-head
  attention with the additive mask, LayerNormalization, a classifier on the mean).

Both at IR 8 / opset 17 (onnxruntime 1.15 and later), weights from a fixed seed, checked and
shape-inferred by onnx. Every operator has a CUDA kernel in ONNX Runtime.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

SEED = 20261205
VOCAB = 100
HIDDEN = 32
LABELS = 3


def _finish(onnx: Any, graph: Any, path: Path) -> Path:
    model = onnx.helper.make_model(
        graph, producer_name="fallback-doctor tests", opset_imports=[onnx.helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.write_bytes(onnx.shape_inference.infer_shapes(model).SerializeToString())
    return path


def write_conv_model(path: Path) -> Path:
    """``images`` float32 [batch, 3, ?, ?] -> ``scores`` float32 [batch, 10]; 7 nodes."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)

    def weight(name: str, *shape: int) -> Any:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        data = (rng.standard_normal(shape) / math.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(data, name)

    inits = [
        weight("w1", 8, 3, 3, 3),
        weight("b1", 8),
        weight("w2", 16, 8, 3, 3),
        weight("b2", 16),
        weight("fc_w", 10, 16),
        weight("fc_b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["images", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node(
            "Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]
        ),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["scores"], transB=1),
    ]
    images = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, None, None])
    scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 10])
    graph = helper.make_graph(nodes, "tiny_convnet", [images], [scores], inits)
    return _finish(onnx, graph, path)


def write_transformer_model(path: Path) -> Path:
    """``input_ids``, ``attention_mask`` int64 [batch_size, sequence_length] -> ``logits`` [batch_size, 3]."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)

    def array(name: str, data: Any) -> Any:
        return numpy_helper.from_array(np.asarray(data), name)

    def weight(name: str, *shape: int) -> Any:
        return array(name, (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32))

    inits = [
        weight("embedding", VOCAB, HIDDEN),
        weight("wq", HIDDEN, HIDDEN),
        weight("wk", HIDDEN, HIDDEN),
        weight("wv", HIDDEN, HIDDEN),
        weight("classifier", HIDDEN, LABELS),
        array("gamma", np.ones(HIDDEN, dtype=np.float32)),
        array("beta", np.zeros(HIDDEN, dtype=np.float32)),
        array("scale", np.array(1.0 / math.sqrt(HIDDEN), dtype=np.float32)),
        array("one", np.array(1.0, dtype=np.float32)),
        array("neg", np.array(-10000.0, dtype=np.float32)),
        array("axis1", np.array([1], dtype=np.int64)),
    ]
    op = helper.make_node
    nodes = [
        op("Gather", ["embedding", "input_ids"], ["x"], axis=0),
        op("MatMul", ["x", "wq"], ["q"]),
        op("MatMul", ["x", "wk"], ["k"]),
        op("MatMul", ["x", "wv"], ["v"]),
        op("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        op("MatMul", ["q", "kt"], ["qk"]),
        op("Mul", ["qk", "scale"], ["scaled"]),
        op("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        op("Sub", ["one", "mask_f"], ["masked"]),
        op("Mul", ["masked", "neg"], ["mask_add2"]),
        op("Unsqueeze", ["mask_add2", "axis1"], ["mask_add"]),
        op("Add", ["scaled", "mask_add"], ["scores"]),
        op("Softmax", ["scores"], ["probs"], axis=-1),
        op("MatMul", ["probs", "v"], ["context"]),
        op("Add", ["x", "context"], ["residual"]),
        op("LayerNormalization", ["residual", "gamma", "beta"], ["hidden"], axis=-1),
        op("ReduceMean", ["hidden"], ["mean"], axes=[1], keepdims=0),
        op("MatMul", ["mean", "classifier"], ["logits"]),
    ]
    dims = ["batch_size", "sequence_length"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims),
    ]
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", LABELS])
    graph = helper.make_graph(nodes, "tiny_encoder", inputs, [logits], inits)
    return _finish(onnx, graph, path)
