"""Fixtures for the driver/device/native tests: compiled fake NVIDIA libraries, a child runner."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[2] / "fakes"
sys.path.insert(0, str(FAKES))

import fakebuild  # noqa: E402

Builder = Callable[..., Path]


@pytest.fixture(scope="session")
def build_fake(tmp_path_factory: pytest.TempPathFactory) -> Builder:
    """``build_fake(key, source, file_name, defines, links)`` -> the directory holding it.

    Each key is compiled once per session into its own directory, so that directory can
    go on LD_LIBRARY_PATH alone.
    """
    if not fakebuild.gcc_available():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    made: dict[str, Path] = {}

    def build(
        key: str,
        source: str,
        file_name: str,
        defines: Mapping[str, object] | None = None,
        links: Sequence[str] = (),
    ) -> Path:
        if key not in made:
            directory = tmp_path_factory.mktemp(key)
            fakebuild.compile_library(source, directory, file_name, defines, links)
            made[key] = directory
        return made[key]

    return build


@pytest.fixture(scope="session")
def fake_nvml(build_fake: Builder) -> Callable[..., Path]:
    """A fake libnvidia-ml.so.1 (as libnvidia-ml.so.<driver version> plus the soname link)."""

    def make(key: str, driver_version: str = "580.65.06", **defines: object) -> Path:
        return build_fake(
            f"nvml-{key}",
            "fake_libnvidia_ml.c",
            f"libnvidia-ml.so.{driver_version}",
            {"FAKE_DRIVER_VERSION": driver_version, **defines},
            links=("libnvidia-ml.so.1",),
        )

    return make


@pytest.fixture(scope="session")
def fake_libcuda(build_fake: Builder) -> Callable[..., Path]:
    """A fake libcuda.so.1 with the given FAKE_* defines."""

    def make(key: str, **defines: object) -> Path:
        return build_fake(
            f"cuda-{key}", "fake_libcuda.c", "libcuda.so.580.65.06", defines, links=("libcuda.so.1",)
        )

    return make
