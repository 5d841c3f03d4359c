"""The look test (issue 13): every page of the wizard, for a Python target walked live on this machine,
a Bareun-like installation walked live, and a bundle made by the CLI and opened, in English and
Korean, at the default window size and at 1024x700, checked from the widgets themselves:

- no table header or cell is cut (its text fits its section on one line);
- no list item is cut or followed by a gap (its rectangle holds its wrapped text);
- no stack layer's words are cut (each line fits its button);
- no text view is empty where the document has something to show;
- the page's subtitle in the wizard's header is whole (a long Korean one was cut at its second line);
- every command in the fix pane wraps (issue 26): every finding of the real "not on the loader path"
  scenarios, at the default size, at 1024x700 and at QT_SCALE_FACTOR=2, in a child on a given screen.

The pages are offscreen (QT_QPA_PLATFORM=offscreen); the fonts are this machine's fontconfig ones,
as on a technician's Linux desktop. scripts/screenshots.py takes the README's pictures of the same
pages on a real X server (Xvfb).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTextBrowser,
    QWidget,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import make_install

pytestmark = pytest.mark.gui

FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}
SIZES = (None, (1024, 700))  # None: the wizard's own default size
PAGES = (Page.START, Page.CONFIG, Page.LOG, Page.STACK, Page.CPU, Page.GPU, Page.DIAGNOSIS)
TEXT_MARGIN = 3  # the style's text margin on each side of a cell (QStyle.PM_FocusFrameHMargin + 1)


def _cut_headers(table: QTableWidget) -> list[str]:
    header = table.horizontalHeader()
    metrics = header.fontMetrics()
    cut = []
    for column in range(table.columnCount()):
        item = table.horizontalHeaderItem(column)
        text = item.text() if item is not None else ""
        if header.isSectionHidden(column) or not text:
            continue
        needed = metrics.horizontalAdvance(text) + 2 * TEXT_MARGIN
        if needed > header.sectionSize(column) + 1:
            cut.append(f"header {text!r}: {needed} px > {header.sectionSize(column)} px")
    return cut


def _cut_cells(table: QTableWidget) -> list[str]:
    if table.wordWrap():
        return []  # a wrapping table shows all of a cell in more lines
    metrics = table.fontMetrics()
    cut = []
    for row in range(table.rowCount()):
        for column in range(table.columnCount()):
            item = table.item(row, column)
            if item is None or not item.text():
                continue
            needed = metrics.horizontalAdvance(item.text()) + 2 * TEXT_MARGIN
            if needed > table.columnWidth(column) + 1:
                cut.append(f"cell {item.text()!r}: {needed} px > {table.columnWidth(column)} px")
    return cut


def _cut_items(view: QListWidget) -> list[str]:
    cut = []
    metrics = view.fontMetrics()
    for row in range(view.count()):
        item = view.item(row)
        rect = view.visualItemRect(item)
        if not item.text().strip():
            cut.append(f"item {row + 1} is empty")
            continue
        flags = int(Qt.TextFlag.TextWordWrap)
        width = min(rect.width(), view.viewport().width()) - 8  # what is visible of the item
        needed = metrics.boundingRect(QRect(0, 0, width, 100000), flags, item.text()).height()
        if needed > rect.height():
            cut.append(f"item {row + 1} {item.text()[:40]!r}: needs {needed} px, has {rect.height()} px")
        if rect.height() > needed + 4 * metrics.lineSpacing():
            cut.append(f"item {row + 1} {item.text()[:40]!r}: a gap ({rect.height()} px for {needed} px)")
    return cut


def _cut_buttons(page: QWidget) -> list[str]:
    cut = []
    for button in page.findChildren(QPushButton):
        if not button.isVisibleTo(page) or "\n" not in button.text():
            continue  # the stack's layer buttons are the ones with lines of words
        metrics = button.fontMetrics()
        room = button.width() - 20 - 10  # the padding and the coloured left border of their style
        for line in button.text().split("\n"):
            if metrics.horizontalAdvance(line) > room:
                cut.append(f"button line {line!r}: {metrics.horizontalAdvance(line)} px > {room} px")
    return cut


def _empty_views(page: QWidget) -> list[str]:
    return [
        f"text view {view.accessibleName() or view.objectName()!r} is empty"
        for view in page.findChildren(QTextBrowser)
        if view.isVisibleTo(page) and not view.toPlainText().strip()
    ]


def _cut_subtitle(wizard: QWidget, subtitle: str) -> list[str]:
    """The header's label showing ``subtitle`` must be tall enough for its wrapped text."""
    if not subtitle:
        return []
    labels = [
        label for label in wizard.findChildren(QLabel) if label.text() == subtitle and label.isVisible()
    ]
    if not labels:
        return [f"subtitle {subtitle[:40]!r} is not shown"]
    cut = []
    for label in labels:
        needed = label.heightForWidth(label.width()) if label.wordWrap() else label.sizeHint().height()
        if needed > label.height() + 1:
            cut.append(f"subtitle {subtitle[:40]!r}: needs {needed} px, has {label.height()} px")
    return cut


