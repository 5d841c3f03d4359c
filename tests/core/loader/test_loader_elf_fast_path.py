"""The struct-only program-header reader agrees with pyelftools on every real library we can find."""

from __future__ import annotations

import glob
import io

import pytest
from fallback_doctor.core.readers.loader import elf
from hypothesis import given, settings
from hypothesis import strategies as st

CANDIDATES = sorted(
    set(glob.glob("/usr/lib/x86_64-linux-gnu/*.so*")[:150])
    | set(glob.glob("/usr/local/cuda*/lib*/*.so*")[:40])
    | set(glob.glob(f"{__import__('sys').prefix}/lib/python3*/site-packages/**/*.so*", recursive=True)[:120])
)


def _real_elf_files() -> list[str]:
    found = []
    for path in CANDIDATES:
        try:
            with open(path, "rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
        except OSError:
            continue
    return found


def test_fast_reader_matches_pyelftools_on_real_libraries() -> None:
    files = _real_elf_files()
    assert len(files) > 50, "expected real shared libraries on this machine"
    for path in files:
        with open(path, "rb") as handle:
            fast = elf._parse_program_headers(handle)
            handle.seek(0)
            reference = elf._parse_stream(handle)
        assert fast is not None, path
        assert fast == reference, path


def test_the_onnxruntime_provider_is_read_by_the_fast_path() -> None:
    providers = glob.glob(
        f"{__import__('sys').prefix}/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime_providers_cuda.so"
    )
    if not providers:
        pytest.skip("onnxruntime-gpu is not installed in the tool's environment")
    with open(providers[0], "rb") as handle:
        fast = elf._parse_program_headers(handle)
    assert fast is not None
    assert any(name.startswith("libcublasLt.so.") for name in fast.needed)


@settings(max_examples=200)
@given(st.binary(min_size=0, max_size=512))
def test_garbage_never_raises_from_the_fast_path(data: bytes) -> None:
    result = elf._parse_program_headers(io.BytesIO(b"\x7fELF" + data))
    assert result is None or isinstance(result, elf.ElfDynamic)
