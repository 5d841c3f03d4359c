"""Describe any ONNX model without the onnx package: a minimal protobuf reader for ModelProto.

Reads what the probe needs: IR version, opsets, producer, the graph's declared inputs and outputs
(element type and dims, symbolic or fixed), operator counts, initializer shapes and the shapes of
``value_info``; from those, the MatMul/Gemm FLOPs per batch where every shape is known. Initializer
bytes are skipped, never copied (the file is memory-mapped). By hand: ``python -c "import onnx;
m = onnx.load('model.onnx'); print(m.graph.input)"``.

Wire format (protobuf): each field is a varint key ``(number << 3) | wire_type``; wire type 0 is
a varint, 1 a 64-bit value, 2 a length-delimited block (bytes, string, sub-message or packed
repeated scalars), 5 a 32-bit value.
"""

from __future__ import annotations

import mmap
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fallback_doctor.core.platform.files import open_regular_file
from fallback_doctor.core.readers.inference.protobuf_wire import (
    ModelReadError,
    _int,
    _ints,
    _text,
    _view,
    fields,
)

# TensorProto.DataType -> numpy-style name (onnx.proto3).
ELEM_TYPES: dict[int, str] = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "string",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    14: "complex64",
    15: "complex128",
    16: "bfloat16",
    17: "float8e4m3fn",
    18: "float8e4m3fnuz",
    19: "float8e5m2",
    20: "float8e5m2fnuz",
    21: "uint4",
    22: "int4",
    23: "float4e2m1",
}
#: Element types the probe can generate data for.
RUNNABLE_TYPES = frozenset(
    {
        "float32",
        "float16",
        "float64",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
    }
)

Dim = int | str | None


@dataclass(frozen=True)
class ValueInfo:
    """A declared tensor: name, element type and dims (int, symbolic name, or None for unknown)."""

    name: str
    kind: str = "tensor"
    """"tensor", or "sequence", "map", "optional", "sparse_tensor", "unknown" (not runnable here)."""
    elem_type: str | None = None
    shape: tuple[Dim, ...] | None = None
    """None when the rank itself is unknown."""

    def describe(self) -> str:
        """``input_ids: int64 [batch, seq]``."""
        if self.kind != "tensor":
            return f"{self.name}: {self.kind}"
        dims = "?" if self.shape is None else ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name}: {self.elem_type or '?'} [{dims}]"


@dataclass(frozen=True)
class Node:
    """A graph node: op type, domain, inputs and outputs by name."""

    op_type: str
    domain: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    name: str = ""
    int_attrs: dict[str, int] = field(default_factory=dict)
    """Integer attributes (transA, axis, ...); others are not read."""


@dataclass(frozen=True)
class ModelInfo:
    """What the reader found in a model file."""

    path: str
    size_bytes: int
    ir_version: int | None
    opsets: dict[str, int]
    producer: str
    inputs: tuple[ValueInfo, ...]
    """Graph inputs that are not initializers (what a caller feeds)."""
    outputs: tuple[ValueInfo, ...]
    nodes: tuple[Node, ...]
    initializers: dict[str, tuple[int, ...]]
    value_info: dict[str, ValueInfo]
    external_data: bool = False
    doc: str = ""
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def op_counts(self) -> dict[str, int]:
        """Operator type -> number of nodes (main graph)."""
        return dict(sorted(Counter(node.op_type for node in self.nodes).items()))

    @property
    def symbolic_dims(self) -> tuple[str, ...]:
        """Symbolic dimension names of the inputs, in first-seen order."""
        seen: list[str] = []
        for value in self.inputs:
            for dim in value.shape or ():
                if isinstance(dim, str) and dim not in seen:
                    seen.append(dim)
        return tuple(seen)

    def unrunnable(self) -> list[str]:
        """Why the probe cannot feed this model generated data (empty when it can)."""
        problems = []
        for value in self.inputs:
            if value.kind != "tensor":
                problems.append(f"input {value.name!r} is a {value.kind}, not a tensor")
            elif value.elem_type not in RUNNABLE_TYPES:
                problems.append(f"input {value.name!r} has element type {value.elem_type}")
        if not self.nodes:
            problems.append("the graph has no nodes")
        return problems

    def shape_of(self, name: str) -> tuple[Dim, ...] | None:
        """The declared or inferred shape of a tensor by name (inputs, outputs, value_info, initializers)."""
        if name in self.initializers:
            return self.initializers[name]
        for value in (*self.inputs, *self.outputs):
            if value.name == name:
                return value.shape
        found = self.value_info.get(name)
        return found.shape if found is not None else None

    def matmul_flops(self, dims: Mapping[str, int]) -> int | None:
        """FLOPs of every MatMul and Gemm (2 x multiply-adds) with symbolic dims set to ``dims``.

        None when a shape needed is unknown (the model carries no inferred shapes, or a dim is
        neither fixed nor given). Element-wise work is not counted.
        """
        total = 0
        for node in self.nodes:
            if node.op_type not in ("MatMul", "Gemm") or len(node.inputs) < 2:
                continue
            a = _concrete(self.shape_of(node.inputs[0]), dims)
            out = _concrete(self.shape_of(node.outputs[0]), dims) if node.outputs else None
            if a is None or out is None or not a:
                return None
            transposed = node.op_type == "Gemm" and node.int_attrs.get("transA", 0) == 1 and len(a) == 2
            k = a[0] if transposed else a[-1]
            count = 1
            for dim in out:
                count *= dim
            total += 2 * count * k
        return total


