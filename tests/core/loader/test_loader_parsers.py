"""ELF, PE, ld.so.cache and ldconfig -p parsers: real inputs, truncations and Hypothesis."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import loader_wheels as wheels
import pytest
from fallback_doctor.core.readers.loader.elf import (
    NotAnElfFile,
    elf_identity,
    parse_elf_dynamic,
    read_elf_dynamic,
)
from fallback_doctor.core.readers.loader.ldcache import (
    LdCache,
    LdCacheEntry,
    LdCacheParseError,
    parse_ld_so_cache,
    parse_ldconfig_p,
    read_ld_so_cache,
    render_ldconfig_p,
)
from fallback_doctor.core.readers.loader.names import is_other_major, parse_library_name
from fallback_doctor.core.readers.loader.pe import NotAPeFile, parse_pe_imports, read_pe_imports
from hypothesis import given, settings
from hypothesis import strategies as st

# -- ELF ------------------------------------------------------------------------------------------


def test_elf_cuda_provider_131_needs_cuda13_and_no_cudnn() -> None:
    dynamic = read_elf_dynamic(str(wheels.provider("ort131")))
    assert dynamic.soname is None
    assert dynamic.needed[:5] == (
        "libcublasLt.so.13",
        "libcublas.so.13",
        "libcurand.so.10",
        "libcudart.so.13",
        "libcuda.so.1",
    )
    assert not any(name.startswith("libcudnn") for name in dynamic.needed)
    assert (dynamic.elf_class, dynamic.machine) == (64, "x86_64")
    assert dynamic.runpath == () and dynamic.rpath == ()


def test_elf_provider_123_and_wheel_runpaths() -> None:
    dynamic = read_elf_dynamic(str(wheels.provider("ort123")))
    assert "libcudnn.so.9" in dynamic.needed and "libcufft.so.11" in dynamic.needed
    graph = read_elf_dynamic(str(wheels.cudnn_lib() / "libcudnn_graph.so.9"))
    assert graph.soname == "libcudnn_graph.so.9"
    assert "libz.so.1" in graph.needed
    assert graph.runpath[0] == "$ORIGIN" and graph.rpath == ()
    cublas = read_elf_dynamic(str(wheels.cu13_lib("cublas13") / "libcublas.so.13"))
    assert cublas.rpath == ("$ORIGIN",) and cublas.runpath == ()
    assert cublas.needed[0] == "libcublasLt.so.13"


def test_elf_not_elf_and_truncated(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(NotAnElfFile):
        read_elf_dynamic(str(text))
    data = (wheels.cu13_lib("cudart13") / "libcudart.so.13").read_bytes()
    for cut in (3, 16, 64, 200, 4096):
        with pytest.raises(NotAnElfFile):
            parse_elf_dynamic(data[:cut])
    assert elf_identity(str(text)) is None
    assert isinstance(NotAnElfFile("x"), ValueError)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=512))
def test_elf_any_bytes_only_raise_not_an_elf(data: bytes) -> None:
    try:
        parse_elf_dynamic(b"\x7fELF" + data)
    except NotAnElfFile:
        pass


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=20000), st.binary(min_size=1, max_size=8))
def test_elf_corrupted_real_header_only_raises_not_an_elf(offset: int, junk: bytes) -> None:
    data = bytearray(_CUDART_HEAD)
    offset = offset % len(data)
    data[offset : offset + len(junk)] = junk
    try:
        parse_elf_dynamic(bytes(data))
    except NotAnElfFile:
        pass


_CUDART_HEAD = b""


@pytest.fixture(autouse=True, scope="module")
def _load_head() -> None:
    global _CUDART_HEAD
    path = wheels.cu13_lib("curand10") / "libcurand.so.10"
    _CUDART_HEAD = path.read_bytes()[:65536]


# -- PE -------------------------------------------------------------------------------------------


def test_pe_cuda_provider_imports_and_machine() -> None:
    capi = wheels.wheel_dir("win_ort131") / "onnxruntime" / "capi"
    imports = read_pe_imports(str(capi / "onnxruntime_providers_cuda.dll"))
    assert imports.dll_name == "onnxruntime_providers_cuda.dll"
    assert imports.imports[:3] == ("cublasLt64_13.dll", "cublas64_13.dll", "onnxruntime_providers_shared.dll")
    assert imports.machine == "x86_64"
    trt = read_pe_imports(str(capi / "onnxruntime_providers_tensorrt.dll"))
    assert {"nvinfer_10.dll", "nvonnxparser_10.dll", "cudnn64_9.dll"} <= set(trt.imports)
    core = read_pe_imports(str(capi / "onnxruntime.dll"))
    assert "SHELL32.dll" in core.delay_imports and "SHELL32.dll" in core.imports


def test_pe_cudart_dll_from_cu13_layout() -> None:
    dll = wheels.wheel_dir("win_cudart13") / "nvidia" / "cu13" / "bin" / "x86_64" / "cudart64_13.dll"
    imports = read_pe_imports(str(dll))
    assert imports.dll_name == "cudart64_13.dll"
    assert all(name.lower().startswith("api-ms-win-") for name in imports.imports)


def test_pe_rejects_elf_and_truncated() -> None:
    with pytest.raises(NotAPeFile):
        read_pe_imports(str(wheels.provider("ort131")))
    dll = wheels.wheel_dir("win_ort131") / "onnxruntime" / "capi" / "onnxruntime_providers_shared.dll"
    data = dll.read_bytes()
    for cut in (2, 64, 300):
        with pytest.raises(NotAPeFile):
            parse_pe_imports(data[:cut])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=1024))
def test_pe_any_bytes_only_raise_not_a_pe(data: bytes) -> None:
    try:
        parse_pe_imports(b"MZ" + data)
    except NotAPeFile:
        pass


# -- ld.so.cache ----------------------------------------------------------------------------------


def _ldconfig_text(cache: Path) -> str:
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    return subprocess.run(
        [ldconfig, "-p", "-C", str(cache)], capture_output=True, text=True, check=True, timeout=10
    ).stdout


@pytest.fixture(scope="module")
def cache_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The real cache of this machine, and the same entries written as old and compat files."""
    real = Path("/etc/ld.so.cache")
    if not real.exists() or not (shutil.which("ldconfig") or Path("/sbin/ldconfig").exists()):
        pytest.skip("no glibc ld.so.cache / ldconfig here")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    folder = tmp_path_factory.mktemp("ldcache")
    files = {"new": real}
    for form in ("old", "compat"):
        target = folder / f"{form}.cache"
        done = subprocess.run(
            [ldconfig, "-X", "-c", form, "-C", str(target)], capture_output=True, timeout=30, check=False
        )
        if done.returncode == 0 and target.exists():
            files[form] = target
    return files


