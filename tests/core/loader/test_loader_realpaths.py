"""RealPaths answers what os.path.realpath answers, on random trees of folders, files and links."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from fallback_doctor.core.readers.loader.realpaths import RealPaths
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks")

NAMES = st.sampled_from(["a", "b", "lib", "libx.so.1", "libx.so.1.2", "..", "."])
PATHS = st.lists(NAMES, min_size=1, max_size=5).map("/".join)
ENTRIES = st.lists(
    st.tuples(st.sampled_from(["dir", "file", "link", "abslink"]), PATHS, PATHS),
    max_size=12,
)


def _build(root: Path, entries: list[tuple[str, str, str]]) -> None:
    for kind, where, target in entries:
        path = root / where
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir(exist_ok=True)
            elif kind == "file":
                path.write_bytes(b"")
            elif kind == "link":
                path.symlink_to(target)
            else:
                path.symlink_to(root / target)
        except OSError:
            continue  # a name taken by another kind, a path through a file: as on a real disk


@settings(max_examples=150, deadline=None)
@given(ENTRIES, st.lists(PATHS, min_size=1, max_size=6))
def test_the_answers_are_os_path_realpath(entries: list[tuple[str, str, str]], queries: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(os.path.realpath(folder))
        _build(root, entries)
        real = RealPaths()
        for query in queries * 2:  # the second round answers from memory
            path = str(root / query)
            assert real(path) == os.path.realpath(path), path


def test_a_wheel_layout_costs_one_readlink_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudart.so.13.0.96").write_bytes(b"")
    (lib / "libcudart.so.13").symlink_to("libcudart.so.13.0.96")
    (lib / "libcublas.so.13").write_bytes(b"")
    calls: list[str] = []
    original = os.readlink

    def counting(path: str) -> str:
        calls.append(path)
        return original(path)

    real = RealPaths()
    real(str(lib / "libcudart.so.13"))  # the folders once
    monkeypatch.setattr(os, "readlink", counting)
    assert real(str(lib / "libcublas.so.13")) == str(lib / "libcublas.so.13")
    assert calls == [str(lib / "libcublas.so.13")]  # os.path.realpath: one lstat per folder too
    assert real(str(lib / "libcudart.so.13.0.96")) == str(lib / "libcudart.so.13.0.96")
    assert calls == [str(lib / "libcublas.so.13")]  # the link's target was learnt with the link
