"""One answer, decided once (issue 26 item 1): the first cause is core's, the same on every surface.

A Bareun-like installation with a real CPU-only ONNX Runtime in libPath and no licence file yet
(tests/core/targets/bareun_layout.py) is diagnosed once with a bundle; the text report, --json,
the bundle's report.json and report.html, ``bundle show``, the wizard pages' first cause ("Why" on
the GPU page, the diagnosis page's first row) and the fleet summary all name the libPath finding
first, and the licence file (context, it cannot cause a fallback) never. Configured for the CPU as
well, the CPU setting comes first and its fix says that the libPath must follow.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.judgement.judge import SettleContext, first_cause, settle_findings
from fallback_doctor.core.language.texts import finding_words, load_texts, make_finding
from fallback_doctor.core.model.result import Evidence, Layer, Severity

sys.path.insert(0, str(Path(__file__).resolve().parent / "targets"))

from bareun_layout import SAMPLE_CONFIG, make_install

TOOL = (sys.executable, "-m", "fallback_doctor")
LIBPATH = "target.libpath_cpu_only"
LICENCE = "config.path_missing.licenseFile"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    env.update(LANG="C.UTF-8")  # no COLUMNS: the report into a pipe, headings whole (tests/conftest.py)
    return subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=300, env=env, check=False)


def _first_numbered(text: str) -> str:
    """The id of the first numbered finding of a text report ("1. [ERROR] title  (id)")."""
    found = re.search(r"^1\. \[[^\]]+\] .*\(([\w.]+)\)$", text, re.MULTILINE)
    assert found, text
    return found.group(1)


@pytest.fixture(scope="module")
def bareun(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("one-answer")
    root = make_install(base)
    (root / "var" / "license.pem").unlink()
    bundle = base / "bundle.zip"
    target = ("--target", "bareun", "--bareun-root", str(root), "--quick")
    text = _run("diagnose", *target, "--bundle", str(bundle))
    assert text.returncode == 1, text.stderr
    with zipfile.ZipFile(bundle) as archive:
        report = json.loads(archive.read("report.json"))
        page = html.unescape(archive.read("report.html").decode("utf-8"))
    return {
        "text": text.stdout,
        "json": json.loads(_run("diagnose", *target, "--json").stdout),
        "report": report,
        "page": page,
        "show": _run("bundle", "show", str(bundle)).stdout,
        "bundle": bundle,
        "base": base,
    }


def test_every_surface_names_the_same_first_cause(bareun: dict[str, Any]) -> None:
    from fallback_doctor.core.fleet.fields import first_cause as fleet_first_cause
    from fallback_doctor.core.views.pages import first_cause as page_first_cause

    assert _first_numbered(bareun["text"]) == LIBPATH
    assert _first_numbered(bareun["show"]) == LIBPATH
    for document in (bareun["json"], bareun["report"]):
        assert document["first_cause"] == LIBPATH
        assert document["findings"][0]["id"] == LIBPATH  # the diagnosis page's first row
        assert page_first_cause(document)["id"] == LIBPATH  # "Why" on the GPU page
        fleet = fleet_first_cause(document)
        assert fleet is not None and fleet.finding == LIBPATH
        roles = {f["id"]: f["role"] for f in document["findings"]}
        assert roles[LIBPATH] == "decides" and roles[LICENCE] == "context"
        assert [f["id"] for f in document["findings"]][-1] == LICENCE  # context, below the causes
    first_in_page = re.search(r"<b>1\. ([^<]+)</b>", bareun["page"])
    assert first_in_page and "libPath holds a CPU-only ONNX Runtime" in first_in_page.group(1)


def test_the_fleet_summary_groups_by_core_s_first_cause(bareun: dict[str, Any]) -> None:
    folder = bareun["base"] / "fleet"
    folder.mkdir()
    (folder / "host-a.zip").write_bytes(bareun["bundle"].read_bytes())
    done = _run("fleet-summary", str(folder), "--json")
    summary = json.loads(done.stdout)
    assert summary["by_first_cause"][0]["finding"] == LIBPATH, done.stdout[:2000]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_with_the_cpu_asked_for_too_the_first_fix_says_the_libpath_must_follow(
    tmp_path: Path, lang: str
) -> None:
    root = make_install(tmp_path, config={**SAMPLE_CONFIG, "executionProvider": {"provider": "cpu"}})
    document = json.loads(
        _run("diagnose", "--target", "bareun", "--bareun-root", str(root), "--quick", "--json").stdout
    )
    ids = [f["id"] for f in document["findings"]]
    assert ids[:2] == ["config.cpu_by_configuration", LIBPATH]
    assert document["first_cause"] == "config.cpu_by_configuration"
    first, second = document["findings"][:2]
    assert finding_words(second, lang)["title"] in finding_words(first, lang)["fix"]
    assert finding_words(second, "en")["title"] in first["remediation"]["summary"]


def _finding(finding_id: str, cause: str, layer: Layer, severity: Severity, **params: Any) -> Any:
    return make_finding(finding_id, cause, layer, severity, params=params, evidence=(Evidence("x", "y"),))


def test_context_ranks_below_every_cause_and_is_never_the_first() -> None:
    licence = _finding(LICENCE, "config_invalid", Layer.CONFIG, Severity.WARNING)
    fell_back = _finding("log.fell_back", "unknown", Layer.UNKNOWN, Severity.WARNING)
    driver = _finding("driver.missing", "driver_missing", Layer.DRIVER, Severity.ERROR)
    cudnn = _finding("cudnn.missing", "cudnn_missing", Layer.CUDNN, Severity.ERROR)
    ranked = settle_findings([licence, fell_back, cudnn, driver], SettleContext())
    assert [f.id for f in ranked] == ["driver.missing", "cudnn.missing", LICENCE, "log.fell_back"]
    assert first_cause(ranked) is driver
    assert first_cause(settle_findings([licence, fell_back], SettleContext())) is None


def test_the_two_findings_that_say_one_thing_are_one() -> None:
    fell_back = _finding("log.fell_back", "unknown", Layer.UNKNOWN, Severity.WARNING)
    not_logged = make_finding(
        "log.hidden.cause_not_logged",
        "unknown",
        Layer.UNKNOWN,
        Severity.INFO,
        params={"says": "no reason"},
        evidence=(Evidence("log line", "fell back to CPU", source="app.log", line=3),),
    )
    ranked = settle_findings([fell_back, not_logged], SettleContext())
    assert [f.id for f in ranked] == ["log.fell_back"]
    assert Evidence("log line", "fell back to CPU", source="app.log", line=3) in ranked[0].evidence
    assert settle_findings(ranked, SettleContext()) == ranked  # settling again changes nothing


LANGS = ("en", "ko")


def test_the_log_level_advice_is_one_sentence_everywhere() -> None:
    texts = load_texts()
    for lang in ("en", "ko"):
        advice = {texts[i][lang]["fix"] for i in ("log.fell_back", "log.hidden.cause_not_logged")}
        assert len(advice) == 1, advice
    labels = Path(__file__).parents[2] / "resources" / "texts"
    causes = "".join((labels / lang / "labels" / "log_causes.json").read_text("utf-8") for lang in LANGS)
    catalog = json.dumps(texts, ensure_ascii=False) + causes
    assert "log_severity_level=2, or 0 for VERBOSE" in causes
    assert not re.search(r"(?i)\b(?:lower|raise) (?:the |its |ONNX Runtime's |the application's )*"
                         r"(?:ONNX Runtime )?log level", catalog)  # fmt: skip
    assert "로그 수준을" not in catalog


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_report_with_only_context_never_calls_it_a_cause(lang: str) -> None:
    from fallback_doctor.core.document.basics import to_jsonable
    from fallback_doctor.core.flow.steps import empty_inference
    from fallback_doctor.core.language.texts import label
    from fallback_doctor.core.views.text_report import render_text

    licence = _finding(LICENCE, "config_invalid", Layer.CONFIG, Severity.WARNING)
    fell_back = _finding("log.fell_back", "unknown", Layer.UNKNOWN, Severity.WARNING)
    document = {
        "verdict": "gpu_at_risk",
        "findings": [to_jsonable(f) for f in (licence, fell_back)],
        "inference": empty_inference(None),
    }
    text = render_text(document, lang)
    assert label("summary.no_cause", lang) in text and label("summary.causes", lang) not in text
    document["findings"].insert(
        1, to_jsonable(_finding("driver.missing", "driver_missing", Layer.DRIVER, Severity.ERROR))
    )
    text = render_text(document, lang)
    assert label("summary.causes", lang) in text and _first_numbered(text) == "driver.missing"