def _concrete(shape: tuple[Dim, ...] | None, dims: Mapping[str, int]) -> tuple[int, ...] | None:
    if shape is None:
        return None
    out = []
    for dim in shape:
        if isinstance(dim, int):
            out.append(dim)
        elif isinstance(dim, str) and dim in dims:
            out.append(int(dims[dim]))
        else:
            return None
    return tuple(out)


# --- sensible defaults for symbolic dims ---------------------------------------------------------

_DIM_DEFAULTS: tuple[tuple[str, int], ...] = (
    (r"batch|^n$|^b$|bs|num_images", 1),
    (r"seq|length|len|token|^s$|^t$|time|frames", 128),
    (r"height|width|^h$|^w$|size|img|image", 224),
    (r"chan|^c$", 3),
)


def default_dim(name: str) -> int:
    """A sensible value for a symbolic dim by its name: batch 1, sequence 128, image side 224, else 1."""
    lowered = name.lower()
    for pattern, value in _DIM_DEFAULTS:
        if re.search(pattern, lowered):
            return value
    return 1


def resolve_dims(
    info: ModelInfo, given: Mapping[str, int], defaults: Mapping[str, int] | None = None
) -> dict[str, int]:
    """A value for every symbolic input dim: ``given`` first, then ``defaults``, then by name."""
    out: dict[str, int] = {}
    for name in info.symbolic_dims:
        if name in given:
            out[name] = int(given[name])
        elif defaults and name in defaults:
            out[name] = int(defaults[name])
        else:
            out[name] = default_dim(name)
    for name, value in given.items():
        out.setdefault(name, int(value))
    return out


# --- the protobuf reader (wire format in core/readers/inference/protobuf_wire.py) -----------------------


def _value_info(buf: memoryview) -> ValueInfo:
    name = ""
    kind = "unknown"
    elem: str | None = None
    shape: tuple[Dim, ...] | None = None
    for number, _, value in fields(buf):
        if number == 1:
            name = _text(value)
        elif number == 2:
            kind, elem, shape = _type_proto(_view(value))
    return ValueInfo(name=name, kind=kind, elem_type=elem, shape=shape)


def _type_proto(buf: memoryview) -> tuple[str, str | None, tuple[Dim, ...] | None]:
    kinds = {4: "sequence", 5: "map", 8: "sparse_tensor", 9: "optional"}
    for number, _, value in fields(buf):
        if number == 1:  # tensor_type
            elem: str | None = None
            shape: tuple[Dim, ...] | None = None
            for n2, _, v2 in fields(_view(value)):
                if n2 == 1:
                    elem = ELEM_TYPES.get(_int(v2), f"type {_int(v2)}")
                elif n2 == 2:
                    shape = _shape(_view(v2))
            return "tensor", elem, shape
        if number in kinds:
            return kinds[number], None, None
    return "unknown", None, None


def _shape(buf: memoryview) -> tuple[Dim, ...]:
    dims: list[Dim] = []
    for number, _, value in fields(buf):
        if number != 1:
            continue
        dim: Dim = None
        for n2, _, v2 in fields(_view(value)):
            if n2 == 1:
                dim = _int(v2)
            elif n2 == 2:
                dim = _text(v2) or None
        dims.append(dim)
    return tuple(dims)


