"""Model inputs and outputs through the C API: type infos, generated input tensors, runs, outputs."""

from __future__ import annotations

import array
import ctypes
import random
import struct
from typing import Any

from .api import (
    ELEMENT_TYPES,
    ONNX_TYPE_TENSOR,
    Api,
    Declared,
    OrtArenaAllocator,
    OrtMemTypeDefault,
    Output,
    P,
    c_strings,
)

# --- model metadata and inputs ------------------------------------------------------------------


def tensor_info(api: Api, type_info: ctypes.c_void_p) -> tuple[int, list[int | str | None]]:
    """(element type, dims with symbolic names or None for unknown) of a tensor type info."""
    onnx_type = ctypes.c_int(0)
    api.call("GetOnnxTypeFromTypeInfo", type_info, ctypes.byref(onnx_type))
    if onnx_type.value != ONNX_TYPE_TENSOR:
        raise ValueError("not a tensor (ONNXType %d)" % onnx_type.value)
    info = P()
    api.call("CastTypeInfoToTensorInfo", type_info, ctypes.byref(info))  # owned by type_info
    element = ctypes.c_int(0)
    api.call("GetTensorElementType", info, ctypes.byref(element))
    count = ctypes.c_size_t(0)
    api.call("GetDimensionsCount", info, ctypes.byref(count))
    dims = (ctypes.c_int64 * max(count.value, 1))()
    api.call("GetDimensions", info, dims, count.value)
    symbols = (ctypes.c_char_p * max(count.value, 1))()
    api.call("GetSymbolicDimensions", info, symbols, count.value)
    shape: list[int | str | None] = []
    for i in range(count.value):
        if dims[i] >= 0:
            shape.append(int(dims[i]))
        else:
            raw = symbols[i]
            symbol = raw.decode("utf-8", "replace") if raw else ""
            shape.append(symbol or None)
    return element.value, shape


def session_io(api: Api, session: ctypes.c_void_p) -> tuple[list[Declared], list[Declared]]:
    """Names, element types and declared shapes of a session's inputs and outputs."""
    allocator = P()
    api.call("GetAllocatorWithDefaultOptions", ctypes.byref(allocator))
    result = []
    for kind in ("Input", "Output"):
        count = ctypes.c_size_t(0)
        api.call("SessionGet%sCount" % kind, session, ctypes.byref(count))
        items = []
        for index in range(count.value):
            name_pointer = P()
            api.call("SessionGet%sName" % kind, session, index, allocator, ctypes.byref(name_pointer))
            name = ctypes.string_at(name_pointer).decode("utf-8", "replace")
            api.call("AllocatorFree", allocator, name_pointer)
            type_info = P()
            api.call("SessionGet%sTypeInfo" % kind, session, index, ctypes.byref(type_info))
            item: Declared
            try:
                element, shape = tensor_info(api, type_info)
                item = {
                    "name": name,
                    "element": element,
                    "shape": shape,
                    "dtype": ELEMENT_TYPES.get(element, ("type %d" % element, "", 0))[0],
                }
            except ValueError as error:
                item = {"name": name, "element": 0, "shape": [], "dtype": "non-tensor", "error": str(error)}
            finally:
                api.release("TypeInfo", type_info)
            items.append(item)
        result.append(items)
    return result[0], result[1]


def resolve_shape(
    shape: list[int | str | None], dims: dict[str, int], default_dim: int, planned: object = None
) -> list[int]:
    """Replace symbolic and unknown dimensions: the parent's ``planned`` shape where it has this rank,
    else by name from ``dims``, else ``default_dim``."""
    if isinstance(planned, list) and len(planned) == len(shape):
        return [int(dim) for dim in planned]
    resolved = []
    for dim in shape:
        if isinstance(dim, int):
            resolved.append(dim)
        elif isinstance(dim, str) and dim in dims:
            resolved.append(int(dims[dim]))
        else:
            resolved.append(int(default_dim))
    return resolved


