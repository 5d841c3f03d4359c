"""The text report (issue 13): one screen by default, the evidence with --verbose; no doubled
full stop, no "X (X)" evidence; test-inference points only at what it prints and says how to verify."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.cli.test_inference_text import _finding_lines
from fallback_doctor.core.language.texts import finding_words, label, make_finding
from fallback_doctor.core.model.result import Layer, Severity
from fallback_doctor.core.views.text_report import SUMMARY_FULL_CAUSES, render_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "bundle"))

ONE_SCREEN = 50


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from bundle_plants import real_document

    found = real_document()  # a real quick diagnosis of this machine: no GPU here, several findings
    assert len(found["findings"]) >= 2
    return found


def _with_many_findings(document: dict[str, Any], count: int = 8) -> dict[str, Any]:
    many = copy.deepcopy(document)
    findings = many["findings"]
    while len(findings) < count:
        findings.append(copy.deepcopy(findings[len(findings) % len(document["findings"])]))
    return many


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_default_text_is_one_screen_with_causes_fixes_and_verify(
    document: dict[str, Any], lang: str
) -> None:
    many = _with_many_findings(document)
    text = render_text(many, lang)
    lines = text.splitlines()
    verdict_word = "Verdict" if lang == "en" else "판정"
    assert lines[0].startswith(f"{verdict_word}: {label('verdict.' + many['verdict'], lang)}")
    assert many["verdict"] not in lines[0]  # the code is --json's (issue 26: "Verdict: gpu_unusable —")
    first = finding_words(many["findings"][0], lang)
    assert first["title"] in text
    assert first["fix"].split()[0] in text
    if first.get("verify"):
        assert first["verify"] in text
    evidence_word = "Evidence:" if lang == "en" else "근거:"
    assert evidence_word not in text
    # the first causes in full, every other one on a line of its own, nothing cut with "…"
    for finding in many["findings"][SUMMARY_FULL_CAUSES:]:
        assert any(line.endswith(finding_words(finding, lang)["title"]) for line in lines)
    assert "--verbose" in text
    assert len(lines) <= ONE_SCREEN, text


def test_verbose_has_every_finding_with_its_evidence(document: dict[str, Any]) -> None:
    text = render_text(document, "en", verbose=True)
    assert "Evidence:" in text
    flowing = " ".join(text.split())  # wrapped at the width: a long path stands on its own line
    for finding in document["findings"]:
        assert finding["id"] in text
        assert " ".join(finding_words(finding, "en")["detail"].split())[:40] in flowing
    assert len(text.splitlines()) > len(render_text(document, "en").splitlines())


def test_evidence_whose_source_is_its_value_says_it_once(document: dict[str, Any]) -> None:
    changed = copy.deepcopy(document)
    changed["findings"][0]["evidence"] = [
        {"label": "log", "value": "/var/log/app.log", "source": "/var/log/app.log"}
    ]
    text = render_text(changed, "en", verbose=True)
    assert "- log: /var/log/app.log\n" in text
    assert "(/var/log/app.log)" not in text


def test_a_quoted_sentence_is_not_followed_by_a_second_full_stop() -> None:
    finding = make_finding(
        "inference.fell_back",
        "cuda_runtime_missing",
        Layer.CUDA,
        Severity.ERROR,
        params={"strict": "fallback to CPU EP has been explicitly disabled by the user.", "provider": "CUDA"},
    )
    assert "by the user.." not in finding.detail
    assert "by the user. There is no GPU figure" in finding.detail


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_test_inference_names_only_what_it_prints_and_says_how_to_verify(lang: str) -> None:
    finding = make_finding(
        "inference.failed",
        "cuda_runtime_missing",
        Layer.CUDA,
        Severity.ERROR,
        params={
            "runtime": "ONNX Runtime 1.31.1",
            "requested": "CUDAExecutionProvider",
            "error": "x",
            "quote": "y",
        },
    )
    text = "\n".join(_finding_lines([finding], lang))
    assert "layer findings" not in text and "계층별 결과" not in text
    assert "fallback-doctor diagnose" in text
    assert ("Verify: " if lang == "en" else "확인 방법: ") in text


def _diagnose_text(columns: str | None) -> list[str]:
    """A real ``diagnose --target log`` of a real log, its text as a terminal of ``columns`` shows it."""
    import os
    import subprocess

    log = Path(__file__).resolve().parents[1] / "data" / "logs" / "ansi_crlf.log"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    run = subprocess.run(
        [sys.executable, "-m", "fallback_doctor.cli.main", "diagnose", "--target", "log", "--log", str(log)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert run.stdout, run.stderr
    return run.stdout.splitlines()


def _longest_wrapped(lines: list[str]) -> int:
    """The longest line of prose: a command (``$ …``) is never wrapped, so that it copies whole,
    and a single long word (a path) cannot be."""
    return max(len(line) for line in lines if " " in line.strip() and not line.strip().startswith("$"))


def test_the_text_report_wraps_at_the_terminals_width() -> None:
    narrow, wide = _diagnose_text("64"), _diagnose_text("180")
    assert _longest_wrapped(narrow) <= 64
    assert _longest_wrapped(wide) <= 180
    assert len(wide) < len(narrow)


def test_into_a_pipe_each_heading_is_one_line_for_grep() -> None:
    piped = _diagnose_text(None)  # not a terminal, no COLUMNS
    verdict = next(i for i, line in enumerate(piped) if line.startswith("Verdict: "))
    assert not piped[verdict + 1].startswith(" ")  # no continuation: the verdict on one line
    assert any(line.startswith("1. [") and line.endswith(")") for line in piped)
