"""The inputs the test inference feeds a model: a concrete shape for every declared input, and why.

The parent decides every shape once, from the model's own signature (core/readers/inference/model_info.py),
so both probes (the Python child and the C-API child) feed the same tensors and the report can say
which value each dynamic dimension got and where it came from:

- ``given``: the technician's ``--dim NAME=VALUE`` (or the wizard's field);
- ``model``: the description file beside the model (``encoder.json`` for the bundled encoder);
- ``by_name``: a sensible value read from the name (batch 1, sequence 128, image side 224, channels 3;
  model_info.default_dim);
- ``unnamed``: a dimension the model leaves without a name or a value gets
  :data:`UNNAMED_DIM_DEFAULT` (1) unless ``--dim INPUT:AXIS=VALUE`` names it.

A shape whose tensors would need more than :data:`MAX_INPUT_BYTES` is refused before any process
starts (a hostile or mistyped dimension must not make the probe allocate the machine's memory).
By hand: ``python -c "import onnxruntime as o; print([(i.name, i.shape) for i in
o.InferenceSession('model.onnx').get_inputs()])"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fallback_doctor.core.readers.inference.model_info import ModelInfo, default_dim

UNNAMED_DIM_DEFAULT = 1
"""The value of a dimension that has neither a name nor a fixed value in the model."""
MAX_INPUT_BYTES = 1 << 30
"""The most the generated inputs of one inference may take together (1 GiB)."""
MAX_DIM = 1 << 31
"""No dimension value may be larger than this (it would not fit a 32-bit index in most kernels)."""

ELEM_BYTES: dict[str, int] = {
    "float32": 4,
    "float16": 2,
    "float64": 8,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "bool": 1,
}
SOURCES = ("given", "model", "by_name", "unnamed")


class InputsTooLargeError(ValueError):
    """The chosen dimensions would make inputs larger than the probe may allocate."""


@dataclass(frozen=True)
class DimChoice:
    """One dynamic dimension: its name (or ``input:axis`` when it has none), the value, where it came from."""

    name: str
    value: int
    source: str
    """One of :data:`SOURCES`."""

    def describe(self) -> str:
        """``batch=16``."""
        return f"{self.name}={self.value}"


@dataclass(frozen=True)
class InputPlan:
    """A concrete shape per input, the dynamic dimensions chosen, and the bytes they take."""

    shapes: dict[str, tuple[int, ...]]
    choices: tuple[DimChoice, ...]
    total_bytes: int


def unknown_dim_names(info: ModelInfo, given: Mapping[str, int]) -> list[str]:
    """The names in ``given`` that are neither a dynamic dimension of the model nor ``input:axis``."""
    known = set(info.symbolic_dims) | set(_unnamed_keys(info))
    return [name for name in given if name not in known]


def dim_names(info: ModelInfo) -> list[str]:
    """Every dynamic dimension a technician can set: the symbolic names, then ``input:axis``."""
    return [*info.symbolic_dims, *_unnamed_keys(info)]


def _unnamed_keys(info: ModelInfo) -> list[str]:
    return [
        f"{value.name}:{axis}"
        for value in info.inputs
        for axis, dim in enumerate(value.shape or ())
        if dim is None or (isinstance(dim, int) and dim < 0)
    ]


def plan_inputs(
    info: ModelInfo, given: Mapping[str, int], defaults: Mapping[str, int] | None = None
) -> InputPlan:
    """Shapes for every input: ``given`` first, then ``defaults`` (the model's description), then by name.

    Raises :class:`InputsTooLargeError` naming the input and the dimensions when the inputs would exceed
    :data:`MAX_INPUT_BYTES` or a dimension :data:`MAX_DIM`.
    """
    choices: dict[str, DimChoice] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    total = 0
    for value in info.inputs:
        shape: list[int] = []
        for axis, dim in enumerate(value.shape or ()):
            if isinstance(dim, int) and dim >= 0:
                shape.append(dim)
                continue
            key = dim if isinstance(dim, str) else f"{value.name}:{axis}"
            if key not in choices:
                choices[key] = _choose(key, isinstance(dim, str), given, defaults)
            shape.append(choices[key].value)
        shapes[value.name] = tuple(shape)
        total += _bytes(value.name, value.elem_type, shape, info.path)
    if total > MAX_INPUT_BYTES:
        raise InputsTooLargeError(
            f"{info.path}: its inputs would take {total / 2**30:.1f} GiB with "
            f"{_dims_text(choices) or 'its fixed dimensions'}; the test inference allocates at most "
            f"{MAX_INPUT_BYTES // 2**30} GiB (set smaller values with --dim NAME=VALUE)"
        )
    return InputPlan(shapes=shapes, choices=tuple(choices.values()), total_bytes=total)


def _choose(key: str, named: bool, given: Mapping[str, int], defaults: Mapping[str, int] | None) -> DimChoice:
    if key in given:
        return DimChoice(key, int(given[key]), "given")
    if defaults and key in defaults:
        return DimChoice(key, int(defaults[key]), "model")
    if named:
        return DimChoice(key, default_dim(key), "by_name")
    return DimChoice(key, UNNAMED_DIM_DEFAULT, "unnamed")


def _bytes(name: str, elem_type: str | None, shape: list[int], path: str) -> int:
    count = 1
    for dim in shape:
        if dim > MAX_DIM:
            raise InputsTooLargeError(
                f"{path}: input {name!r} would have a dimension of {dim}, more than {MAX_DIM} "
                "(set a smaller value with --dim NAME=VALUE)"
            )
        count *= dim
    return count * ELEM_BYTES.get(elem_type or "", 8)


def _dims_text(choices: Mapping[str, DimChoice]) -> str:
    return ", ".join(choice.describe() for choice in choices.values())
