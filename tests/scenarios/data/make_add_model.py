"""Regenerate add.onnx (Z = X + Y, float32 [1, 4]) with the onnx package.

    uv venv /tmp/onnx-tool && uv pip install --python /tmp/onnx-tool/bin/python onnx==1.23.2
    /tmp/onnx-tool/bin/python tests/scenarios/data/make_add_model.py

IR version 8 and opset 13 so that every ONNX Runtime from 1.10 on loads it. ``Add`` has a CUDA
kernel, so a session that got the CUDA provider really places the node there.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4])
z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [1, 4])
graph = helper.make_graph([helper.make_node("Add", ["X", "Y"], ["Z"])], "add", [x, y], [z])
model = helper.make_model(
    graph, producer_name="gpu-fallback-doctor-tests", opset_imports=[helper.make_opsetid("", 13)]
)
model.ir_version = 8
onnx.checker.check_model(model)
out = Path(__file__).with_name("add.onnx")
out.write_bytes(model.SerializeToString())
print(out, out.stat().st_size, "bytes")