def test_ldcache_matches_ldconfig_p_for_every_format(cache_files: dict[str, Path]) -> None:
    for form, path in cache_files.items():
        parsed = read_ld_so_cache(str(path))
        text = _ldconfig_text(path)
        expected = [line for line in text.splitlines() if "=>" in line]
        assert render_ldconfig_p(parsed.entries) == expected, form
        from_text = parse_ldconfig_p(text)
        assert [(e.name, e.path, e.flags) for e in from_text] == [
            (e.name, e.path, e.flags) for e in parsed.entries
        ], form


def test_ldcache_lookup_of_libc(cache_files: dict[str, Path]) -> None:
    cache = read_ld_so_cache(str(cache_files["new"]))
    paths = cache.lookup("libc.so.6", 64, "x86_64")
    assert paths and all(Path(path).exists() for path in paths)
    assert "libc.so.6" in cache.names()


def test_ldcache_rejects_other_files(tmp_path: Path) -> None:
    with pytest.raises(LdCacheParseError):
        parse_ld_so_cache(b"hello world")
    with pytest.raises(LdCacheParseError):
        parse_ld_so_cache(b"glibc-ld.so.cache1.1" + b"\xff" * 30)
    with pytest.raises(LdCacheParseError):
        parse_ld_so_cache(b"ld.so-1.7.0\0" + struct.pack("<I", 5))


def _build_new(entries: list[tuple[str, str, int]]) -> bytes:
    strings = bytearray()
    offsets = []
    base = 48 + 24 * len(entries)
    for name, path, _flags in entries:
        key = base + len(strings)
        strings += name.encode() + b"\0"
        value = base + len(strings)
        strings += path.encode() + b"\0"
        offsets.append((key, value))
    header = b"glibc-ld.so.cache1.1" + struct.pack("<IIB3xI12x", len(entries), len(strings), 2, 0)
    body = b"".join(
        struct.pack("<iIIIQ", flags, key, value, 0, 0)
        for (key, value), (_n, _p, flags) in zip(offsets, entries, strict=True)
    )
    return header + body + bytes(strings)


def _build_old(entries: list[tuple[str, str, int]]) -> bytes:
    strings = bytearray()
    table = []
    for name, path, flags in entries:
        key = len(strings)
        strings += name.encode() + b"\0"
        value = len(strings)
        strings += path.encode() + b"\0"
        table.append(struct.pack("<iII", flags, key, value))
    return b"ld.so-1.7.0\0" + struct.pack("<I", len(entries)) + b"".join(table) + bytes(strings)


_names = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=30)
_entries = st.lists(
    st.tuples(_names, _names.map(lambda text: "/" + text), st.sampled_from([0x0303, 0x0003, 0x0A03, 0x0803])),
    max_size=20,
)


