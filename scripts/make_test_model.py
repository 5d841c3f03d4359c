"""Regenerate the bundled test model: a small BERT-shaped encoder (resources/model/encoder.onnx).

    .venv/bin/python -m pip install onnx     # generation only; not a runtime dependency
    .venv/bin/python scripts/make_test_model.py

The workload of the support case (a BERT-base classifier, batch 16, sequence 128), scaled down so
the repository stays light (a few MB): token + position embeddings (Gather), LayerNormalization,
a 1-D convolution over the sequence (Conv, kernel 3, with a residual and LayerNormalization: cuDNN
is loaded only when a kernel needs it since about ONNX Runtime 1.28, and the GPU retry must load it
whatever the application's model is), BLOCKS encoder blocks of multi-head self-attention (MatMul,
Reshape, Transpose, Softmax with the attention mask added) and a GELU feed-forward (Erf form),
then BERT's pooler (first token, Tanh) and a classifier. Inputs ``input_ids`` and
``attention_mask`` (int64 [batch, seq], symbolic, with defaults
16 and 128 in the description file); output ``logits`` float32 [batch, LABELS].

Every operator has a CUDA kernel in ONNX Runtime, and no subgraph computes shapes (Reshape takes
a constant ``[0, 0, heads, head_dim]``; positions are ``CumSum(attention_mask) - 1``), so ONNX
Runtime has no reason to keep any node on the CPU: a strict session
(``session.disable_cpu_ep_fallback``) succeeds on a working GPU.

IR version 8 and opset 17 (LayerNormalization's first opset): ONNX Runtime 1.15 and later load it
(1.15 reads IR up to 9 and opsets up to 19). Weights come from a fixed seed: the file is the same
on every run with the same numpy and onnx. Beside it, ``encoder.json`` describes it (dims,
defaults, operator counts, FLOPs per batch) and the test checks both against the graph.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BLOCKS = 4
HIDDEN = 128
HEADS = 4
HEAD_DIM = HIDDEN // HEADS
FFN = 512
CONV_KERNEL = 3
VOCAB = 1024
MAX_POSITIONS = 512
LABELS = 2
BATCH_DEFAULT = 16
SEQ_DEFAULT = 128
SEED = 20240607
IR_VERSION = 8
OPSET = 17

OUT_DIR = Path(__file__).resolve().parent.parent / "resources" / "model"


class Builder:
    """Collects nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(SEED)
        self.count = 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def weight(self, base: str, shape: tuple[int, ...], scale: float) -> str:
        name = self.name(base)
        data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, base: str, value: np.ndarray) -> str:
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out + "_node", **attrs))
        return out

    def layer_norm(self, x: str) -> str:
        gamma = self.const("ln_gamma", np.ones(HIDDEN, dtype=np.float32))
        beta = self.const("ln_beta", np.zeros(HIDDEN, dtype=np.float32))
        return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-12)

    def token_conv(self, x: str) -> str:
        """A 1-D convolution over the sequence ([batch, seq, hidden] in and out, kernel 3, same padding).

        ONNX Runtime's CUDA Conv kernel runs it with cuDNN, so the GPU retry loads cuDNN whatever the
        application's model is (since about ONNX Runtime 1.28 cuDNN is loaded only when a kernel
        first needs it)."""
        # A tenth of the usual scale: the residual stays dominant, so the rounding a GPU's convolution
        # adds (cuDNN may pick reduced-precision math) stays small beside the comparison's 1e-3
        # tolerance (the encoder without it differed by up to 0.00099 on an H200).
        w = self.weight("conv_w", (HIDDEN, HIDDEN, CONV_KERNEL), 0.1 / math.sqrt(HIDDEN * CONV_KERNEL))
        b = self.const("conv_b", (self.rng.standard_normal(HIDDEN) * 0.02).astype(np.float32))
        channels_first = self.op("Transpose", [x], perm=[0, 2, 1])
        pad = CONV_KERNEL // 2
        conv = self.op("Conv", [channels_first, w, b], kernel_shape=[CONV_KERNEL], pads=[pad, pad])
        return self.op("Transpose", [conv], perm=[0, 2, 1])

    def linear(self, x: str, n_in: int, n_out: int) -> str:
        w = self.weight("w", (n_in, n_out), 1.0 / math.sqrt(n_in))
        b = self.const("b", (self.rng.standard_normal(n_out) * 0.02).astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w]), b])


