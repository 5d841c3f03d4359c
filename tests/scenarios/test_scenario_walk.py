"""The done-when walk of issue 26: every scenario, every surface, both languages, at once.

Each case is one document, made once and shared by both languages: every scenario of
tests/scenarios (``diagnose --json`` on its real broken stack, the memoised run the other scenario
tests use; s4 also with the test inference, for "What was tried"), the two Bareun-like
installations (a real CPU-only ONNX Runtime in libPath, asking for CUDA or configured for the CPU),
and each scenario's own ONNX Runtime output pasted as a log (the log target, in-process as the
wizard's paste runs it). Each document is exported as a bundle in each language and that bundle is
opened in the wizard (offscreen Qt), as a technician opens what a customer sent.

Per case and language the walk checks:
- the same first cause in the text report, the JSON, the bundle's report.json, its report.html,
  ``bundle show``, the diagnosis page's first row and the GPU page's "Why";
- that first cause's role can cause a fallback (never context: a licence file, a log that says
  nothing);
- every fix the diagnosis page copies passes ``bash -n`` and shellcheck (and every script of the
  document, in both languages: test_scenario_scripts.py's check);
- nothing is elided on any page (test_gui_look.py's checks, and each finding's detail pane);
- in Korean, no English of ours on any page, in the finding texts or in the text report
  (tests/core/korean_leftovers.py).
"""

from __future__ import annotations

import html
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyqtgraph  # noqa: F401  - on the main thread, before a wizard's warm-up thread imports it
import pytest
import scenario_runs as runs
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.bundle.safe_open import open_bundle
from fallback_doctor.core.judge import document_first_cause
from fallback_doctor.core.report import render_text
from fallback_doctor.core.texts import label
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QTableWidget, QTextBrowser, QWidget
from test_scenario_scripts import _check_document, _problems

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))

from korean_leftovers import evidence_leftovers, leftovers, text_leftovers
from test_gui_look import cut_views, problems_of

pytestmark = [pytest.mark.scenario, pytest.mark.gui, pytest.mark.timeout(900)]

PAGES = (Page.START, Page.CONFIG, Page.LOG, Page.STACK, Page.CPU, Page.GPU, Page.DIAGNOSIS)
CAN_CAUSE = ("decides", "cause")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
CODE = re.compile(r"[=()\[\]\"]")
"""A line of the text report without a Korean word but with code's signs: a code block's line."""

CASES = (
    *sorted(runs.SCENARIOS),
    "s4_wheels_not_on_path+full",
    "bareun:cuda",
    "bareun:cpu",
    *(f"pasted:{scenario}" for scenario in sorted(runs.SCENARIOS)),
)


@pytest.fixture(scope="session")
def documents(diagnosis, ort, tmp_path_factory) -> Any:  # type: ignore[no-untyped-def]
    """A case's document, made once (the scenario runs are memoised by the session fixtures)."""
    made: dict[str, dict[str, Any]] = {}

    def get(case: str) -> dict[str, Any]:
        if case not in made:
            made[case] = _document(case, diagnosis, ort, tmp_path_factory)
        return made[case]

    return get


def _document(case: str, diagnosis: Any, ort: Any, tmp_path_factory: Any) -> dict[str, Any]:
    kind, _, name = case.partition(":")
    if kind == "bareun":
        _root, document = runs.bareun_like_document(tmp_path_factory.mktemp("bareun"), name)
        return document
    if kind == "pasted":
        from fallback_doctor.core.step_child import run_inspection

        output = ort(name).output
        assert output.strip(), name
        return run_inspection({"kind": "log", "log_text": output})
    scenario, _, full = case.partition("+")
    result = diagnosis(scenario, "--full", "--runs", "2") if full else diagnosis(scenario)
    return dict(result.doc)


def _first_numbered(text: str) -> str | None:
    """The id of the first numbered finding of a text report ("1. [ERROR] title  (id)")."""
    found = re.search(r"^1\. \[[^\]]+\] .*\(([\w.]+)\)$", text, re.MULTILINE)
    return found.group(1) if found else None


def _title(finding: dict[str, Any], lang: str) -> str:
    return str(facade.finding_words(finding, lang)["title"])


def _prose(document: QTextDocument) -> str:
    """A text view's words without its code: commands, code and the values a system wrote are set
    in the fixed-pitch font (gui/page_html.py), and only they carry a font family of their own."""
    lines = []
    block = document.begin()
    while block.isValid():
        lines.append(
            "".join(it.fragment().text() for it in block if not it.fragment().charFormat().fontFamilies())
        )
        block = block.next()
    return "\n".join(lines)


def _shown_texts(page: QWidget) -> Iterator[str]:
    """Every prose text a page shows: labels, text views, list items, table cells, buttons."""
    for widget in page.findChildren(QLabel):
        if widget.isVisibleTo(page) and widget.text():
            rich = QTextDocument()
            rich.setHtml(widget.text())
            yield _prose(rich)
    for view in page.findChildren(QTextBrowser):
        if view.isVisibleTo(page):
            yield _prose(view.document())
    for items in page.findChildren(QListWidget):
        if items.isVisibleTo(page):
            yield from (items.item(row).text() for row in range(items.count()))
    for table in page.findChildren(QTableWidget):
        if table.isVisibleTo(page):
            for row in range(table.rowCount()):
                for column in range(table.columnCount()):
                    cell = table.item(row, column)
                    if cell is not None:
                        yield cell.text()
    for button in page.findChildren(QPushButton):
        if button.isVisibleTo(page):
            yield button.text()


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def _surfaces(document: dict[str, Any], bundle: Path, lang: str) -> dict[str, Any]:
    """The first cause (an id, or a title where the surface shows only words) of each surface."""
    with zipfile.ZipFile(bundle) as archive:
        name = next(n for n in archive.namelist() if n.endswith("report.html"))
        page = html.unescape(archive.read(name).decode("utf-8"))
    report = open_bundle(str(bundle)).document
    first_in_page = re.search(r"<b>1\. ([^<]+)</b>", page)
    return {
        "text": _first_numbered(render_text(document, lang)),
        "json": document.get("first_cause"),
        "report.json": report.get("first_cause"),
        "bundle show": _first_numbered(render_text(report, lang)),
        "report.html": first_in_page.group(1).strip() if first_in_page else None,
    }


