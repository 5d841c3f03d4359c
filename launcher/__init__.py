"""GPU Fallback Doctor: why ONNX Runtime runs on the CPU when it was asked for the GPU."""

__version__ = "0.1.0"
