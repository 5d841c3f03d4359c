"""Which CUDA major a library file name or folder names."""

from __future__ import annotations

import pytest
from fallback_doctor.core.readers.loader.names import cuda_major_of_name, cuda_major_of_path
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("name", "major"),
    [
        ("libcudart.so.13", 13),
        ("libcudart.so.12.9.79", 12),
        ("libcudart.so.11.0", 11),
        ("cudart64_110.dll", 11),
        ("cublasLt64_12.dll", 12),
        ("libnvJitLink.so.13", 13),
        ("nvrtc64_130_0.dll", 13),
        ("libcufft.so.11", 12),
        ("libcufft.so.12", 13),
        ("libcufft.so.10", 11),
        # cuRAND keeps .so.10 everywhere: only the full version tells (PyPI nvidia-curand*)
        ("libcurand.so.10", None),
        ("libcurand.so.10.4.5.25", 13),
        ("libcurand.so.10.3.10.19", 12),
        ("libcurand.so.10.3.1.50", 12),
        ("libcurand.so.10.3.0.86", 11),
        ("libcurand.so.10.2.10.91", 11),
        ("libcudnn.so.9", None),
        ("libnvinfer.so.10", None),
        ("libc.so.6", None),
    ],
)
def test_cuda_major_of_name(name: str, major: int | None) -> None:
    assert cuda_major_of_name(name) == major


@pytest.mark.parametrize(
    ("path", "major"),
    [
        ("/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcurand.so.10", 13),
        ("C:\\app\\Lib\\site-packages\\nvidia\\cu13\\bin\\x86_64\\cudart64_13.dll", 13),
        ("/usr/local/cuda-12.4/lib64/libcurand.so.10", 12),
        ("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13", 13),
        ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin\\curand64_10.dll", 12),
        ("/usr/local/cuda/lib64/libcurand.so.10", None),
        ("/venv/site-packages/nvidia/curand/lib/libcurand.so.10", None),
        ("/usr/lib/x86_64-linux-gnu/libcurand.so.10", None),
    ],
)
def test_cuda_major_of_path(path: str, major: int | None) -> None:
    assert cuda_major_of_path(path) == major


@given(st.text(max_size=80))
def test_never_raises(text: str) -> None:
    major = cuda_major_of_name(text)
    assert major is None or isinstance(major, int)
    cuda_major_of_path(text)