@settings(max_examples=100, deadline=None)
@given(_entries)
def test_ldcache_round_trip_new_and_old(entries: list[tuple[str, str, int]]) -> None:
    for data in (_build_new(entries), _build_old(entries)):
        parsed = parse_ld_so_cache(data)
        assert [(e.name, e.path, e.flags) for e in parsed] == entries


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([b"glibc-ld.so.cache1.1", b"ld.so-1.7.0\0", b""]), st.binary(max_size=400))
def test_ldcache_any_bytes_only_raise_parse_error(magic: bytes, data: bytes) -> None:
    try:
        entries = parse_ld_so_cache(magic + data)
    except LdCacheParseError:
        return
    LdCache(entries, source="test").lookup("libc.so.6", 64, "x86_64")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_ldconfig_p_any_text_never_raises(text: str) -> None:
    for entry in parse_ldconfig_p(text):
        assert isinstance(entry, LdCacheEntry)


def test_ldconfig_p_real_captured_lines() -> None:
    text = (
        "538 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13\n"
        "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
        "\tlibc.so.6 (libc6) => /lib/i386-linux-gnu/libc.so.6\n"
        "\tlibc.so.6 (libc6,AArch64) => /lib/aarch64-linux-gnu/libc.so.6\n"
        '\tlibfoo.so.1 (libc6,x86-64, hwcap: "x86-64-v3") => /usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1\n'
        "Cache generated by: ldconfig (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36\n"
    )
    entries = parse_ldconfig_p(text)
    cache = LdCache(entries, source="ldconfig -p")
    assert cache.lookup("libcudart.so.13", 64, "x86_64") == ("/usr/local/cuda-13.0/lib/libcudart.so.13",)
    assert cache.lookup("libc.so.6", 64, "x86_64") == ()
    assert cache.lookup("libc.so.6", 32, "i386") == ("/lib/i386-linux-gnu/libc.so.6",)
    assert cache.lookup("libc.so.6", 64, "aarch64") == ("/lib/aarch64-linux-gnu/libc.so.6",)
    assert entries[-1].in_hwcaps_subdir


# -- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "family", "version", "major"),
    [
        ("libcublasLt.so.13", "cublasLt", "13", 13),
        ("libcudart.so.13.0.96", "cudart", "13.0.96", 13),
        ("libcudart.so.11.0", "cudart", "11.0", 11),
        ("cudart64_110.dll", "cudart", "110", 11),
        ("nvrtc64_130_0.dll", "nvrtc", "130_0", 13),
        ("cudnn_ops64_9.dll", "cudnn_ops", "9", 9),
        ("nvinfer_10.dll", "nvinfer", "10", 10),
        ("libcudart.so", "cudart", None, None),
    ],
)
def test_names_split(name: str, family: str, version: str | None, major: int | None) -> None:
    parsed = parse_library_name(name)
    assert parsed is not None
    assert (parsed.family, parsed.version, parsed.major) == (family, version, major)


def test_names_other_major() -> None:
    assert is_other_major("libcublasLt.so.13", "libcublasLt.so.12")
    assert is_other_major("libcudart.so.12", "libcudart.so.11.0")
    assert not is_other_major("libcudart.so.13", "libcudart.so.13.0.96")
    assert not is_other_major("libcudart.so.13", "libcudart.so")
    assert not is_other_major("libcublas.so.13", "libcublasLt.so.12")
    assert is_other_major("cublas64_13.dll", "cublas64_12.dll")


# -- LD_DEBUG=libs --------------------------------------------------------------------------------

_LD_DEBUG = """\
      7220:	find library=libcublasLt.so.13 [0]; searching
      7220:	 search path=/opt/a/glibc-hwcaps/x86-64-v3:/opt/a		(LD_LIBRARY_PATH)
      7220:	  trying file=/opt/a/glibc-hwcaps/x86-64-v3/libcublasLt.so.13
      7220:	  trying file=/opt/a/libcublasLt.so.13
      7220:
      7220:	find library=libcuda.so.1 [0]; searching
      7220:	 search cache=/etc/ld.so.cache
      7220:	 search path=/lib/x86_64-linux-gnu:/usr/lib		(system search path)
      7220:	  trying file=/lib/x86_64-linux-gnu/libcuda.so.1
      7220:	  trying file=/usr/lib/libcuda.so.1
      7220:
OSError: libcuda.so.1: cannot open shared object file: No such file or directory
"""


def test_ld_debug_blocks_from_captured_output() -> None:
    from fallback_doctor.core.readers.loader.ld_debug import failed_names, parse_ld_debug_libs

    assert failed_names(_LD_DEBUG) == ("libcuda.so.1",)
    first, second = parse_ld_debug_libs(_LD_DEBUG)
    assert first.name == "libcublasLt.so.13" and first.found == "/opt/a/libcublasLt.so.13"
    assert first.steps == ("LD_LIBRARY_PATH",)
    assert second.found is None and second.steps == ("cache", "system search path")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([*_LD_DEBUG.splitlines(), "", "  1:", "x: y"]), max_size=30))
def test_ld_debug_any_lines_never_raise(lines: list[str]) -> None:
    from fallback_doctor.core.readers.loader.ld_debug import parse_ld_debug_libs

    parse_ld_debug_libs("\n".join(lines))
