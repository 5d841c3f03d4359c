"""The bundled ONNX Runtime table against the real onnxruntime-gpu wheels the index serves.

For each wheel cached on this machine (``~/.cache/gfd-wheels`` and the loader tests' wheel cache;
a few are fetched once with ``pip download --no-deps``, none is committed), the row of its release
must agree with the wheel itself:

- ``onnxruntime/capi/build_and_package_info.py``: ``cuda_version`` (from 1.21) is the row's CUDA
  build and major;
- the CUDA provider's DT_NEEDED (Linux) or imports (Windows): the CUDA major of cuBLAS / cudart,
  cuDNN linked (``libcudnn.so.N``) before 1.28 and opened lazily (not linked) from 1.28;
- the TensorRT provider's DT_NEEDED: ``libnvinfer.so.<row's TensorRT major>``.

Skipped where no wheel is cached (offline machines).
"""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path
from typing import IO

import pytest
from fallback_doctor.core.readers.collect.onnxruntime import parse_python_assignments
from fallback_doctor.core.readers.knowledge.ort_matrix import ort_requirements, release_tuple
from fallback_doctor.core.readers.loader.elf import NotAnElfFile, parse_elf_dynamic
from fallback_doctor.core.readers.loader.pe import parse_pe_imports

pytestmark = pytest.mark.scenario

FOLDERS = (
    Path.home() / ".cache" / "gfd-wheels",
    Path.home() / ".cache" / "gpu-fallback-doctor" / "loader-wheels",
)
_FOUND = {p.name: p for folder in FOLDERS if folder.is_dir() for p in folder.glob("onnxruntime_gpu-*.whl")}
WHEELS = sorted(_FOUND.values())
_HEAD = 32 << 20  # the dynamic section and its strings lie in the first megabytes of the file


def _version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def _member(archive: zipfile.ZipFile, pattern: str) -> str | None:
    return next((n for n in archive.namelist() if re.search(pattern, n)), None)


def _linked(archive: zipfile.ZipFile, name: str) -> tuple[str, ...]:
    if name.endswith(".dll"):
        with archive.open(name) as handle:
            return parse_pe_imports(handle.read()).imports
    with archive.open(name) as handle:
        head = handle.read(_HEAD)
        try:
            return parse_elf_dynamic(head).needed
        except NotAnElfFile:
            return _needed_streamed(handle, head)


def _needed_streamed(handle: IO[bytes], head: bytes) -> tuple[str, ...]:
    """DT_NEEDED of a 64-bit little-endian ELF whose .dynamic lies beyond ``head``, reading forward
    only (a provider library is up to 770 MB; its .dynstr is in the first segment, in ``head``)."""
    (phoff,) = struct.unpack_from("<Q", head, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
    loads, dynamic = [], None
    for index in range(phnum):
        at = phoff + index * phentsize
        kind, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from("<IIQQQQ", head, at)
        if kind == 1:
            loads.append((vaddr, offset, filesz))
        elif kind == 2:
            dynamic = (offset, filesz)
    assert dynamic is not None
    handle.seek(dynamic[0])  # forward: decompresses and discards up to there
    entries = handle.read(dynamic[1])
    tags = [struct.unpack_from("<qQ", entries, at) for at in range(0, len(entries) - 15, 16)]
    strtab = next(value for tag, value in tags if tag == 5)
    base = next(off + strtab - vaddr for vaddr, off, size in loads if vaddr <= strtab < vaddr + size)
    names = []
    for tag, value in tags:
        if tag == 1:
            start = base + value
            names.append(head[start : head.index(b"\0", start)].decode())
    return tuple(names)


@pytest.fixture(scope="module", params=WHEELS or [None], ids=lambda p: p.name if p else "no-wheels")
def wheel(request: pytest.FixtureRequest) -> Path:
    if request.param is None:
        pytest.skip("no onnxruntime-gpu wheel cached here (offline)")
    return request.param  # type: ignore[no-any-return]


def test_build_info_agrees_with_the_row(wheel):
    row = ort_requirements(_version(wheel))
    assert row is not None, _version(wheel)
    with zipfile.ZipFile(wheel) as archive:
        if "onnxruntime/capi/build_and_package_info.py" not in archive.namelist():
            # 1.20 and older ship no build_and_package_info.py: the DT_NEEDED test below covers them.
            assert (release_tuple(_version(wheel)) or ()) < (1, 21)
            return
        text = archive.read("onnxruntime/capi/build_and_package_info.py").decode()
    info = parse_python_assignments(text)
    assert info["package_name"] == "onnxruntime-gpu"
    assert info["__version__"] == _version(wheel)
    if "cuda_version" in info:  # written from 1.21 on
        assert info["cuda_version"] == row.cuda_build
        assert int(str(info["cuda_version"]).split(".")[0]) == row.cuda_major
    else:
        assert (release_tuple(_version(wheel)) or ()) < (1, 21)


def test_cuda_provider_links_what_the_row_says(wheel):
    row = ort_requirements(_version(wheel))
    assert row is not None
    with zipfile.ZipFile(wheel) as archive:
        name = _member(archive, r"capi/(lib)?onnxruntime_providers_cuda\.(so|dll)$")
        assert name is not None
        linked = [n.lower() for n in _linked(archive, name)]
    major = row.cuda_major
    if name.endswith(".dll"):
        assert f"cublas64_{major}.dll" in linked
        cudnn = [n for n in linked if n.startswith("cudnn64_")]
    else:
        assert f"libcublas.so.{major}" in linked
        cudnn = [n for n in linked if n.startswith("libcudnn")]
    if row.cudnn_loaded_lazily:
        assert cudnn == [], "from 1.28 cuDNN is opened at run time, not linked"
    else:
        assert f"libcudnn.so.{row.cudnn_major}" in cudnn or f"cudnn64_{row.cudnn_major}.dll" in cudnn


def test_tensorrt_provider_links_the_rows_tensorrt_major(wheel):
    row = ort_requirements(_version(wheel))
    assert row is not None and row.tensorrt_major is not None
    with zipfile.ZipFile(wheel) as archive:
        name = _member(archive, r"capi/(lib)?onnxruntime_providers_tensorrt\.(so|dll)$")
        assert name is not None
        linked = [n.lower() for n in _linked(archive, name)]
    trt = row.tensorrt_major
    wanted = f"nvinfer_{trt}.dll" if name.endswith(".dll") else f"libnvinfer.so.{trt}"
    assert wanted in linked