def problems_of(wizard: DoctorWizard, page_id: Page) -> list[str]:
    """What a technician would trip over on one page, read from its widgets."""
    page = wizard.pages[page_id]
    found: list[str] = []
    for table in page.findChildren(QTableWidget):
        if table.isVisibleTo(page):
            if table.rowCount() == 0 and page_id in (Page.CPU, Page.GPU):
                found.append("the measures table is empty")
            found += _cut_headers(table) + _cut_cells(table)
    for view in page.findChildren(QListWidget):
        if view.isVisibleTo(page):
            found += _cut_items(view)
    if page_id == Page.STACK:
        found += _cut_buttons(page)
    if page_id != Page.START:
        found += _empty_views(page)
    found += cut_views(page)  # a command or a table in a text view runs past its right edge
    found += _cut_subtitle(wizard, page.subTitle())
    return found


def _walk(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    while wizard.currentId() != Page.DIAGNOSIS:
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None, timeout=180_000)
    wizard.flush_rendering()


@pytest.fixture(scope="module")
def cli_bundle(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """A bundle made by the command line on this machine (diagnose --bundle), as a customer sends it."""
    path = tmp_path_factory.mktemp("cli") / "from-the-customer.zip"
    command = [sys.executable, "-m", "fallback_doctor", "diagnose", "--runs", "2", "--bundle", str(path)]
    subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert path.is_file()
    return path


@pytest.mark.parametrize("which", ["python", "bareun", "bundle"])
def test_every_page_is_whole_in_both_languages_and_both_sizes(qtbot, tmp_path, cli_bundle, which) -> None:  # type: ignore[no-untyped-def]
    target: dict[str, Any]
    if which == "python":
        target = {"kind": "python"}
    elif which == "bareun":
        target = {"kind": "bareun", "bareun_root": str(make_install(tmp_path, lib="cpu"))}
    else:
        target = {"kind": "bundle", "bundle": str(cli_bundle)}
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard(target, settings=settings, probe_options=FAST, lang="en")
    qtbot.addWidget(wizard)
    default = wizard.size()
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    try:
        _walk(qtbot, wizard)
        plot = wizard.pages[Page.GPU].plot
        if plot.gpu_available is False:  # no NVML where the run was: whose machine, in words
            there = "the machine this bundle comes from" in plot._no_gpu.text()
            assert there == (which == "bundle"), plot._no_gpu.text()
        stack = wizard.pages[Page.STACK]
        assert len(stack.arrows) == 4  # the FAQ's diagram: driver -> CUDA -> cuDNN -> ONNX Runtime -> app
        problems: list[str] = []
        for lang in ("en", "ko"):
            wizard.switch_language(lang)
            for size in SIZES:
                wizard.resize(*(size or (default.width(), default.height())))
                for page_id in PAGES:
                    while wizard.currentId() > page_id:
                        wizard.back()
                    while wizard.currentId() < page_id:
                        wizard.next()
                        qtbot.waitUntil(lambda: wizard.running is None, timeout=60_000)
                    wizard.flush_rendering()
                    qtbot.wait(30)  # one turn for the layouts at the new size
                    where = f"{which} {lang} {size or 'default'} {page_id.name}"
                    problems += [f"{where}: {problem}" for problem in problems_of(wizard, page_id)]
        assert problems == [], "\n".join(problems)
    finally:
        wizard.shutdown()
        set_language("en")


def test_the_checks_see_a_cut_header_and_a_cut_item(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The look checks can fail: a header narrower than its words and a list item squeezed to one line."""
    table = QTableWidget(1, 1)
    qtbot.addWidget(table)
    table.setHorizontalHeaderLabels(["CPU baseline measured here"])
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.setColumnWidth(0, 40)
    table.setWordWrap(False)
    table.setItem(
        0, 0, __import__("PySide6.QtWidgets", fromlist=["QTableWidgetItem"]).QTableWidgetItem("x" * 40)
    )
    table.show()
    assert _cut_headers(table) and _cut_cells(table)
    view = QListWidget()
    qtbot.addWidget(view)
    view.resize(120, 200)
    view.addItem("a finding whose title is far too long for one line of a narrow list " * 2)
    view.show()
    qtbot.wait(10)
    assert _cut_items(view)


# --- commands wrap: the fix pane and every command view (issue 26 item 4) ---------------------------

SCREENS = Path(__file__).resolve().parents[1] / "data" / "screens"
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
LONG_COMMANDS = ("s4_wheels_not_on_path", "s5b_cudnn_not_on_path")
"""Scenarios whose fixes hold the long lines that were cut: ``export LD_LIBRARY_PATH=…/nvidia/cu13/lib``."""


def cut_views(page: QWidget) -> list[str]:
    """A text view is cut when its content is wider than what it shows (a horizontal scroll bar:
    a ``<pre>`` command runs past the right edge)."""
    return [
        f"text view {view.accessibleName()!r}: {view.document().idealWidth():.0f} px of text in "
        f"{view.viewport().width()} px"
        for view in page.findChildren(QTextBrowser)
        if view.isVisibleTo(page) and view.horizontalScrollBar().maximum() > 0
    ]


WRAP_CHILD = """
import json, sys, time
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QSettings
app = QApplication([])
sys.path.insert(0, sys.argv[4])
from test_gui_look import cut_views
from fallback_doctor.core import facade
from fallback_doctor.gui.wizard import DoctorWizard, Page
settings = QSettings(sys.argv[2], QSettings.Format.IniFormat)
wizard = DoctorWizard({"kind": "bundle", "bundle": sys.argv[1]}, settings=settings, lang="en")
if sys.argv[3] != "default":
    wizard.resize(*map(int, sys.argv[3].split("x")))
wizard.show()
def wait(done):
    end = time.monotonic() + 60
    while not done() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
wait(lambda: not wizard.searching)
while wizard.currentId() != Page.DIAGNOSIS:
    wizard.next()
    wait(lambda: wizard.running is None)
page = wizard.pages[Page.DIAGNOSIS]
problems, shown = [], []
for lang in ("en", "ko"):
    wizard.switch_language(lang)
    wizard.flush_rendering()
    for row in range(page.list.count()):
        page.list.setCurrentRow(row)
        app.processEvents()
        problems += [f"{lang} finding {row + 1}: {p}" for p in cut_views(page)]
        shown.append(page.detail.toPlainText())
print(json.dumps({"problems": problems, "shown": shown, "size": [wizard.width(), wizard.height()]}))
wizard.shutdown()
import shiboken6
shiboken6.delete(wizard)  # the window before the application, as gui/app.py closes it
"""


@pytest.fixture(scope="module")
def long_command_bundles(tmp_path_factory) -> list[tuple[Path, dict[str, Any]]]:  # type: ignore[no-untyped-def]
    """The real scenario stacks' diagnoses (CUDA 13 and cuDNN wheels installed, not on the loader
    path), each exported as a bundle."""
    sys.path.insert(0, str(SCENARIOS))
    import scenario_runs as runs
    import scenario_stacks as stacks
    from fallback_doctor.core import facade
    from fallback_doctor.core.bundle.export import export_bundle
    from fallback_doctor.core.bundle.preview import BundleOptions

    made = []
    for scenario_id in LONG_COMMANDS:
        scenario = runs.SCENARIOS[scenario_id]
        stack = stacks.STACKS[scenario.stack]
        stacks.build(stack)
        document = runs.run_diagnose(stack, scenario.env()).doc
        bundle = tmp_path_factory.mktemp(scenario_id) / "bundle.zip"
        export_bundle(document, bundle, facade.bundle_members(document), BundleOptions())
        made.append((bundle, document))
    return made


@pytest.mark.scenario
@pytest.mark.parametrize(
    ("screen", "scale", "size"),
    [(None, "1", "default"), (None, "1", "1024x700"), ("2560x1440.json", "2", "default")],
)
def test_every_command_wraps_in_the_fix_pane(long_command_bundles, tmp_path, screen, scale, size) -> None:  # type: ignore[no-untyped-def]
    """Issue 26: ``export LD_LIBRARY_PATH=…/nvidia/cu13/li`` was cut at the fix pane's right edge (also
    at QT_SCALE_FACTOR=2). Every finding of the real scenarios, in both languages: no text view wider
    than its pane, and each command still shown whole (wrapped, not cut or elided)."""
    import json
    import os

    from fallback_doctor.core import facade

    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREENS / screen}" if screen else "offscreen"
    env["QT_SCALE_FACTOR"] = scale
    for bundle, document in long_command_bundles:
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                WRAP_CHILD,
                str(bundle),
                str(tmp_path / "s.ini"),
                size,
                str(Path(__file__).parent),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
            check=False,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        assert seen["problems"] == [], seen
        shown = "\n".join(seen["shown"])
        commands = [
            text
            for finding in facade.all_findings(document)
            for style, text in facade.remedy_lines(finding.get("remediation"), "en")
            if style == "command"
        ]
        assert any("LD_LIBRARY_PATH=" in command for command in commands)
        for command in commands:
            assert command in shown, command


def test_the_wrap_check_sees_a_command_cut_at_the_edge(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The check can fail: a command in ``<pre>`` (as the fix pane drew it) runs past a narrow pane;
    the same command as the pane draws it now wraps."""
    from fallback_doctor.gui.page_base import browser
    from fallback_doctor.gui.page_html import finding_detail_html

    page = QWidget()
    qtbot.addWidget(page)
    view = browser(page)
    view.resize(300, 300)
    page.show()
    command = "export LD_LIBRARY_PATH=/opt/app/.venv/lib/python3.11/site-packages/nvidia/cu13/lib"
    view.setHtml(f"<pre>$ {command}</pre>")
    qtbot.wait(10)
    assert cut_views(page)
    finding = {"severity": "error", "remediation": {"commands": [command]}, "id": "x", "title": "t"}
    view.setHtml(finding_detail_html(finding, "en"))
    qtbot.wait(10)
    assert cut_views(page) == [] and command in view.toPlainText()
