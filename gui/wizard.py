"""The wizard's window: seven pages, one FAQ step each, and the navigation between them.

The pages (gui/page_*.py, one module each) render from ``DoctorWizard.document`` alone: the report
document core builds and changes (core/flow/steps.py), the one `diagnose --json` prints, so a bundle
opened on another machine shows the same pages. The steps behind the pages are gui/runner.py's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from fallback_doctor.core import facade
from fallback_doctor.gui.gc_guard import collect_on_gui_thread, freeze_survivors, hold_collections
from fallback_doctor.gui.i18n import language, language_names, set_language, system_language, t
from fallback_doctor.gui.jobs import CallJob, StepJob
from fallback_doctor.gui.leaving import ask_to_leave, may_leave
from fallback_doctor.gui.page_base import Page, StepPage
from fallback_doctor.gui.page_start import StartPage
from fallback_doctor.gui.runner import StepRunner
from fallback_doctor.gui.warmup import keep_the_gil_short, preload_modules
from fallback_doctor.gui.window_fit import fit_to_screen
from PySide6.QtCore import QEvent, QObject, QSettings, QSize, Qt, QThreadPool, QTimer, Signal, Slot
from PySide6.QtGui import QActionGroup, QCloseEvent
from PySide6.QtWidgets import QMenu, QPushButton, QWidget, QWizard

if TYPE_CHECKING:
    from fallback_doctor.core.facade import Sampler, SampleSource

__all__ = ["DoctorWizard", "Page"]

_DONE = object()
"""What ``next(steps, _DONE)`` gives when a page's pieces are all drawn."""

PAGE_CLASSES = {
    Page.START: ("page_start", "StartPage"),
    Page.CONFIG: ("page_config", "ConfigPage"),
    Page.LOG: ("page_log", "LogPage"),
    Page.STACK: ("page_stack", "StackPage"),
    Page.CPU: ("page_cpu", "CpuPage"),
    Page.GPU: ("page_gpu", "GpuPage"),
    Page.DIAGNOSIS: ("page_diagnosis", "DiagnosisPage"),
}
"""Where each page's class lives: page 0 is built before the first paint, the others (and their
modules) one per turn of the event loop after it, or at once when one is asked for earlier."""


class _FirstPaint(QObject):
    """Calls ``then`` at the next turn of the event loop after the window's first paint, once."""

    def __init__(self, window: QWidget, then: Callable[[], None]) -> None:
        super().__init__(window)
        self.done = False
        self.then = then
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """On the first paint: schedule ``then`` and stop watching."""
        if event.type() == QEvent.Type.Paint and not self.done:
            self.done = True
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self, self.then)
        return False


class _Pages(dict[Page, StepPage]):
    """The pages built so far; asking for one not built yet builds it (and those before it)."""

    def __init__(self, build: Callable[[Page], None]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, key: Page) -> StepPage:
        for page_id in Page:
            if page_id <= key and page_id not in self:
                self._build(page_id)
        return dict.__getitem__(self, key)


