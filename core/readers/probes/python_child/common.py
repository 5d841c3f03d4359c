"""What every part of the Python probe child names: GPU providers, numpy types, the model error."""

from __future__ import annotations

_GPU_PROVIDERS = (
    "CUDAExecutionProvider",
    "TensorrtExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "DmlExecutionProvider",
)
_NUMPY_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int64)": "int64",
    "tensor(int32)": "int32",
    "tensor(int16)": "int16",
    "tensor(int8)": "int8",
    "tensor(uint64)": "uint64",
    "tensor(uint32)": "uint32",
    "tensor(uint16)": "uint16",
    "tensor(uint8)": "uint8",
    "tensor(bool)": "bool",
}


class UnusableModelError(Exception):
    """The model cannot be run with generated inputs (a string input, a sequence, ...)."""
