"""The bundled ONNX Runtime release matrix: sourced rows, lookups and recommendations."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from fallback_doctor.core.readers.knowledge.ort_matrix import (
    all_requirements,
    ort_requirements,
    ort_versions_for_cuda_major,
    release_tuple,
)
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version


def test_every_row_has_sources_and_consistent_majors() -> None:
    raw = json.loads(
        resources.files("fallback_doctor.resources").joinpath("compat/ort_releases.json").read_text("utf-8")
    )
    assert raw["schema"] == 1
    rows = all_requirements()
    assert len(rows) == len(raw["releases"]) >= 20
    for row in rows:
        assert row.sources and all(source.strip() for source in row.sources), row.release
        assert row.status
        assert int(row.cuda_build.split(".")[0]) == row.cuda_major, row.release
        assert row.cudnn_major in (8, 9)
        key = tuple(int(part) for part in row.release.split("."))
        for entry in row.pypi_versions:
            assert Version(entry.version).release[: len(key)] == key, entry.version


@pytest.mark.parametrize(
    ("version", "release", "cuda", "cudnn"),
    [
        ("1.10.0", "1.10", 11, 8),
        ("1.17.1", "1.17", 11, 8),
        ("1.18.0", "1.18.0", 11, 8),
        ("1.18.1", "1.18.1", 11, 8),
        ("1.19.2", "1.19", 12, 9),
        ("1.23.2", "1.23", 12, 9),
        ("1.26.0", "1.26", 12, 9),
        ("1.27.0", "1.27", 13, 9),
        ("1.31.1", "1.31", 13, 9),
        ("1.24.0.dev20250101001", "1.24", 12, 9),  # nightly
        ("1.22.0+cu122", "1.22", 12, 9),
    ],
)
def test_lookups(version: str, release: str, cuda: int, cudnn: int) -> None:
    row = ort_requirements(version)
    assert row is not None
    assert (row.release, row.cuda_major, row.cudnn_major) == (release, cuda, cudnn)


def test_what_the_matrix_does_not_know_is_unknown() -> None:
    for version in ("1.9.0", "1.32.0", "2.0", "garbage", "", "1"):
        assert ort_requirements(version) is None


def test_lazy_cudnn_and_extras() -> None:
    assert ort_requirements("1.28.0").cudnn_loaded_lazily  # type: ignore[union-attr]
    assert not ort_requirements("1.27.0").cudnn_loaded_lazily  # type: ignore[union-attr]
    assert ort_requirements("1.27.0").cuda_extras is False  # type: ignore[union-attr]
    assert ort_requirements("1.26.0").cuda_extras is True  # type: ignore[union-attr]
    assert ort_requirements("1.20.2").cuda_extras is None  # type: ignore[union-attr]
    assert ort_requirements("1.23.2").tensorrt_major == 10  # type: ignore[union-attr]


def test_versions_for_a_cuda_major_newest_first() -> None:
    assert ort_versions_for_cuda_major(13)[0] == "1.31.1"
    assert ort_versions_for_cuda_major(12)[0] == "1.26.0"
    assert ort_versions_for_cuda_major(11)[0] == "1.18.1"
    assert ort_versions_for_cuda_major(10) == ()
    for major in (11, 12, 13):
        found = [Version(v) for v in ort_versions_for_cuda_major(major)]
        assert found == sorted(found, reverse=True)
        assert all(ort_requirements(str(v)).cuda_major == major for v in found)  # type: ignore[union-attr]


def test_the_python_floor_is_respected() -> None:
    assert ort_versions_for_cuda_major(12, python_version="3.10.12")[0] == "1.24.1"
    assert ort_versions_for_cuda_major(12, python_version="3.11.9")[0] == "1.26.0"
    assert ort_versions_for_cuda_major(13, python_version="3.10.12") == ()
    # releases without a Requires-Python field are not excluded on a guess
    assert "1.20.2" in ort_versions_for_cuda_major(12, python_version="3.8.18")


@given(st.text(max_size=40))
def test_lookup_never_raises(text: str) -> None:
    row = ort_requirements(text)
    assert row is None or row.cuda_major in (11, 12, 13)


@given(
    minor=st.integers(min_value=10, max_value=31),
    patch=st.integers(min_value=0, max_value=9),
    suffix=st.sampled_from(["", ".dev20240101", "rc1", "+local", ".post1"]),
)
def test_a_known_line_always_resolves_to_its_own_row(minor: int, patch: int, suffix: str) -> None:
    version = f"1.{minor}.{patch}{suffix}"
    row = ort_requirements(version)
    if minor == 18 and patch > 1:
        assert row is None or row.release.startswith("1.18")
        return
    assert row is not None
    assert release_tuple(version)[: len(row.release.split("."))] == tuple(  # type: ignore[index]
        int(part) for part in row.release.split(".")
    )
