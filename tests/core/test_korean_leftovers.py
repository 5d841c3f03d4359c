"""A report shown in Korean shows no English words our own checks composed (issue 13).

On the recorded GPU runs (tests/data/gpu_run/: a real H200 run that worked, and one with the GPU
hidden) the evidence is translated at display, as `bundle show`, the text report, report.html and
the wizard's pages do it (by the ids the document holds; these were recorded before evidence had
ids, so their evidence is shown as written); on real broken stacks (this interpreter's, and
each prepared scenario stack found in the stacks folder) `diagnose --lang ko --verbose` also makes
the Korean finding texts, whose parameters are shown in Korean too (core/language/texts.py). What a system
wrote (dlerror, ONNX Runtime's messages), paths and names stay as written: korean_leftovers.py
tells them apart from our words.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.language.evidence_text import evidence_words
from fallback_doctor.core.language.texts import jsonable_params, label
from fallback_doctor.core.language.texts import render_text as finding_text
from fallback_doctor.core.model.result import Words
from fallback_doctor.core.views.text_report import inference_lines, render_text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from korean_leftovers import evidence_leftovers, leftovers, text_leftovers

_CPU = "CPUExecutionProvider"
GPU_RUNS = Path(__file__).resolve().parents[1] / "data" / "gpu_run"
STACKS = Path(
    os.environ.get(
        "GFD_STACKS_DIR",
        Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor")) / "stacks",
    )
)
STACK_NAMES = (
    "cpu-only",
    "cpu-and-gpu",
    "gpu-and-cpu",
    "gpu12-full",
    "gpu12-cuda13-wheels",
    "gpu13-cuda13-wheels",
    "gpu13-rtx-plugin",
)
"""Prepared broken stacks (scripts/prepare_test_stacks.py), each a real virtual environment."""


def _shown_lines(document: dict[str, Any]) -> list[str]:
    """The report's lines our words fill at display: the test inference, and what was tried."""
    tried = f"   {label('report.tried', 'ko')}: "
    lines = render_text(document, "ko", verbose=False).splitlines()
    return inference_lines(document, "ko") + [line for line in lines if line.startswith(tried)]


def _all_leftovers(document: dict[str, Any], *, texts: bool) -> list[tuple[str, str, str]]:
    found = list(evidence_leftovers(document))
    found += [("report", "line", line) for line in _shown_lines(document) if leftovers(line)]
    if texts:
        found += list(text_leftovers(document))
    return found


def test_the_detector_keeps_names_and_finds_our_words() -> None:
    assert leftovers("CPUExecutionProvider on the CPU (AMD 4130)") == ["on", "the"]
    assert leftovers("nodes: 151 on CPUExecutionProvider (from get_provider_graph_assignment_info)") == [
        "nodes",
        "on",
        "from",
    ]
    kept = (
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.9(가) onnxruntime-gpu==1.31.1, nvidia-cublas, "
        'CUDAExecutionProvider, cuDNN 9, `nvidia-smi -L`, LD_LIBRARY_PATH=/opt/lib, "no such file", '
        "get_ep_devices(), session.get_providers(), ONNX Runtime 1.31.1, docker (/.dockerenv), 12.3 ms"
    )
    assert leftovers(kept) == []
    # A model's dimensions are its own names ("테스트 추론 모델: a.onnx (batch=16 (지정한 값), ...)").
    assert leftovers("모델 (batch=16 (지정한 값), images:2=224 (지정한 값))") == []
    assert leftovers("모델 (batch=16 (given))") == ["given"]
    assert leftovers("결과: [ONNXRuntimeError] : 1 : FAIL : Failed to load library. 그다음") == []


def test_a_parameter_of_a_korean_text_is_shown_in_korean() -> None:
    """A parameter that is words is given as catalogue words (as core/readers/inference/findings_now.py
    gives them), rendered in the text's language: no English is read back."""
    on_cpu = Words("evidence.ep_on_device", {"provider": _CPU, "device": "CPU", "vendor": "AMD 4130"})
    words = Words("evidence.registration_picked", {"providers": _CPU, "devices": on_cpu})
    params = {
        "policy": "PREFER_GPU",
        "runtime": "ONNX Runtime 1.31.1",
        "active": _CPU,
        "devices": Words("evidence.no_device"),
        "registered": words,
    }
    detail = finding_text("inference.auto_select_silent", "ko", jsonable_params(params))["detail"]
    assert "AMD 4130" in detail and leftovers(detail) == [], detail
    english = finding_text("inference.auto_select_silent", "en", jsonable_params(params))["detail"]
    assert f"picked {_CPU}; get_ep_devices() then listed {_CPU} on the CPU (AMD 4130)" in english


