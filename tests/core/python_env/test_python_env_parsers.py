"""The text readers: build_and_package_info.py, version_info.py, torch/version.py, version strings."""

from __future__ import annotations

import keyword

import pytest
from fallback_doctor.core.readers.collect.onnxruntime import (
    _major_from_digits,
    cuda_major_of,
    parse_python_assignments,
)
from hypothesis import given
from hypothesis import strategies as st

# As the wheels ship them (onnxruntime-gpu 1.23.2 / 1.31.1 Linux, onnxruntime 1.23.2, 1.31.1 win_amd64).
BUILD_INFO_GPU_1_31_1 = "package_name = 'onnxruntime-gpu'\n__version__ = '1.31.1'\ncuda_version = '13.0'\n"
BUILD_INFO_CPU_1_23_2 = "package_name = 'onnxruntime'\n__version__ = '1.23.2'\n"
VERSION_INFO_WIN_1_31_1 = 'use_cuda = True\ncuda_version = "13.0.88"\ncudnn_version = "9"\nvs2019 = False\n'
# torch/version.py as tools/generate_torch_version.py writes it (pytorch/pytorch).
TORCH_VERSION_PY = (
    "from typing import Optional\n\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
    "__version__ = '2.5.1+cu124'\n"
    "debug = False\n"
    "cuda: Optional[str] = '12.4'\n"
    "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\n"
    "hip: Optional[str] = None\n"
)
# onnxruntime/__init__.py: the literal first, a computed re-assignment later.
ORT_INIT = (
    '"""doc"""\n__version__ = "1.21.0"\n__author__ = "Microsoft"\nif version:\n    __version__ = version\n'
)


def test_real_files() -> None:
    assert parse_python_assignments(BUILD_INFO_GPU_1_31_1) == {
        "package_name": "onnxruntime-gpu",
        "__version__": "1.31.1",
        "cuda_version": "13.0",
    }
    assert "cuda_version" not in parse_python_assignments(BUILD_INFO_CPU_1_23_2)
    assert parse_python_assignments(VERSION_INFO_WIN_1_31_1) == {
        "use_cuda": True,
        "cuda_version": "13.0.88",
        "cudnn_version": "9",
        "vs2019": False,
    }
    torch = parse_python_assignments(TORCH_VERSION_PY)
    assert (torch["__version__"], torch["cuda"], torch["hip"], torch["debug"]) == (
        "2.5.1+cu124",
        "12.4",
        None,
        False,
    )
    assert "__all__" not in torch  # a list: not a simple literal we take
    assert parse_python_assignments(ORT_INIT)["__version__"] == "1.21.0"


def test_odd_lines() -> None:
    text = (
        "cuda_version = '12.2'  # set by the build\n"
        "x == 3\n  indented = 1\nbroken = 'unterminated\ny = f(1)\n"
    )
    assert parse_python_assignments(text) == {"cuda_version": "12.2"}
    assert parse_python_assignments("s = 'a # not a comment'\n") == {"s": "a # not a comment"}


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n)
)
LITERALS = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(st.dictionaries(NAMES, LITERALS, max_size=8), st.booleans())
def test_round_trip_of_generated_files(values: dict[str, object], annotate: bool) -> None:
    lines = [f"{name}{': Optional[str]' if annotate else ''} = {value!r}" for name, value in values.items()]
    assert parse_python_assignments("\n".join(lines) + "\n") == values


@given(st.text(max_size=500))
def test_never_raises(text: str) -> None:
    values = parse_python_assignments(text)
    assert all(value is None or isinstance(value, str | int | float | bool) for value in values.values())


@pytest.mark.parametrize(
    ("text", "major"),
    [
        ("12.2", 12),
        ("13.0", 13),
        ("13.0.88", 13),
        ("9", 9),
        ("11.8", 11),
        (" 12.8", 12),
        ("", None),
        (None, None),
        ("unknown", None),
    ],
)
def test_cuda_major_of(text: str | None, major: int | None) -> None:
    assert cuda_major_of(text) == major


@given(st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=99))
def test_cuda_major_of_any_version(major: int, minor: int) -> None:
    assert cuda_major_of(f"{major}.{minor}") == major


@pytest.mark.parametrize(("digits", "major"), [("110", 11), ("12", 12), ("13", 13), ("10", 10), ("9", 9)])
def test_dll_name_digits(digits: str, major: int) -> None:
    # cudart64_110.dll is CUDA 11.0's runtime; cudart64_12.dll CUDA 12's
    assert _major_from_digits(digits) == major
