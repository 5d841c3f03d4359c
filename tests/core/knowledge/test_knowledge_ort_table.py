"""The bundled ONNX Runtime table covers every onnxruntime-gpu release from 1.14 to the newest.

The real wheels are checked in tests/scenarios/test_scenario_compat_wheels.py; this checks the
table itself: every line present, every PyPI release on its line, every row sourced, and a
minimum driver on Linux and Windows for every CUDA major a row needs.
"""

from __future__ import annotations

from fallback_doctor.core.readers.knowledge.driver_matrix import min_driver_for_cuda
from fallback_doctor.core.readers.knowledge.ort_matrix import (
    all_requirements,
    newest_gpu_release,
    ort_requirements,
    release_tuple,
)


def _lines() -> list[tuple[int, int]]:
    newest = release_tuple(newest_gpu_release())
    assert newest is not None
    return [(1, minor) for minor in range(14, newest[1] + 1)]


def test_every_release_line_from_114_to_the_newest_has_a_row():
    for major, minor in _lines():
        row = ort_requirements(f"{major}.{minor}.0")
        assert row is not None, f"{major}.{minor}"
        assert row.sources and row.status, row.release
        assert row.pypi_releases, f"{row.release}: no PyPI release listed"


def test_every_pypi_release_lies_on_its_own_row():
    for row in all_requirements():
        for version in row.pypi_releases:
            assert ort_requirements(version) == row, version


def test_lazy_cudnn_from_128_and_cuda_majors_by_era():
    for major, minor in _lines():
        row = ort_requirements(f"{major}.{minor}.0")
        assert row is not None
        assert row.cudnn_loaded_lazily == (minor >= 28), row.release
        expected = 11 if minor <= 18 else 12 if minor <= 26 else 13
        assert row.cuda_major == expected, row.release
        assert row.cudnn_major == (8 if minor <= 18 else 9), row.release


def test_every_cuda_major_has_a_minimum_driver_on_linux_and_windows():
    for row in all_requirements():
        for os_name in ("linux", "windows"):
            requirement = min_driver_for_cuda(row.cuda_major, os_name)
            assert requirement is not None, (row.release, os_name)
