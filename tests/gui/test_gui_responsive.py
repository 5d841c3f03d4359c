"""The wizard keeps its event loop free (issue 17): what it draws, it draws a piece per turn of the loop.

These check the order and the pieces, never a duration (benchmarks/bench_gui_stall.py measures the
stalls): the rendering queue draws the page on screen first and each page in pieces; opening a page
draws only what the queue still owes it; the graph is laid out and its axes drawn before it is
shown; its right-click menu is made when first asked for; the garbage collector waits for the
modules preloaded on a pool thread and then leaves them out of its walks. Offscreen Qt; the report
document is a real one (tests/data/gpu_run: a GPU run on an H200).
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core import facade
from fallback_doctor.gui import gc_guard
from fallback_doctor.gui.i18n import set_language, t
from fallback_doctor.gui.plot import GpuPlot
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QVBoxLayout, QWidget

pytestmark = pytest.mark.gui

DOCUMENT = Path(__file__).parents[1] / "data" / "gpu_run" / "h200-working.json"


@pytest.fixture
def wizard(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
    qtbot.addWidget(made)
    made.show()
    qtbot.waitUntil(lambda: not made.searching, timeout=10_000)
    made.flush_rendering()
    yield made
    made.shutdown()
    set_language("en")


def _document() -> dict[str, Any]:
    return json.loads(DOCUMENT.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_page_on_screen_is_queued_first_and_a_page_is_drawn_in_pieces(wizard) -> None:  # type: ignore[no-untyped-def]
    wizard.document = _document()
    wizard._render_all()
    page = wizard.diagnosis_page
    assert page.list.count() == 0  # nothing is drawn in the turn that changed the document …
    assert wizard._pending[0] is wizard.currentPage()  # … and the page on screen comes first
    while wizard._steps_page is not page:
        wizard._render_next()
    assert page.verdict.text() and page.list.count() == 0  # its verdict in one turn …
    wizard._render_next()
    findings = facade.all_findings(wizard.document)
    assert page.list.count() == len(findings) > 0  # … its list in the next …
    title = facade.finding_words(findings[0], "en")["title"]
    assert title not in page.detail.toPlainText()  # … the finding in full after that
    wizard.flush_rendering()
    assert title in page.detail.toPlainText() and not wizard._pending and wizard._steps is None


def test_opening_a_page_draws_only_what_the_queue_still_owes_it(wizard, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    wizard.document = _document()
    wizard._render_all()
    page = wizard.pages[Page.STACK]
    drawn: list[object] = []
    real = page.draw
    monkeypatch.setattr(page, "draw", lambda: (drawn.append(page), real())[1])
    wizard.bring_up_to_date(page)  # queued: drawn now, and no more in the queue
    assert drawn == [page] and page not in wizard._pending
    assert page.detail.toPlainText().strip()
    wizard.bring_up_to_date(page)  # drawn already: not again
    assert drawn == [page]


def test_checking_a_finding_again_reads_the_new_document_not_the_list_drawn_before(wizard) -> None:  # type: ignore[no-untyped-def]
    document = _document()
    finding = facade.all_findings(document)[0]
    page = wizard.diagnosis_page
    page.checking = str(finding.get("id"))
    wizard.document = document  # the list on the page is not drawn yet
    page.after_check()
    assert page.note.text() == t("diag.again.still")
    page.checking = "a finding no longer there"
    page.after_check()
    assert page.note.text() == t("diag.again.gone")


class _Sampler:
    """The sampler's face the graph reads: no samples, GPU readings available."""

    def state(self) -> Any:
        class Gpu:
            source = "nvml"
            reason = ""

            def sentence(self) -> str:
                return "NVML: ok"

        class State:
            gpu_readings_available = True
            gpu = Gpu()

        return State()

    def since(self, sequence: int) -> tuple[list[Any], int]:
        return [], sequence

    def marks(self) -> list[Any]:
        return []


def test_the_graph_is_laid_out_and_its_axes_drawn_before_it_is_shown(qtbot) -> None:  # type: ignore[no-untyped-def]
    set_language("en")
    window = QWidget()
    qtbot.addWidget(window)
    plot = GpuPlot(window)
    QVBoxLayout(window).addWidget(plot)
    window.resize(660, 560)
    plot._build()
    plot.flush()
    window.show()
    plot.start(_Sampler())
    assert plot.stack.currentWidget() is plot.reveal.blank  # a placeholder of its size first
    qtbot.waitUntil(lambda: plot.stack.currentWidget() is plot._graphics, timeout=10_000)
    assert plot._graphics.size() == plot.reveal.blank.size()
    drawn = [axis for axis in plot._axes() if axis.isVisible()]
    assert drawn and all(axis.picture is not None for axis in drawn)
    plot.stop(keep=False)
    plot.show_series(None)  # no series: the waiting words
    assert plot.stack.currentWidget() is plot.waiting


def test_a_hidden_graph_is_prepared_when_shown_and_at_once_when_flushed(qtbot) -> None:  # type: ignore[no-untyped-def]
    set_language("en")
    plot = GpuPlot()
    qtbot.addWidget(plot)
    plot._build()
    plot.start(_Sampler())  # hidden: nothing to lay out yet
    assert plot.stack.currentWidget() is plot.reveal.blank and plot.reveal.wants_graph()
    plot.flush()
    assert plot.stack.currentWidget() is plot._graphics
    plot.stop(keep=False)


def test_the_graphs_right_click_menu_is_made_when_first_asked_for(qtbot) -> None:  # type: ignore[no-untyped-def]
    plot = GpuPlot()
    qtbot.addWidget(plot)
    plot._build()
    view = plot._cpu_plot.vb
    assert view.menuEnabled() and view.menu is None
    menu = view.getMenu(None)
    assert menu is not None and menu is view.menu and menu.actions()
    assert view.getContextMenus(None) == menu.actions()


def test_collections_wait_for_the_preload_then_leave_what_it_loaded_out(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gc_guard.collect_on_gui_thread()  # (qtbot: the application the guard's timer needs)
    guard = gc_guard._guard
    assert guard is not None
    collected: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    monkeypatch.setattr(gc, "get_count", lambda: (10**6, 0, 0))
    try:
        gc_guard.hold_collections()
        guard.check()
        assert collected == []  # held while modules load
        gc_guard.freeze_survivors()
        assert gc.get_freeze_count() > 0
        guard.check()
        assert collected == [0]  # collecting again, without what was alive at the freeze
    finally:
        monkeypatch.undo()
        gc_guard.collect_now_and_restore()
    assert gc.get_freeze_count() == 0 and gc.isenabled() and not guard.held


def test_the_checked_again_note_follows_a_language_switch(wizard) -> None:  # type: ignore[no-untyped-def]
    """Issue 26: "Checked again" stayed in English after switching to Korean."""
    document = _document()
    page = wizard.diagnosis_page
    page.checking = str(facade.all_findings(document)[0].get("id"))
    wizard.document = document
    page.after_check()
    english = page.note.text()
    try:
        wizard.switch_language("ko")
        wizard.bring_up_to_date(page)
        assert page.note.text() == facade.label("diag.again.still", "ko") != english
        wizard.switch_language("en")
        wizard.bring_up_to_date(page)
        assert page.note.text() == english
    finally:
        set_language("en")