def make_data(element: int, count: int, rng: random.Random) -> bytes:
    """Deterministic input bytes: floats in [-1, 1), integers 0 or 1 (valid ids and indices), bools."""
    name, code, _size = ELEMENT_TYPES[element]
    if name.startswith("float"):
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
        if code == "e":
            return struct.pack("<%de" % count, *values)
        return array.array(code, values).tobytes()
    values_i = [rng.randrange(2) for _ in range(count)]
    return array.array(code, values_i).tobytes()


def product(values: list[int]) -> int:
    """The product of a list of ints (1 for an empty one)."""
    total = 1
    for value in values:
        total *= value
    return total


# --- sessions and runs --------------------------------------------------------------------------


class Inputs:
    """OrtValues over buffers we own, for one Run."""

    def __init__(self, api: Api, inputs: list[Declared], buffers: list[bytes]) -> None:
        self.api = api
        self.names = c_strings([item["name"] for item in inputs])
        self.memory_info = P()
        api.call("CreateCpuMemoryInfo", OrtArenaAllocator, OrtMemTypeDefault, ctypes.byref(self.memory_info))
        self.keep: list[Any] = []
        self.values = (P * max(len(inputs), 1))()
        for index, (item, data) in enumerate(zip(inputs, buffers)):  # noqa: B905 (Python 3.8)
            buffer = ctypes.create_string_buffer(data, len(data)) if data else ctypes.create_string_buffer(1)
            shape = (ctypes.c_int64 * max(len(item["resolved"]), 1))(*item["resolved"])
            self.keep += [buffer, shape]
            value = P()
            api.call(
                "CreateTensorWithDataAsOrtValue",
                self.memory_info,
                ctypes.cast(buffer, P),
                len(data),
                shape,
                len(item["resolved"]),
                item["element"],
                ctypes.byref(value),
            )
            self.values[index] = value
        self.count = len(inputs)

    def release(self) -> None:
        """ReleaseValue each input, then ReleaseMemoryInfo."""
        for index in range(self.count):
            self.api.release("Value", self.values[index])
        self.api.release("MemoryInfo", self.memory_info)


def run_once(
    api: Api,
    session: ctypes.c_void_p,
    run_options: ctypes.c_void_p,
    inputs: Inputs,
    output_names: list[str],
    keep: bool,
) -> list[Output]:
    """One Run; return the outputs' element types, shapes and bytes when ``keep``, then release them."""
    names = c_strings(output_names)
    outputs = (P * max(len(output_names), 1))()
    api.call(
        "Run",
        session,
        run_options,
        inputs.names,
        inputs.values,
        inputs.count,
        names,
        len(output_names),
        outputs,
    )
    result: list[Output] = []
    try:
        if keep:
            for index, name in enumerate(output_names):
                result.append(read_value(api, name, outputs[index]))
    finally:
        for index in range(len(output_names)):
            api.release("Value", outputs[index])
    return result


def read_value(api: Api, name: str, value: object) -> Output:
    """Element type, shape and raw bytes of an output tensor (GetTensorTypeAndShape, GetTensorMutableData)."""
    info = P()
    api.call("GetTensorTypeAndShape", value, ctypes.byref(info))
    try:
        element = ctypes.c_int(0)
        api.call("GetTensorElementType", info, ctypes.byref(element))
        count = ctypes.c_size_t(0)
        api.call("GetDimensionsCount", info, ctypes.byref(count))
        dims = (ctypes.c_int64 * max(count.value, 1))()
        api.call("GetDimensions", info, dims, count.value)
        elements = ctypes.c_size_t(0)
        api.call("GetTensorShapeElementCount", info, ctypes.byref(elements))
    finally:
        api.release("TensorTypeAndShapeInfo", info)
    dtype, _code, size = ELEMENT_TYPES.get(element.value, ("type %d" % element.value, "", 0))
    data = b""
    if size and elements.value:
        pointer = P()
        api.call("GetTensorMutableData", value, ctypes.byref(pointer))
        data = ctypes.string_at(pointer, elements.value * size)
    return {
        "name": name,
        "element": element.value,
        "dtype": dtype,
        "shape": [int(dims[i]) for i in range(count.value)],
        "data": data,
    }