def build() -> onnx.ModelProto:
    """The model, checked by onnx and with shapes inferred (value_info for every tensor)."""
    g = Builder()
    # Embeddings: token + position (positions from the mask: no shape computation in the graph).
    tokens = g.op("Gather", [g.weight("token_embedding", (VOCAB, HIDDEN), 0.02), "input_ids"], axis=0)
    positions = g.op(
        "Sub",
        [
            g.op("CumSum", ["attention_mask", g.const("axis", np.array(1, dtype=np.int64))]),
            g.const("one", np.array(1, dtype=np.int64)),
        ],
    )
    positions = g.op("Max", [positions, g.const("zero", np.array(0, dtype=np.int64))])
    pos_emb = g.op(
        "Gather", [g.weight("position_embedding", (MAX_POSITIONS, HIDDEN), 0.02), positions], axis=0
    )
    x = g.layer_norm(g.op("Add", [tokens, pos_emb]))
    x = g.layer_norm(g.op("Add", [x, g.token_conv(x)]))
    # Additive mask [batch, 1, 1, seq]: 0 where attended, -10000 where masked.
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask_add = g.op(
        "Mul",
        [
            g.op("Sub", [g.const("one_f", np.array(1.0, dtype=np.float32)), mask_f]),
            g.const("neg", np.array(-10000.0, dtype=np.float32)),
        ],
    )
    mask_add = g.op("Unsqueeze", [mask_add, g.const("axes", np.array([1, 2], dtype=np.int64))])
    split_shape = g.const("split_shape", np.array([0, 0, HEADS, HEAD_DIM], dtype=np.int64))
    merge_shape = g.const("merge_shape", np.array([0, 0, HIDDEN], dtype=np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(HEAD_DIM), dtype=np.float32))
    for _ in range(BLOCKS):
        heads = []
        for perm in ((0, 2, 1, 3), (0, 2, 3, 1), (0, 2, 1, 3)):  # Q, K (pre-transposed), V
            projected = g.linear(x, HIDDEN, HIDDEN)
            heads.append(g.op("Transpose", [g.op("Reshape", [projected, split_shape])], perm=list(perm)))
        q, k, v = heads
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask_add])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])
        x = g.layer_norm(g.op("Add", [x, g.linear(context, HIDDEN, HIDDEN)]))
        # Feed-forward with GELU, Erf form: 0.5 * h * (1 + erf(h / sqrt(2))).
        h = g.linear(x, HIDDEN, FFN)
        erf = g.op("Erf", [g.op("Div", [h, g.const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))])])
        gelu = g.op(
            "Mul",
            [
                g.op("Mul", [h, g.op("Add", [erf, g.const("one_g", np.array(1.0, dtype=np.float32))])]),
                g.const("half", np.array(0.5, dtype=np.float32)),
            ],
        )
        x = g.layer_norm(g.op("Add", [x, g.linear(gelu, FFN, HIDDEN)]))
    # Pooler: the first token, dense + tanh; then the classifier.
    first = g.op("Gather", [x, g.const("first", np.array(0, dtype=np.int64))], axis=1)
    pooled = g.op("Tanh", [g.linear(first, HIDDEN, HIDDEN)])
    logits = g.linear(pooled, HIDDEN, LABELS)
    g.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_node"))

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", LABELS])]
    graph = helper.make_graph(g.nodes, "bert_like_encoder", inputs, outputs, g.inits)
    model = helper.make_model(
        graph,
        producer_name="gpu-fallback-doctor",
        producer_version="1",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    model.ir_version = IR_VERSION
    model.doc_string = (
        f"BERT-shaped test encoder: a token convolution (kernel {CONV_KERNEL}), {BLOCKS} blocks, "
        f"hidden {HIDDEN}, {HEADS} heads, FFN {FFN}, vocab {VOCAB}; "
        f"made by scripts/make_test_model.py (seed {SEED})"
    )
    onnx.checker.check_model(model)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    name_conv_length(inferred)
    onnx.checker.check_model(inferred)
    return inferred


def name_conv_length(model: onnx.ModelProto) -> None:
    """Call every length below the convolution ``seq``, as it is (kernel 3, padding 1 on each side).

    ONNX's shape inference does no arithmetic on a symbolic dimension, so it names the Conv's
    output length ``unk__0`` (and each broadcast against the mask another ``unk__N``); with those
    no shape below it is known and neither the reader nor a technician could count the FLOPs.
    Every such name in this graph is the sequence length: the renamed model is inferred again,
    strictly, to prove the names agree with every operator.
    """
    renamed = 0
    for value in model.graph.value_info:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param.startswith("unk__"):
                dim.dim_param = "seq"
                renamed += 1
    if not renamed:
        raise SystemExit("expected the Conv's output length to be unnamed by shape inference")
    onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)