@pytest.mark.parametrize("name", sorted(path.stem for path in GPU_RUNS.glob("*.json")))
def test_a_recorded_gpu_run_of_a_previous_version_shows_its_evidence_as_written(name: str) -> None:
    """The recorded H200 runs were written before evidence carried ids: their evidence is shown in
    the English it holds (never read back into Korean), the rest of the report in Korean."""
    document = json.loads((GPU_RUNS / f"{name}.json").read_text(encoding="utf-8"))
    items = [item for finding in document["findings"] for item in finding.get("evidence") or []]
    assert items and not any(item.get("label_id") for item in items)
    for item in items:
        assert evidence_words(item, "ko") == (item["label"], item["value"], item.get("source") or "")
    text = render_text(document, lang="ko", verbose=True)
    assert label("report.verdict", "ko") in text and items[0]["label"] in text


def _diagnose(python: str, tmp_path: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    env["LANG"] = "C.UTF-8"
    bundle = tmp_path / "ko.zip"
    command = [sys.executable, "-m", "fallback_doctor", "diagnose", "--target", "python", "--python", python]
    done = subprocess.run(
        [*command, "--lang", "ko", "--verbose", "--runs", "2", "--bundle", str(bundle)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert done.returncode == 1, done.stderr
    with zipfile.ZipFile(bundle) as archive:
        document: dict[str, Any] = json.loads(archive.read("report.json"))
    return document


@pytest.mark.parametrize("stack", ["this interpreter", *STACK_NAMES])
def test_a_real_broken_stack_in_korean_has_no_english_left(stack: str, tmp_path: Path) -> None:
    python = sys.executable if stack == "this interpreter" else str(STACKS / stack / "bin" / "python")
    if not os.path.exists(python):
        pytest.skip(f"the scenario stack {stack} is not prepared here (scripts/prepare_test_stacks.py)")
    document = _diagnose(python, tmp_path)
    assert document["findings"], "a broken stack has findings"
    assert _all_leftovers(document, texts=True) == []


def test_a_skipped_strategy_s_reason_is_korean_in_report_html() -> None:
    """report.html's comparison table: "skipped: <why>" with the why in the catalog's words (the
    record's ``skipped_words``)."""
    from fallback_doctor.core.bundle.html import _result

    why = label("evidence.skip.no_folder", "en")
    words = {"id": "evidence.skip.no_folder", "params": {}}
    shown = _result({"name": "lib_path_first", "skipped": why, "skipped_words": words}, {}, "ko")
    korean = label("evidence.skip.no_folder", "ko")
    assert korean != why and korean in shown and why not in shown


@pytest.mark.parametrize("name", sorted(path.stem for path in GPU_RUNS.glob("*.json")))
def test_the_cli_s_bundle_message_and_the_gpu_page_s_words_are_korean(name: str, tmp_path: Path) -> None:
    """Issue 26: "bundle written … redaction(s)" in a Korean run; a one-run GPU retry's words, the
    stack's facts and the run count are the catalogue's Korean too."""
    import argparse
    import contextlib
    import io

    from fallback_doctor.cli.bundle import export_from_cli
    from fallback_doctor.core.views.measures import gpu_summary, session_rows
    from fallback_doctor.core.views.pages_stack import fact_rows, stack_layers

    document = json.loads((GPU_RUNS / f"{name}.json").read_text(encoding="utf-8"))
    said = io.StringIO()
    args = argparse.Namespace(bundle=str(tmp_path / "b.zip"), lang="ko", json=True)
    with contextlib.redirect_stderr(said):
        assert export_from_cli(document, args, extras=()) == 0
    message = said.getvalue().splitlines()[0].removeprefix("fallback-doctor: ")
    assert leftovers(message) == [] and "번들" in message, message
    summary = gpu_summary(document)
    shown = [
        words
        for row in session_rows(summary["gpu"], "ko") + session_rows(summary["cpu"], "ko")
        for words in row
    ]
    shown += [words for layer in stack_layers(document) for row in fact_rows(layer, "ko") for words in row]
    assert [(text, leftovers(text)) for text in shown if leftovers(text)] == []
