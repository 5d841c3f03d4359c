"""report.html shows each layer's libraries and facts as the wizard's stack page does (issue 24: a field
shown on a page and in report.html is added in one place, ``core/views/pages_stack.py``; report.html
did not show the layer facts the wizard shows).

Read from a real scenario stack diagnosed by the CLI (CUDA 13 wheels installed, not on the loader
path), and from a document recorded on a real H200 (tests/data/gpu_run: not run on a GPU here).
"""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.html import render_html
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.views.pages_stack import fact_rows, library_rows, stack_layers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))

RECORDED = Path(__file__).resolve().parents[1] / "data" / "gpu_run" / "h200-working.json"


class _LayerTables(HTMLParser):
    """The rows of each ``<details class="layer">``: summary -> [[cell, cell], ...]."""

    def __init__(self) -> None:
        super().__init__()
        self.layers: dict[str, list[list[str]]] = {}
        self.opened: dict[str, bool] = {}
        self._layer: str | None = None
        self._in_summary = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details" and ("class", "layer") in attrs:
            self._layer = ""
            self._open = any(name == "open" for name, _ in attrs)
        elif tag == "summary" and self._layer == "":
            self._in_summary = True
        elif tag == "tr" and self._layer:
            self.layers[self._layer].append([])
        elif tag == "td" and self._layer:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "summary" and self._in_summary:
            self._in_summary = False
            assert self._layer
            self.layers[self._layer], self.opened[self._layer] = [], self._open
        elif tag == "td" and self._layer and self._cell is not None:
            self.layers[self._layer][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "details":
            self._layer = None

    def handle_data(self, data: str) -> None:
        if self._in_summary:
            self._layer = (self._layer or "") + data
        elif self._cell is not None:
            self._cell.append(data)


def _tables(page: str) -> _LayerTables:
    parser = _LayerTables()
    parser.feed(page)
    return parser


def _page_rows(document: dict[str, Any], lang: str) -> dict[str, list[list[str]]]:
    """What the wizard's stack page lists for each layer (gui/page_stack.py draws these rows)."""
    shown = {}
    for layer in stack_layers(document):
        rows = [[name, where] for name, where, _ in library_rows(layer, lang)]
        rows += [[words, value] for words, value in fact_rows(layer, lang)]
        if rows:
            title = f"{label('layer.' + layer['layer'], lang)}: {label('status.' + layer['status'], lang)}"
            shown[title] = rows
    return shown


def _assert_same_rows(document: dict[str, Any], lang: str) -> _LayerTables:
    tables = _tables(render_html(document, lang=lang))
    assert tables.layers == _page_rows(document, lang)
    return tables


@pytest.fixture(scope="module")
def not_on_path() -> dict[str, Any]:
    """``diagnose --json`` on the s4 scenario stack (CUDA 13 wheels installed, not on the loader path)."""
    import scenario_runs as runs
    import scenario_stacks as stacks

    scenario = runs.SCENARIOS["s4_wheels_not_on_path"]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    return runs.run_diagnose(stack, scenario.env()).doc


@pytest.mark.scenario
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_report_html_lists_each_layers_libraries_and_facts_as_the_stack_page(
    not_on_path: dict[str, Any], lang: str
) -> None:
    tables = _assert_same_rows(not_on_path, lang)
    cuda = next(title for title in tables.layers if title.startswith(label("layer.cuda", lang)))
    assert not any(tables.opened.values()), "folded: the findings stay near the top of the page"
    # The CUDA libraries installed where the loader does not look are said so, in the page's words.
    assert label("stack.lib_unreachable", lang) in {where for _, where in tables.layers[cuda]}


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_recorded_gpu_run_lists_the_same_rows_on_both(lang: str) -> None:
    """Recorded on an H200 (the driver's NVML facts, ONNX Runtime's build facts), replayed here."""
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    tables = _assert_same_rows(document, lang)
    assert any(rows for rows in tables.layers.values()), "the recorded run has facts to show"
    assert not any(tables.opened.values()), "a working stack's rows start folded"
