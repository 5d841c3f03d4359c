"""Every reader of a file the tool is given refuses a special file at once and reads a bound,
whoever put it there (issue 28, item 1).

For each reader moved onto core/platform/files.py, or written for issue 28 (the fact cache, the
package listing's .pth and METADATA reading): a FIFO (which a plain ``open()`` waits on
forever), a link to ``/dev/zero`` (which never ends), a directory, and a sparse 2 GB file
(which a reader without a bound takes whole) are put where the file is expected. Each must
answer, a result or an error that names the file, in under 5 s with at most 300 MB of Python
memory (tracemalloc). ``GFD_READER_COUNTS=1`` prints the worst time and memory per class
(docs/hostile-input.md).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")
KINDS = ("fifo", "dev_zero", "directory", "sparse_2gb")
LIMIT_S = 5.0
LIMIT_BYTES = 300 * 1024 * 1024
_WORST: dict[str, tuple[float, int]] = {}


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024**3)


def _ld_cache(path: Path) -> object:
    from fallback_doctor.core.readers.loader.ldcache import read_ld_so_cache

    return read_ld_so_cache(str(path))


def _pe(path: Path) -> object:
    from fallback_doctor.core.readers.loader.pe import read_pe_imports

    return read_pe_imports(str(path))


def _model(path: Path) -> object:
    from fallback_doctor.core.readers.inference.model_info import read_model

    return read_model(path)


def _model_description(path: Path) -> object:
    from fallback_doctor.core.readers.inference.run import model_description

    return model_description(path.with_suffix(".onnx"))


def _recording(path: Path) -> object:
    from fallback_doctor.core.readers.sampling.recordings import load_recording

    return load_recording(path)


def _unit_file(path: Path) -> object:
    from fallback_doctor.core.readers.collect.systemd import read_unit

    limits: list[object] = []
    root = path.parents[3]
    return read_unit("app.service", "", limits, root=str(root)), limits  # type: ignore[arg-type]


def _os_release(path: Path) -> object:
    from fallback_doctor.core.readers.collect.platform import _os_pretty_name

    return _os_pretty_name(path.parents[1])


def _fact_cache(path: Path) -> object:
    from fallback_doctor.core.readers.loader.elf_cache import open_cache

    cache = open_cache(str(path.parent))
    return cache.get("/lib/x.so", (1, 2, 3, 4))


def _bundle(path: Path) -> object:
    from fallback_doctor.core.bundle.safe_open import read_members

    return read_members(path)


def _child() -> Any:
    """The package-listing child, loaded by path as the application's interpreter runs it."""
    from fallback_doctor.core.readers.collect.early import python_env_script

    spec = importlib.util.spec_from_file_location("python_env_child_readers", python_env_script())
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _metadata(path: Path) -> object:
    return _child().scan_distributions([str(path.parents[1])])


def _pth(path: Path) -> object:
    return _child()._pth_paths(str(path.parent), [])


READERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "ld.so.cache": ("etc/ld.so.cache", _ld_cache),
    "PE imports": ("lib/provider.dll", _pe),
    "ONNX model": ("model/app.onnx", _model),
    "model description": ("model/app.json", _model_description),
    "recording": ("rec/samples.csv", _recording),
    "unit file": ("root/etc/systemd/system/app.service", _unit_file),
    "os-release": ("root/etc/os-release", _os_release),
    "fact cache": ("cache/elf-dynamic.json", _fact_cache),
    "bundle": ("out/bundle.zip", _bundle),
    "package METADATA": ("site/pkg-1.0.dist-info/METADATA", _metadata),
    ".pth file": ("site/zz.pth", _pth),
}
_ANSWERS = (OSError, ValueError)
"""A refusal: an OSError naming the file, or the reader's own ValueError (not a PE file …)."""


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_answers_at_once_within_its_bound(tmp_path: Path, reader: str, kind: str) -> None:
    relative, read = READERS[reader]
    if reader == "fact cache":
        (tmp_path / "cache").mkdir(mode=0o700)
    path = tmp_path / relative
    _plant(path, kind)
    tracemalloc.start()
    started = time.monotonic()
    try:
        read(path)
    except _ANSWERS:
        pass  # refused, with the file's name: what a special or huge file must get
    finally:
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    worst = _WORST.get(kind, (0.0, 0))
    _WORST[kind] = (max(worst[0], seconds), max(worst[1], peak))
    assert seconds < LIMIT_S, (reader, kind, seconds)
    assert peak < LIMIT_BYTES, (reader, kind, peak)


def test_print_the_worst_per_class() -> None:
    if os.environ.get("GFD_READER_COUNTS"):
        for kind, (seconds, peak) in sorted(_WORST.items()):
            print(f"{kind}: worst {seconds * 1000:.0f} ms, {peak / 1024 / 1024:.1f} MiB")
