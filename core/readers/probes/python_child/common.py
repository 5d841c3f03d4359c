"""What every part of the Python probe child names: GPU providers, numpy types, the model error."""

from __future__ import annotations

from typing import Dict, List, Optional, TypedDict

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


class Request(TypedDict, total=False):
    """The parent's ProbeRequest as JSON (core/readers/inference/result.py ``to_json``): what this
    child is asked to do. Every key may be missing (an older parent): readers give the default."""

    model: str
    runs: int
    steady: bool
    warmup: int
    dims: Dict[str, int]
    default_dim: int
    shapes: Dict[str, List[int]]
    input_ranges: Dict[str, List[int]]
    providers: List[str]
    cpu_baseline: bool
    gpu_retry: bool
    strict: bool
    strategy: str
    threads: int
    nice: int
    tolerance_abs: float
    tolerance_rel: float
    baseline_dir: Optional[str]
    seed: int
    trt_cache_dir: Optional[str]
    selection: Optional[str]
    test_mode: Optional[str]
