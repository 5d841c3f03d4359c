"""No raw code on screen (issue 26): the verdict, a GPU retry's verdict, a stack fact and the bundle
message in the catalogue's words, in English and Korean; the codes stay in --json (scripts read them
there). No "(s)" in an English text: plural forms.

Read from the real scenario stack whose CUDA wheels are installed but not on the loader path
(tests/scenarios, diagnosed by the CLI) and from a real bundle written by the CLI's own export.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.language.texts import label, load_labels, load_texts
from fallback_doctor.core.views.text_report import render_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))

LANGS = ("en", "ko")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """``diagnose --json`` on the s4 scenario stack (CUDA 13 wheels installed, not on the loader path)."""
    import scenario_runs as runs
    import scenario_stacks as stacks

    scenario = runs.SCENARIOS["s4_wheels_not_on_path"]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    return runs.run_diagnose(stack, scenario.env()).doc


def test_no_english_text_says_s_in_brackets() -> None:
    """ "1 other way(s)", "redaction(s)": every English label and finding text has plural forms."""
    plural = re.compile(r"\w\(s\)")
    labels = [key for key, entry in load_labels().items() if plural.search(str(entry.get("en", "")))]
    texts = [
        f"{finding}.{part}"
        for finding, entry in load_texts().items()
        for part, text in (entry.get("en") or {}).items()
        if plural.search(str(text))
    ]
    assert labels == [] and texts == []
    assert label("remedy.more_options.one", "en") == "Or instead: 1 other way to do it, shown with --verbose."


@pytest.mark.scenario
@pytest.mark.parametrize("lang", LANGS)
def test_the_text_report_says_the_verdict_in_words(document: dict[str, Any], lang: str) -> None:
    first = render_text(document, lang).splitlines()[0]
    assert document["verdict"] == "gpu_unusable"
    assert "gpu_unusable" not in first and label(f"verdict.{document['verdict']}", lang) in first, first


@pytest.mark.scenario
@pytest.mark.parametrize("lang", LANGS)
def test_the_stack_facts_are_words_not_keys_and_codes(document: dict[str, Any], lang: str) -> None:
    """ "nvml_status library_not_found" was on the driver card."""
    driver = next(layer for layer in facade.stack_layers(document) if layer["layer"] == "driver")
    assert driver["facts"]["nvml_status"] == "library_not_found"
    rows = facade.fact_rows(driver, lang)
    shown = " ".join(f"{words} {value}" for words, value in rows)
    assert "nvml_status" not in shown and "library_not_found" not in shown, rows
    assert (label("stack.fact.nvml_status", lang), label("stack.nvml.library_not_found", lang)) in rows
    for layer in facade.stack_layers(document):
        for words, _ in facade.fact_rows(layer, lang):
            assert "_" not in words, (layer["layer"], words)


@pytest.mark.scenario
@pytest.mark.parametrize("lang", LANGS)
def test_the_bundle_written_message_is_in_the_language_asked(
    document: dict[str, Any], lang: str, tmp_path: Path
) -> None:
    """ "bundle written … redaction(s)" was English in a Korean run."""
    from fallback_doctor.cli.bundle import export_from_cli

    path = tmp_path / "bundle.zip"
    args = argparse.Namespace(bundle=str(path), lang=lang, json=True)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        assert export_from_cli(json.loads(json.dumps(document)), args, extras=()) == 0
    assert path.is_file()
    message = said.getvalue().splitlines()[0]
    assert "(s)" not in message and "redaction" not in message, message
    if lang == "ko":
        assert "번들을" in message and "가림" in message, message
    else:
        assert re.search(r"\(\d+ bytes, (1 value|\d+ values) masked\)$", message), message


@pytest.mark.scenario
@pytest.mark.parametrize("lang", LANGS)
def test_report_html_says_the_verdict_in_words(document: dict[str, Any], lang: str) -> None:
    from fallback_doctor.core.bundle.html import render_html

    page = render_html(document, lang=lang)
    line = next(line for line in page.splitlines() if 'class="verdict' in line)
    shown = re.sub(r"<[^>]+>", "", line)
    assert "gpu_unusable" not in shown and label("verdict.gpu_unusable", lang) in shown, shown
