"""The GPU page's "What was tried": one line per attempt, with what each strategy changed, in en and
ko (issue 26, item 4: it was one run-on line of stages and left out the CLI's clearest sentence)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fallback_doctor.core.views.measures import strategy_lines

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "inference"))

from korean_leftovers import leftovers
from test_tried import RETRY

SKIPPED = {"name": "preload_dlls", "skipped": "onnxruntime older than 1.21 has no preload_dlls()"}


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_each_attempt_is_a_line_and_says_what_it_changed(lang: str) -> None:
    lines = strategy_lines(RETRY, lang)
    assert len(lines) == 3, lines
    as_is, preload, folders = lines
    assert "libcublasLt.so.13" in preload and "libcuda.so.1" not in preload
    assert "LD_LIBRARY_PATH=/w/nvidia/cu13/lib:/old" in folders
    assert "libcuda.so.1" in folders and "libcublasLt.so.13" in folders
    if lang == "en":
        assert as_is == "as the application runs: ONNX Runtime loaded, the GPU provider's libraries did not"
        assert folders == (
            "with LD_LIBRARY_PATH=/w/nvidia/cu13/lib:/old first, ONNX Runtime loads further and now stops"
            " at libcuda.so.1 instead of libcublasLt.so.13 (the driver: install it on the host)"
        )
        assert "still stops at libcublasLt.so.13" in preload
    else:
        for line in lines:
            assert leftovers(line) == [], line


def test_a_skipped_strategy_and_a_retry_without_as_is_stay_one_line_each() -> None:
    retry = {"strategies": [*RETRY["strategies"][1:], SKIPPED]}
    lines = strategy_lines(retry, "en")
    assert len(lines) == 3, lines
    assert lines[0].startswith("with onnxruntime.preload_dlls(): ")  # nothing to compare with
    assert lines[2].startswith("with onnxruntime.preload_dlls(): skipped: ")
