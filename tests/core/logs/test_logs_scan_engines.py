"""The scan's search engines agree: hyperscan (where its wheel exists), RE2 and ``bytes.find``
find the same lines, and the whole-file scan keeps the same text with each of them."""

from __future__ import annotations

import importlib.util
import io
from concurrent.futures import ThreadPoolExecutor

import pytest
from fallback_doctor.core.readers.logs.scan import scan_keywords, scan_stream, to_text
from fallback_doctor.core.readers.logs.search import ENGINES, LARGE, PIECE, Finder, newlines_in
from hypothesis import given, settings
from hypothesis import strategies as st

INSTALLED = [
    engine
    for engine in ENGINES
    if engine == "find" or importlib.util.find_spec({"hyperscan": "hyperscan", "re2": "re2"}[engine])
]
STARTUP, OTHERS = scan_keywords()
WORDS = (*STARTUP, *OTHERS)


def _finders() -> dict[str, Finder]:
    return {engine: Finder(WORDS, len(STARTUP), engine) for engine in INSTALLED}


FINDERS = _finders()


def _lines(hits: list[tuple[int, bool]], text: bytes) -> dict[int, bool]:
    """{start of a line holding a word: whether a start-up word is among them}."""
    found: dict[int, bool] = {}
    for at, startup in hits:
        start = text.rfind(b"\n", 0, at) + 1
        found[start] = found.get(start, False) or startup
    return found


def _case(word: bytes, mask: int) -> bytes:
    return bytes(c ^ 32 if 97 <= c <= 122 and mask >> (i % 16) & 1 else c for i, c in enumerate(word))


_pieces = st.one_of(
    st.builds(_case, st.sampled_from(WORDS), st.integers(0, 0xFFFF)),  # a keyword, any case
    st.builds(lambda w: w[: max(1, len(w) - 1)], st.sampled_from(WORDS)),  # one cut short
    st.binary(max_size=12),
    st.just(b"\n"),
    st.just(b" "),
)


def test_every_engine_the_platform_has_is_tried() -> None:
    assert INSTALLED[-1] == "find" and [f.engine for f in FINDERS.values()] == INSTALLED
    assert "re2" in INSTALLED  # a declared dependency everywhere


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=40))
def test_the_engines_find_the_same_lines(pieces: list[bytes]) -> None:
    text = b"".join(pieces)
    plain = FINDERS["find"].hits(text)
    lines = _lines(plain, text)
    for engine, finder in FINDERS.items():
        hits = finder.hits(text)
        assert finder.first(text) == bool(plain), engine
        if engine == "re2":
            # RE2 reports leftmost matches that do not overlap: the same lines, not every word.
            assert _lines(hits, text).keys() == lines.keys()
        else:
            assert hits == plain, engine
            assert _lines(hits, text) == lines, engine


@pytest.mark.skipif(len(INSTALLED) < 2, reason="one engine only")
def test_the_scan_keeps_the_same_text_with_each_engine() -> None:
    request = b"2026-01-04 10:00:02.117 INFO [worker-3] request served in 41 ms path=/v1/analyze\n"
    log = (
        request * 30000
        + b"Use config file: /opt/app/config.json\n"
        + b"[E:onnxruntime:Default] Failed to load library libonnxruntime_providers_cuda.so with error: "
        + b"libcudnn.so.9: cannot open shared object file: No such file or directory\n"
        + request * 60000
        + b"[W:onnxruntime:Default] CUDA failure 35: CUDA driver version is insufficient\n"
        + request * 40000
    )
    texts = {
        engine: to_text(scan_stream(io.BytesIO(log), "app.log", 64 * 1024, engine=engine), len(log))
        for engine in INSTALLED
    }
    first = texts["find"]
    assert any("CUDA failure 35" in line.text for line in first.lines)
    assert any("libcudnn.so.9" in line.text for line in first.lines)
    for engine, text in texts.items():
        assert text == first, engine


@pytest.mark.parametrize("size", [0, 9, LARGE - 1, LARGE, LARGE + PIECE + 7, 3 * LARGE + 1])
@pytest.mark.parametrize("shift", [0, 5])
def test_newlines_are_counted_as_bytes_count_counts_them(size: int, shift: int) -> None:
    pattern = b"2026-01-04 INFO served\n\n x\r\n" * (size // 28 + 1)
    block = pattern[:size]
    lo, hi = min(shift, size), max(min(shift, size), size - shift)
    assert newlines_in(block, lo, hi) == block.count(b"\n", lo, hi)


def test_one_finder_searches_in_several_threads_at_once() -> None:
    """Hyperscan's scratch space is per thread: searches side by side neither fail nor mix."""
    finder = FINDERS[INSTALLED[0]]
    text = (b"request served in 41 ms\n" * 20000 + b"CUDA failure 35: driver\n") * 8
    expected = finder.hits(text)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(finder.hits, [text] * 16))
    assert all(result == expected for result in results) and len(expected) == 8 * len(
        finder.hits(b"CUDA failure")
    )