def matmul_flops(batch: int, seq: int) -> int:
    """Multiply-adds of every MatMul counted twice (the usual FLOPs convention), analytically."""
    tokens = batch * seq
    per_block = 2 * tokens * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)  # Q, K, V, output; FFN in/out
    per_block += 2 * 2 * batch * HEADS * seq * seq * HEAD_DIM  # QK^T and softmax x V
    head = 2 * batch * (HIDDEN * HIDDEN + HIDDEN * LABELS)  # pooler + classifier
    return BLOCKS * per_block + head


def main() -> None:
    """Write encoder.onnx and encoder.json."""
    model = build()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data = model.SerializeToString()
    path = OUT_DIR / "encoder.onnx"
    path.write_bytes(data)
    ops = Counter(node.op_type for node in model.graph.node)
    description = {
        "file": path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size_bytes": len(data),
        "made_by": "scripts/make_test_model.py",
        "onnx_version": onnx.__version__,
        "numpy_version": np.__version__,
        "seed": SEED,
        "ir_version": IR_VERSION,
        "opset": OPSET,
        "shape_of": "BERT-base classifier (12 blocks, hidden 768, 12 heads, FFN 3072), scaled down",
        "blocks": BLOCKS,
        "hidden": HIDDEN,
        "heads": HEADS,
        "ffn": FFN,
        "conv_kernel": CONV_KERNEL,
        "conv_flops_per_batch": 2 * BATCH_DEFAULT * SEQ_DEFAULT * HIDDEN * HIDDEN * CONV_KERNEL,
        "vocab": VOCAB,
        "max_positions": MAX_POSITIONS,
        "labels": LABELS,
        "dims": {"batch": BATCH_DEFAULT, "seq": SEQ_DEFAULT},
        "inputs": {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"]},
        "input_ranges": {"input_ids": [0, VOCAB], "attention_mask": [1, 2]},
        "outputs": {"logits": ["batch", LABELS]},
        "op_counts": dict(sorted(ops.items())),
        "nodes": len(model.graph.node),
        "parameters": int(sum(np.prod(t.dims) for t in model.graph.initializer)),
        "matmul_flops_per_batch": matmul_flops(BATCH_DEFAULT, SEQ_DEFAULT),
        "flops_note": "MatMul (and, apart, Conv) multiply-adds x 2 at batch 16, sequence 128; "
        "element-wise work not counted",
    }
    (OUT_DIR / "encoder.json").write_text(json.dumps(description, indent=2) + "\n")
    print(
        path,
        len(data),
        "bytes;",
        description["nodes"],
        "nodes;",
        description["matmul_flops_per_batch"],
        "FLOPs",
    )


if __name__ == "__main__":
    main()