class DoctorWizard(StepRunner):
    """The window: the pages, the steps running behind them, the document they show."""

    document_changed = Signal()
    step_state_changed = Signal()

    def __init__(
        self,
        target: dict[str, Any] | None = None,
        *,
        settings: QSettings | None = None,
        probe_options: dict[str, Any] | None = None,
        sample_source: Callable[[], SampleSource] | None = None,
        lang: str | None = None,
    ) -> None:
        super().__init__()
        collect_on_gui_thread()  # no Qt object is ever destroyed on a pool thread
        keep_the_gil_short()  # a pool thread running Python yields the GIL within ~1 ms
        set_language(
            lang or (settings.value("language") if settings is not None else None) or system_language()
        )
        self.settings = settings if settings is not None else QSettings("fallback-doctor", "wizard")
        self.probe_options = dict(probe_options or {})
        self.sample_source = sample_source
        self.document: dict[str, Any] | None = None
        self.saved_document: dict[str, Any] | None = None
        """The document as it was last exported (the same object while nothing changed)."""
        self.target: dict[str, Any] = {}
        self.bundle_mode = False
        self.bundle_info: dict[str, Any] | None = None
        self.running: str | None = None
        self.job: StepJob | None = None
        self.jobs: list[StepJob | CallJob] = []
        self.failures: dict[str, str] = {}
        self.sampler: Sampler | None = None
        self.partial_series: dict[str, Any] | None = None
        self.searching = True
        self._started = 0.0
        self._progress = ""
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.HaveCustomButton1, True)
        self.setOption(QWizard.WizardOption.HaveCustomButton2, True)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setButtonLayout(
            [
                QWizard.WizardButton.CustomButton2,
                QWizard.WizardButton.Stretch,
                QWizard.WizardButton.CustomButton1,
                QWizard.WizardButton.BackButton,
                QWizard.WizardButton.NextButton,
                QWizard.WizardButton.FinishButton,
                QWizard.WizardButton.CancelButton,
            ]
        )
        self.customButtonClicked.connect(self._on_custom_button)
        self.language_menu = self._make_language_menu()
        self.currentIdChanged.connect(self._order_tabs_soon)
        self._pending: list[StepPage] = []
        self._pending_translate: set[StepPage] = set()
        self._steps: Iterator[None] | None = None
        """The rest of the page being rendered in pieces (``_render_next``), and that page."""
        self._steps_page: StepPage | None = None
        self._render_timer = QTimer(self)
        self._render_timer.setInterval(0)
        self._render_timer.timeout.connect(self._render_next)
        self.pages: dict[Page, StepPage] = _Pages(self._build_page)
        self._build_page(Page.START)
        # The other pages: after the first paint, at the latest in 0.25 s.
        self._first_paint = _FirstPaint(self, self._after_first_paint)
        QTimer.singleShot(250, self, self._build_rest)
        fit_to_screen(self, QSize(1100, 780), QSize(820, 600))
        self.ticker = QTimer(self)
        self.ticker.setInterval(500)
        self.ticker.timeout.connect(self._on_ticker)
        self.retranslate()
        self._render_next()  # page 0's words before the first paint
        remembered = self._remembered_target()
        self.start_page.load({**remembered, **{k: v for k, v in (target or {}).items() if v}})
        self.button(QWizard.WizardButton.CustomButton1).setEnabled(False)
        self._find_installations()
        self._preload_started = False

    # -- pages built lazily -----------------------------------------------------------------------

    def _build_page(self, page_id: Page) -> None:
        import importlib

        module, name = PAGE_CLASSES[page_id]
        page: StepPage = getattr(importlib.import_module(f"fallback_doctor.gui.{module}"), name)(self)
        self.setPage(int(page_id), page)
        dict.__setitem__(self.pages, page_id, page)
        if page_id != Page.START:  # brought up to date with the window (words, banner, a running step)
            page.show_banner()
            page.show_running(self.running, self._progress)
            self._pending_translate.add(page)
            if page not in self._pending:
                self._pending.append(page)
            self._render_timer.start()

    @Slot()
    def _after_first_paint(self) -> None:
        """core's page views (~30 ms to import) on a pool thread, then the other pages."""
        job = CallJob(lambda: facade.STACK_LAYERS)
        job.signals.finished.connect(self._build_rest)
        job.signals.failed.connect(self._build_rest)
        self._start(job)

    @Slot()
    def _build_rest(self, _value: object = None) -> None:
        """The next page not built yet: its module in one turn of the event loop, the page in the next
        (the diagnosis page's module took ~9 ms to import, the GPU page ~8 ms to make)."""
        import importlib
        import sys

        self._first_paint.done = True
        missing = [page_id for page_id in Page if page_id not in self.pages]
        if missing:
            module = f"fallback_doctor.gui.{PAGE_CLASSES[missing[0]][0]}"
            if module in sys.modules:
                self._build_page(missing[0])
            else:
                importlib.import_module(module)
            QTimer.singleShot(0, self, self._build_rest)
        elif not self._preload_started:  # then, while page 0 waits: the modules the later pages need
            self._preload_started = True
            self._preload()

    def nextId(self) -> int:  # noqa: N802 - Qt's name
        """The next page in FAQ order (also while the later pages are still being built)."""
        current = self.currentId()
        return current + 1 if 0 <= current < int(Page.DIAGNOSIS) else -1

    def validateCurrentPage(self) -> bool:  # noqa: N802 - Qt's name
        """Before leaving a page, every page exists (normally long since)."""
        _ = self.pages[Page.DIAGNOSIS]
        return bool(super().validateCurrentPage())

    @Slot(int)
    def _order_tabs_soon(self, _page_id: int = -1) -> None:
        """After the page is painted (a turn of the event loop of its own)."""
        QTimer.singleShot(0, self, self._order_tabs)

    @Slot(int)
    def _order_tabs(self, _page_id: int = -1) -> None:
        """Tab in the visual order: the page top to bottom, then the button row left to right.

        QWizard chains its buttons in its own order (the language button, leftmost, came last).
        """
        page = self.currentPage()
        language_button = self.button(QWizard.WizardButton.CustomButton2)
        first = self.button(QWizard.WizardButton.CustomButton1)
        if page is None:
            return
        tab = Qt.FocusPolicy.TabFocus.value  # ints: a flag combination made on the fly costs ~1 ms each
        unseen = set(page.findChildren(QWidget))
        focusable = {w for w in unseen if w.focusPolicy().value & tab and w.isVisibleTo(page)}
        last: QWidget | None = None
        widget: QWidget = page
        for _ in range(500):  # the chain from the page to its last own widget, and not a widget further:
            if not unseen:  # the first of the wizard's own ones took ~12 ms to reach (PySide wraps it)
                break
            following = widget.nextInFocusChain()
            if following is None:
                break
            widget = following
            if widget is page:
                break
            if widget in unseen:
                unseen.discard(widget)
                last = widget if widget in focusable else last
        if last is None:
            return
        QWidget.setTabOrder(last, language_button)
        QWidget.setTabOrder(language_button, first)
        QWidget.setTabOrder(first, self.button(QWizard.WizardButton.BackButton))

    def _preload(self) -> None:
        """Import the modules the later pages need on a pool thread while the technician reads page 0
        (gui/warmup.py); the graph is then built on the GUI thread at an idle moment.

        An earlier build imported pyqtgraph on the pool thread while the window was busy building
        pages, and crashed now and then; now the pages are built first (``_build_rest``) and the
        import starts after that, while page 0 only waits for the technician."""
        job = CallJob(preload_modules)
        job.signals.finished.connect(self._on_preloaded)
        job.signals.failed.connect(self._on_preload_failed)
        hold_collections()  # no collection walks the modules half-loaded (gui/gc_guard.py)
        self._start(job)

    @Slot(object)
    def _on_preloaded(self, _value: object) -> None:
        """The modules are in: exempt their objects from collections (gc_guard), then build the graph."""
        freeze_survivors()
        QTimer.singleShot(0, self.gpu_page.plot, self.gpu_page.plot.build)  # not after the window is gone

    @Slot(str)
    def _on_preload_failed(self, _message: str) -> None:
        """A module did not load: collections go on (the graph is then made when first needed)."""
        freeze_survivors()

    # -- pages and words ------------------------------------------------------------------------

    @property
    def start_page(self) -> StartPage:
        """Page 0."""
        page = self.pages[Page.START]
        assert isinstance(page, StartPage)
        return page

    def retranslate(self) -> None:
        """Every word of the window in the current language (the findings' own words included)."""
        self.setWindowTitle(t("app.title"))
        self.setButtonText(QWizard.WizardButton.NextButton, t("button.next"))
        self.setButtonText(QWizard.WizardButton.BackButton, t("button.back"))
        self.setButtonText(QWizard.WizardButton.FinishButton, t("button.finish"))
        self.setButtonText(QWizard.WizardButton.CancelButton, t("button.close"))
        self.setButtonText(QWizard.WizardButton.CustomButton1, t("button.stop"))
        self.setButtonText(QWizard.WizardButton.CustomButton2, t("language.menu", name=t("language.name")))
        self.button(QWizard.WizardButton.CustomButton1).setToolTip(t("button.stop.tip"))
        self.button(QWizard.WizardButton.CustomButton2).setToolTip(t("language.menu.tip"))
        for action in self.language_menu.actions():
            action.setChecked(action.data() == language())
        for button_id in (
            QWizard.WizardButton.NextButton,
            QWizard.WizardButton.BackButton,
            QWizard.WizardButton.FinishButton,
            QWizard.WizardButton.CancelButton,
            QWizard.WizardButton.CustomButton1,
            QWizard.WizardButton.CustomButton2,
        ):
            button = self.button(button_id)
            button.setAccessibleName(button.text().replace("&", ""))
        self._queue_pages(retranslate=True)

    def _queue_pages(self, retranslate: bool = False) -> None:
        """Queue every page, the one on screen first, for the next turns of the event loop: a page's
        words in one turn, its content in pieces (``StepPage.render_steps``) in the next ones, so that
        no turn holds the window for longer than a frame (benchmarks/bench_gui_stall.py)."""
        shown = self.currentPage()
        current = shown if isinstance(shown, StepPage) else None
        ordered = (
            [current, *(p for p in self.pages.values() if p is not current)]
            if current
            else list(self.pages.values())
        )
        for page in ordered:
            if retranslate:
                self._pending_translate.add(page)
            if page not in self._pending:
                self._pending.append(page)
        if current in self._pending:  # the page on screen first, however long the queue
            self._pending.remove(current)
            self._pending.insert(0, current)
        self._steps = None  # a page drawn part-way is queued again: drawn from its start
        self._render_timer.start()

    @Slot()
    def _render_next(self) -> None:
        """One piece of the queued rendering: a page's words, or the next piece of its content."""
        if self._steps is not None:
            if next(self._steps, _DONE) is not _DONE:
                return
            self._steps = None
        if not self._pending:
            self._render_timer.stop()
            return
        page = self._pending[0]
        if page in self._pending_translate:  # its words this turn, its content the next (each < a frame)
            self._pending_translate.discard(page)
            page.retranslate()
            return
        self._pending.pop(0)
        steps = page.render_steps()
        if next(steps, _DONE) is not _DONE:
            self._steps, self._steps_page = steps, page

    def bring_up_to_date(self, page: StepPage) -> None:
        """What the queue still owes ``page`` (its words, the rest of its content), now: it is being
        opened (``StepPage.initializePage``). A page the queue is done with is not drawn again."""
        if page in self._pending_translate:
            self._pending_translate.discard(page)
            page.retranslate()
        if page is self._steps_page and self._steps is not None:
            for _ in self._steps:
                pass
            self._steps = None
        if page in self._pending:
            self._pending.remove(page)
            page.draw()

    def flush_rendering(self) -> None:
        """Render every queued page now (tests and screenshots)."""
        while self._pending or self._steps is not None:
            self._render_next()
        self._render_timer.stop()
        gpu = dict.get(self.pages, Page.GPU)
        if gpu is not None:
            gpu.plot.flush()  # type: ignore[attr-defined]
        self._order_tabs()  # (otherwise at the next turn of the event loop)

    def _make_language_menu(self) -> QMenu:
        """The language button's menu: every catalogue language by its own name (gui/i18n.py)."""
        button = self.button(QWizard.WizardButton.CustomButton2)
        menu = QMenu(button)
        group = QActionGroup(menu)
        for code, name in language_names():
            action = menu.addAction(name)
            action.setData(code)
            action.setCheckable(True)
            group.addAction(action)
            action.triggered.connect(lambda _checked=False, code=code: self.switch_language(code))
        if isinstance(button, QPushButton):
            button.setMenu(menu)
        return menu

    def switch_language(self, lang: str | None = None) -> None:
        """Show the window in ``lang`` (default: the next language of the menu) and remember it."""
        codes = [code for code, _ in language_names()]
        following = codes[(codes.index(language()) + 1) % len(codes)] if language() in codes else "en"
        set_language(lang or following)
        self.settings.setValue("language", language())
        self.retranslate()

    @Slot(int)
    def _on_custom_button(self, which: int) -> None:
        if which == QWizard.WizardButton.CustomButton1.value:
            self.cancel_step()

    # -- the target -----------------------------------------------------------------------------

    def _remembered_target(self) -> dict[str, object]:
        value = self.settings.value("target")
        if isinstance(value, str):
            try:
                loaded = json.loads(value)
            except ValueError:
                return {}
            return loaded if isinstance(loaded, dict) else {}
        return {}

    def set_target(self, target: dict[str, Any]) -> None:
        """The target chosen on the start page: remembered; a new one discards the old results."""
        remembered = {k: v for k, v in target.items() if k != "log_text" and v}
        self.settings.setValue("target", json.dumps(remembered))
        self.settings.sync()
        if target == self.target and self.document is not None:
            return
        self.cancel_step()
        self.target = dict(target)
        self.document = None
        self.failures.clear()
        self.bundle_mode = target.get("kind") == "bundle"
        self.bundle_info = None
        self.partial_series = None
        self.gpu_page.plot.forget()
        for page in self.pages.values():
            page.show_banner()
        self._render_all()

    def _find_installations(self) -> None:
        environ = dict(os.environ)
        job = CallJob(lambda: facade.find_installations(environ))
        job.signals.finished.connect(self._on_installations)
        job.signals.failed.connect(self._on_installations_failed)
        self._start(job)

    @Slot(object)
    def _on_installations(self, roots: object) -> None:
        self.searching = False
        self.start_page.show_installations(list(roots) if isinstance(roots, list) else [])

    @Slot(str)
    def _on_installations_failed(self, _message: str) -> None:
        self.searching = False
        self.start_page.show_installations([])

    # -- closing --------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop everything: the step's processes, the sampler, the pool's threads."""
        if self.job is not None:
            self.job.cancel()
        self._stop_sampler(keep=False)
        self.ticker.stop()
        QThreadPool.globalInstance().waitForDone(3000)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        """Closing the window (through done: it may ask first) stops whatever runs."""
        super().closeEvent(event)

    def ask_to_leave(self) -> str:
        """Export, discard or stay, asked of the technician (gui/leaving.py)."""
        return ask_to_leave(self)

    def done(self, result: int) -> None:
        """Finish or Close: an unsaved diagnosis asks first; then stop whatever runs."""
        if not may_leave(self):
            return
        self.shutdown()
        super().done(result)
