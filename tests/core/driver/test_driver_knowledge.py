"""The bundled driver and architecture matrices, and the version comparison."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from fallback_doctor.core.readers.knowledge.arch_matrix import (
    arch_support,
    builds_with_sass,
    gpu_family,
    match_image,
    platform_key,
)
from fallback_doctor.core.readers.knowledge.driver_matrix import (
    cuda_version_text,
    driver_at_least,
    min_driver_for_cuda,
    parse_driver_version,
    toolkit_driver,
)
from hypothesis import given
from hypothesis import strategies as st


def _json(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads(
        resources.files("fallback_doctor.resources").joinpath("compat", name).read_text("utf-8")
    )


@pytest.mark.parametrize(
    ("major", "os_name", "minimum"),
    [
        (13, "linux", "580.65.06"),
        (12, "linux", "525.60.13"),
        (12, "win32", "527.41"),
        (11, "Linux", "450.80.02"),
        (11, "Windows", "452.39"),
    ],
)
def test_minimum_driver_per_cuda_major(major: int, os_name: str, minimum: str) -> None:
    requirement = min_driver_for_cuda(major, os_name)
    assert requirement is not None and requirement.minimum == minimum and requirement.source


def test_unknown_major_and_toolkit_rows() -> None:
    assert min_driver_for_cuda(10, "linux") is None
    assert toolkit_driver("12.8", "linux").minimum == "570.26"  # type: ignore[union-attr]
    assert toolkit_driver("13.0", "windows") is None  # NVIDIA lists N/A


def test_driver_comparison_uses_integer_tuples() -> None:
    assert parse_driver_version("580.65.06") == (580, 65, 6)
    assert parse_driver_version("527.41") == (527, 41, 0)
    assert driver_at_least("527.5", "527.41") is False  # as strings "527.5" > "527.41"
    assert driver_at_least("527.41", "527.41") is True
    assert driver_at_least("535.104.05", "525.60.13") is True
    assert driver_at_least("32.0.15.7657", "527.41") is None
    assert cuda_version_text(12020) == "12.2" and cuda_version_text(0) is None


@given(
    st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 99)),
    st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 99)),
)
def test_version_order_matches_tuple_order(a: tuple[int, int, int], b: tuple[int, int, int]) -> None:
    text_a, text_b = "{}.{}.{:02d}".format(*a), "{}.{}.{:02d}".format(*b)
    assert parse_driver_version(text_a) == a
    assert driver_at_least(text_a, text_b) is (a >= b)


@given(st.text(max_size=30))
def test_parse_never_raises(text: str) -> None:
    parsed = parse_driver_version(text)
    assert parsed is None or len(parsed) == 3


def test_every_row_has_a_source() -> None:
    for row in _json("cuda_driver.json")["minimum_driver"] + _json("cuda_driver.json")["toolkit_driver"]:
        assert row["source"]
    for row in _json("arch.json")["ort_builds"] + _json("arch.json")["cuda_majors"]:
        assert row["source"]


_COLUMNS = {
    "ort_1.17-1.20_linux": ("1.18.0", "linux_x64", 11),
    "ort_1.21-1.26_linux": ("1.22.0", "linux_x64", 12),
    "ort_1.22-1.26_win": ("1.24.0", "windows_x64", 12),
    "ort_1.27-1.28_linux": ("1.27.0", "linux_x64", 13),
    "ort_1.29-1.31_linux_x64": ("1.30.0", "linux_x64", 13),
    "ort_1.31_win": ("1.31.1", "windows_x64", 13),
    "ort_1.29-1.31_linux_aarch64": ("1.29.0", "linux_aarch64", 13),
}


def test_arch_rules_reproduce_the_reference_matrix() -> None:
    matrix = _json("arch.json")["expected_matrix"]
    checked = 0
    for cc_text, cells in matrix["rows"].items():
        first = cc_text.split("/")[0]
        major = first.split(".")[0]
        for option in cc_text.split("/"):
            cc_option = option if "." in option else f"{major}.{option}"
            cc = (int(cc_option.split(".")[0]), int(cc_option.split(".")[1]))
            for column, cell in zip(matrix["columns"], cells, strict=True):
                version, platform, cuda_major = _COLUMNS[column]
                verdict = arch_support(cc, version, cuda_major, platform=platform)
                got = {"sass": "Y", "ptx_jit": "JIT", "none": "N"}[verdict.image]
                assert got == cell.split()[0], (cc, column, verdict.reason)
                checked += 1
    assert checked > 100


def test_verdicts_and_suggestions() -> None:
    pascal = arch_support((6, 1), "1.31.1", 13)
    assert pascal.supported is False and pascal.cuda_major_ok is False
    suggestion = builds_with_sass((6, 1))[0]
    assert (suggestion.ort_max, suggestion.cuda_major, suggestion.kernel) == ("1.26", 12, "sm_60")
    hopper_old = arch_support((9, 0), "1.18.0", 11, driver_cuda_version=11040)
    assert hopper_old.image == "ptx_jit" and hopper_old.ptx_needs_cuda == "11.8"
    assert hopper_old.supported is False  # a CUDA 11.4 driver cannot JIT PTX from 11.8
    assert arch_support((9, 0), "1.18.0", 11, driver_cuda_version=12020).supported is True
    assert arch_support((8, 6), "1.99.0", 13).supported is None
    assert arch_support((8, 6), None, 13).supported is True
    assert match_image((9, 0), ["sm_90a"], []) == ("sass", "sm_90a")
    assert match_image((9, 1), ["sm_90a"], []) == ("none", None)
    assert platform_key("Windows", "AMD64") == "windows_x64"
    assert platform_key("Linux", "aarch64") == "linux_aarch64"
    assert gpu_family((8, 6)) is not None and gpu_family((4, 0)) is None
