"""The typed view of the report document: read once, as tolerant as the readers it replaced."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fallback_doctor.core.document.basics import to_jsonable
from fallback_doctor.core.document.view import Report, evidence_words, finding_words, view_of
from fallback_doctor.core.flow.steps import empty_inference
from fallback_doctor.core.language.texts import finding_words as catalogue_words
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.result import Evidence, Layer, Severity
from fallback_doctor.core.views.text_report import render_text


def _document() -> dict[str, Any]:
    finding = make_finding(
        "driver.missing",
        "driver_missing",
        Layer.DRIVER,
        Severity.ERROR,
        params={},
        evidence=(Evidence("libcuda.so.1", "not found", source="dlopen", line=7),),
    )
    return {
        "verdict": "gpu_unusable",
        "created": "2026-12-05T14:00:00Z",
        "target": {"kind": "python"},
        "findings": [to_jsonable(finding)],
        "first_cause": "driver.missing",
        "environment": {"platform": {"machine": "x86_64"}, "log": None},
        "inference": empty_inference("no model"),
    }


def test_a_document_is_read_into_typed_fields_once() -> None:
    report = view_of(_document())
    assert isinstance(report, Report) and view_of(report) is report  # a view is not read again
    (finding,) = report.findings
    assert (finding.id, finding.layer, finding.severity) == ("driver.missing", "driver", "error")
    assert finding.evidence[0].label == "libcuda.so.1"
    assert (finding.evidence[0].source, finding.evidence[0].line) == ("dlopen", 7)
    assert report.first_cause == "driver.missing" and report.target_kind == "python"
    assert report.part("platform") == {"machine": "x86_64"} and report.part("log") == {}
    assert report.inference.skipped == "no model" and not report.inference.gpu_verified
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.verdict = "no_problem_found"  # type: ignore[misc]


@pytest.mark.parametrize(
    "document",
    [
        None,
        {},
        {"findings": "not a list", "environment": [], "inference": 3, "target": None},
        {"findings": [None, 7, {"evidence": [None, {"line": True}], "remediation": "x", "texts": []}]},
    ],
)
def test_an_old_or_hand_edited_document_reads_as_empty_parts(document: Any) -> None:
    report = view_of(document)
    assert report.part("target") == {} and report.target_kind == ""
    for finding in report.findings:
        assert finding.id == "" and finding.remediation.steps == () and finding.texts == {}
        assert all(item.line is None for item in finding.evidence)
    assert render_text(report, "en")  # the text report still says something


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_words_of_a_finding_are_chosen_from_its_key_in_the_language_else_english(lang: str) -> None:
    (finding,) = view_of(_document()).findings
    words = finding_words(finding, lang)
    assert words["title"] != "" and words == catalogue_words(finding.raw, lang)
    assert finding_words(finding.raw, lang) == words  # a finding read from JSON says the same
    previous = {key: value for key, value in finding.raw.items() if key != "text"}
    previous["texts"] = {"en": {"title": "English only", "detail": "", "fix": ""}}
    assert finding_words(previous, lang)["title"] == "English only"  # a previous version's document


def test_the_words_of_an_evidence_item_name_its_source_only_when_it_has_one() -> None:
    (finding,) = view_of(_document()).findings
    words = evidence_words(finding.evidence[0], "en")
    assert words == ("libcuda.so.1", "not found", "dlopen")
    bare = view_of({"findings": [{"evidence": [{"label": "a", "value": "b"}]}]}).findings[0].evidence[0]
    assert evidence_words(bare, "en").source is None


RENDERERS = (
    "core/views/text_report.py",
    "core/bundle/html.py",
    "core/views/pages.py",
    "core/views/pages_python.py",
    "core/views/pages_stack.py",
    "core/views/pages_log_stack.py",
    "core/views/measures.py",
    "core/document/script.py",
    "core/fleet/fields.py",
    "gui/page_html.py",
    "gui/page_diagnosis.py",
    "gui/page_gpu.py",
)


@pytest.mark.parametrize("name", RENDERERS)
def test_no_renderer_picks_a_findings_words_itself(name: str) -> None:
    """A finding's words come from core/document/view.py's finding_words, an evidence item's from its
    evidence_words: a renderer that read ``texts`` or worded an evidence label itself would not
    follow a change of how words are chosen."""
    from pathlib import Path

    source = (Path(__file__).parents[2] / name).read_text(encoding="utf-8")
    assert '"texts"' not in source and "'texts'" not in source
    if (
        name != "core/views/pages_stack.py"
    ):  # its fact rows word a fact's key (no evidence item) by that catalogue
        assert "evidence_label(" not in source and "evidence_source(" not in source


def test_the_test_inference_is_read_with_its_sessions_and_strategies() -> None:
    session = {"active_providers": ["CUDAExecutionProvider"], "latency": {"runs": 1, "p50_ms": 4.0}}
    inference = {
        "cpu_baseline": {"session": {"active_providers": ["CPUExecutionProvider"], "latency": {"runs": 20}}},
        "gpu_retry": {
            "strategies": [
                {"name": "preload_dlls", "skipped": "no folder"},
                {"name": "as_is", "gpu": session},
            ]
        },
    }
    part = view_of({"inference": inference}).inference
    assert part.cpu.runs == 20 and part.cpu.active_providers == ("CPUExecutionProvider",)
    assert [s.name for s in part.strategies] == ["preload_dlls", "as_is"]
    assert part.strategies[0].skipped == "no folder" and part.strategies[0].gpu.runs is None
    assert part.as_is.gpu.runs == 1 and part.as_is.gpu.latency["p50_ms"] == 4.0
    nothing = view_of({"inference": {"gpu_retry": {"strategies": [None, "as_is"]}}}).inference
    assert nothing.as_is.gpu.active_providers == () and nothing.cpu.raw == {}