def _node(buf: memoryview) -> Node:
    inputs: list[str] = []
    outputs: list[str] = []
    name = op_type = domain = ""
    attrs: dict[str, int] = {}
    for number, _, value in fields(buf):
        if number == 1:
            inputs.append(_text(value))
        elif number == 2:
            outputs.append(_text(value))
        elif number == 3:
            name = _text(value)
        elif number == 4:
            op_type = _text(value)
        elif number == 7:
            domain = _text(value)
        elif number == 5:
            attr_name = ""
            attr_int: int | None = None
            for n2, _, v2 in fields(_view(value)):
                if n2 == 1:
                    attr_name = _text(v2)
                elif n2 == 3:
                    attr_int = _int(v2)
            if attr_int is not None:
                attrs[attr_name] = attr_int
    return Node(
        op_type=op_type,
        domain=domain,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        name=name,
        int_attrs=attrs,
    )


def _tensor(buf: memoryview) -> tuple[str, tuple[int, ...], bool]:
    dims: list[int] = []
    name = ""
    external = False
    for number, wire, value in fields(buf):
        if number == 1:
            dims.extend(_ints(wire, value))
        elif number == 8:
            name = _text(value)
        elif number == 14 and isinstance(value, int):
            external = value == 1
    return name, tuple(dims), external


def parse_model(data: bytes | memoryview | mmap.mmap, path: str = "") -> ModelInfo:
    """Read a serialised ModelProto (bytes) into a :class:`ModelInfo`."""
    buf = memoryview(data)
    ir_version: int | None = None
    opsets: dict[str, int] = {}
    producer = ""
    doc = ""
    metadata: dict[str, str] = {}
    graph: memoryview | None = None
    for number, _, value in fields(buf):
        if number == 1:
            ir_version = _int(value)
        elif number == 2:
            producer = _text(value)
        elif number == 6:
            doc = _text(value)
        elif number == 7:
            graph = _view(value)
        elif number == 8:
            domain, version = "", 0
            for n2, _, v2 in fields(_view(value)):
                if n2 == 1:
                    domain = _text(v2)
                elif n2 == 2:
                    version = _int(v2)
            opsets[domain or "ai.onnx"] = version
        elif number == 14:
            key = val = ""
            for n2, _, v2 in fields(_view(value)):
                if n2 == 1:
                    key = _text(v2)
                elif n2 == 2:
                    val = _text(v2)
            metadata[key] = val
    if graph is None or ir_version is None:
        raise ModelReadError("no graph or no IR version: not an ONNX model")
    nodes: list[Node] = []
    declared_inputs: list[ValueInfo] = []
    outputs: list[ValueInfo] = []
    value_info: dict[str, ValueInfo] = {}
    initializers: dict[str, tuple[int, ...]] = {}
    external = False
    for number, _, value in fields(graph):
        if number == 1:
            nodes.append(_node(_view(value)))
        elif number == 5:
            name, dims, is_external = _tensor(_view(value))
            initializers[name] = dims
            external = external or is_external
        elif number == 11:
            declared_inputs.append(_value_info(_view(value)))
        elif number == 12:
            outputs.append(_value_info(_view(value)))
        elif number == 13:
            info = _value_info(_view(value))
            value_info[info.name] = info
    inputs = tuple(item for item in declared_inputs if item.name not in initializers)
    return ModelInfo(
        path=path,
        size_bytes=len(buf),
        ir_version=ir_version,
        opsets=opsets,
        producer=producer,
        inputs=inputs,
        outputs=tuple(outputs),
        nodes=tuple(nodes),
        initializers=initializers,
        value_info=value_info,
        external_data=external,
        doc=doc,
        metadata=metadata,
    )


def read_model(path: str | Path) -> ModelInfo:
    """Read a model file (memory-mapped: initializer bytes are never copied)."""
    file = Path(path)
    problem: str | None = None
    try:
        with open_regular_file(file) as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                raise ModelReadError("the file is empty")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    return parse_model(view, str(file))
                except ModelReadError as error:
                    # Keep only the words: the traceback's frames hold views into the mapping,
                    # which could not be closed while they live.
                    problem = str(error)
                finally:
                    view.release()
    except OSError as error:
        raise ModelReadError(f"cannot read {file}: {error}") from error
    raise ModelReadError(problem or "unreadable model")
