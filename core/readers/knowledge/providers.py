"""Execution provider names: the provider library file keys and the order ONNX Runtime lists them in.

Shared by the Python package reader (core/readers/collect/onnxruntime.py) and the library-folder reader
(core/readers/targets/libpath.py), which sit in different layers; the data is ONNX Runtime's own
(onnxruntime/core/graph/constants.h, the providers' library names).
"""

from __future__ import annotations

PROVIDER_KEYS: dict[str, str] = {
    "tensorrt": "TensorrtExecutionProvider",
    "nv_tensorrt_rtx": "NvTensorRTRTXExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "migraphx": "MIGraphXExecutionProvider",
    "rocm": "ROCMExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
    "dnnl": "DnnlExecutionProvider",
    "cann": "CANNExecutionProvider",
    "vitisai": "VitisAIExecutionProvider",
    "qnn": "QNNExecutionProvider",
}
"""libonnxruntime_providers_<key>.so / onnxruntime_providers_<key>.dll -> provider name."""

PROVIDER_ORDER: tuple[str, ...] = (
    "TensorrtExecutionProvider",
    "NvTensorRTRTXExecutionProvider",
    "CUDAExecutionProvider",
    "MIGraphXExecutionProvider",
    "ROCMExecutionProvider",
    "OpenVINOExecutionProvider",
    "DnnlExecutionProvider",
    "VitisAIExecutionProvider",
    "QNNExecutionProvider",
    "CANNExecutionProvider",
    "DmlExecutionProvider",
    "AzureExecutionProvider",
    "CPUExecutionProvider",
)
"""The order onnxruntime.get_available_providers() lists them in (Azure just before CPU, CPU last:
kProvidersInPriorityOrder in onnxruntime/core/graph/constants.h)."""