def _open(qtbot: Any, bundle: Path, tmp_path: Path, lang: str) -> DoctorWizard:
    settings = QSettings(str(tmp_path / f"settings-{lang}.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "bundle", "bundle": str(bundle)}, settings=settings, lang=lang)
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    while wizard.currentId() != Page.DIAGNOSIS:
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None, timeout=60_000)
    wizard.flush_rendering()
    return wizard


def _walk_pages(qtbot: Any, wizard: DoctorWizard, lang: str) -> tuple[list[str], list[str]]:
    """(problems, every text shown) over every page, the diagnosis page finding by finding."""
    problems: list[str] = []
    shown: list[str] = []
    for page_id in PAGES:
        while wizard.currentId() > page_id:
            wizard.back()
        while wizard.currentId() < page_id:
            wizard.next()
            qtbot.waitUntil(lambda: wizard.running is None, timeout=60_000)
        wizard.flush_rendering()
        qtbot.wait(20)
        page = wizard.pages[page_id]
        problems += [f"{page_id.name}: {problem}" for problem in problems_of(wizard, page_id)]
        shown += list(_shown_texts(page))
    diagnosis = wizard.pages[Page.DIAGNOSIS]
    for row in range(diagnosis.list.count()):
        diagnosis.list.setCurrentRow(row)
        qtbot.wait(5)
        finding = diagnosis.findings[row].id
        problems += [f"finding {finding}: {problem}" for problem in cut_views(diagnosis)]
        shown.append(_prose(diagnosis.detail.document()))
        fix = diagnosis.fix_text()
        if fix:
            problems += [f"copied fix of {finding} ({lang}): {said}" for said in _problems(fix)]
    return problems, shown


@pytest.mark.parametrize("case", CASES)
def test_the_walk(case: str, documents: Any, qtbot: Any, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    document = documents(case)
    first = document_first_cause(document)
    findings = document.get("findings") or []
    if case.startswith("pasted:"):
        assert document["target"]["kind"] == "log" and all(f["id"].startswith("log.") for f in findings)
    if first is not None:
        assert first["role"] in CAN_CAUSE, first  # a licence file, a log that says nothing: never first
        assert findings[0]["id"] == first["id"]
    _check_document(document)  # every script of the document, in en and ko: bash -n and shellcheck
    failures: list[str] = []
    for lang in ("en", "ko"):
        bundle = tmp_path / f"{lang}.zip"
        export_bundle(document, bundle, facade.bundle_members(document), BundleOptions(lang=lang))
        surfaces = _surfaces(document, bundle, lang)
        wanted_id = first["id"] if first is not None else None
        for surface in ("text", "json", "report.json", "bundle show"):
            if surfaces[surface] != wanted_id and not (
                wanted_id is None and surface in ("text", "bundle show")
            ):
                failures.append(f"{lang} {surface}: {surfaces[surface]} instead of {wanted_id}")
        if first is not None and surfaces["report.html"] != _title(first, lang):
            failures.append(f"{lang} report.html: {surfaces['report.html']!r} first")
        wizard = _open(qtbot, bundle, tmp_path, lang)
        try:
            diagnosis = wizard.pages[Page.DIAGNOSIS]
            if first is not None:
                if diagnosis.findings[0].id != first["id"]:
                    failures.append(f"{lang} diagnosis page: {diagnosis.findings[0].id} first")
                gpu = _plain(wizard.pages[Page.GPU].verdict.text())
                why = label("gpu.cause", lang, cause="").strip()
                if why in gpu and _title(first, lang) not in gpu:
                    failures.append(f"{lang} GPU page: {gpu!r}")
            problems, shown = _walk_pages(qtbot, wizard, lang)
            failures += [f"{lang} {problem}" for problem in problems]
            if lang == "ko":
                failures += [f"ko page: {words} in {text!r}" for text in shown if (words := leftovers(text))]
                text = render_text(document, "ko")
                machine = label("summary.machine", "ko", machine="", target="", created="").split(":")[0]
                prose = [  # a command, code, and the machine's own name for its system are not ours
                    line
                    for line in text.splitlines()
                    if not line.strip().startswith("$")
                    and not line.startswith(machine + ":")
                    and not (HANGUL.search(line) is None and CODE.search(line))
                ]
                failures += [f"ko text report: {line!r}" for line in prose if leftovers(line)]
        finally:
            wizard.shutdown()
            set_language("en")
    failures += [f"ko finding text {fid} {part}: {text!r}" for fid, part, text in text_leftovers(document)]
    failures += [f"ko evidence {fid} {what}: {text!r}" for fid, what, text in evidence_leftovers(document)]
    assert failures == [], f"{case}:\n" + "\n".join(dict.fromkeys(failures))
