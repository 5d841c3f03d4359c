"""Page 5, the GPU retry: the live graph, the verdict and the CPU baseline beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.page_base import (
    STATUS_COLOURS,
    DoctorWizard,
    Page,
    StepPage,
    esc,
    plain_label,
    rich_label,
    with_caption,
)
from fallback_doctor.gui.stale import clear_cells, column_cells
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
)

if TYPE_CHECKING:
    from fallback_doctor.core.facade import GpuSummary, Report


class GpuPage(StepPage):
    """5. The GPU retry with the live graph."""

    page_id = Page.GPU
    key = "gpu"
    step = "gpu"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self._measuring: str | None = None
        """The measuring step the table was last drawn for (its cells cleared while it runs)."""
        from fallback_doctor.gui.plot import GpuPlot

        self.plot = GpuPlot(self)
        self.verdict = rich_label(self)
        self.table = QTableWidget(self)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (arrows move between cells)
        self.table.setCornerButtonEnabled(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(120)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.cpu_note = plain_label(self)
        side = with_caption(self, self.table, self.cpu_note)
        self.body.addWidget(self.verdict)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.plot)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        self.body.addWidget(splitter, 1)
        self.measured = splitter

    def retranslate(self) -> None:
        """Labels, and the graph's axes."""
        super().retranslate()
        self.plot.retranslate()

    def show_running(self, running: str | None, what: str) -> None:
        """The status line; the table redrawn when a measuring step starts or ends (its cells
        cleared while it runs)."""
        super().show_running(running, what)
        measuring = running if running in ("cpu", "gpu") else None
        if measuring != getattr(self, "_measuring", None) and self.doctor.document is not None:
            self._measuring = measuring
            self._fill_table(facade.gpu_summary(self.doctor.document))

    def draw(self) -> None:
        """The graph (live while running, else the recorded series), the verdict and the comparison."""
        for _ in self.render_steps():
            pass

    def render_steps(self) -> Iterator[None]:
        """The graph; the comparison table; the verdict (a piece each)."""
        self.table.setAccessibleName(t("table.gpu"))
        self.table.horizontalHeader().setAccessibleName(f"{t('table.gpu')}: {t('table.columns')}")
        self.verdict.setAccessibleName(t("gpu.name"))
        document = self.doctor.report
        nothing_to_run = facade.no_inference_words(document, language())
        self.measured.setVisible(not nothing_to_run)
        if nothing_to_run:  # a log: a sentence, not a graph and a table of dashes
            self.verdict.setText(f"<p>{esc(nothing_to_run)}</p>")
            self.status.setText("")
            return
        summary = facade.gpu_summary(document)
        if self.doctor.running != "gpu":
            self.plot.show_series(summary["series"], elsewhere=self.doctor.bundle_mode)
            yield
        self._fill_table(summary)
        yield
        if self.doctor.running == "gpu":
            return
        if not summary["ran"]:
            words = self.doctor.failures.get("gpu") or (t("run.bundle") if self.doctor.bundle_mode else "")
            self.verdict.setText(f"<p>{esc(words)}</p>" if words else "")
            yield
            return
        self.verdict.setText(self._verdict_html(document, summary))
        self.status.setText(self.doctor.failures.get("gpu") or "")
        yield

    def _fill_table(self, summary: GpuSummary) -> None:
        """The CPU baseline (the CPU page's figures) beside the GPU retry, the speed-up, equal outputs."""
        lang = language()
        self.table.setColumnCount(3)
        self.table.setHorizontalHeaderLabels([t("table.metric"), t("table.cpu"), t("table.gpu")])
        cpu_rows = facade.session_rows(summary["cpu"], lang)
        gpu_rows = facade.session_rows(summary["gpu"], lang)
        if summary["speedup"]:
            speedup = f"{summary['speedup']:.2f}\u00d7"
        else:
            speedup = t("table.speedup_none") if summary["ran"] and not summary["on_gpu"] else "-"
            if summary["on_gpu"] and summary["gpu_one_run"]:
                speedup = t("table.speedup_one_run")
        equal = summary["outputs_equal"]
        extra = [
            (t("table.speedup"), "", speedup),
            (t("table.equal"), "", "-" if equal is None else t("yes") if equal else t("no")),
        ]
        rows = [(a[0], a[1], b[1]) for a, b in zip(cpu_rows, gpu_rows, strict=True)] + extra
        self.table.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        running = self.doctor.running
        if running in ("cpu", "gpu"):  # that step's old figures, and the speed-up, are not this run's
            column = 1 if running == "cpu" else 2
            clear_cells(self.table, [*column_cells(self.table, column), (len(cpu_rows), 2)])
        self._fit_table()
        note = t("gpu.cpu_note") if summary["baseline_ran"] else ""
        placed = facade.placement_words(summary["gpu_nodes"], lang)
        placement = t("gpu.placement", placement=placed) if placed else ""
        model = facade.model_line(self.doctor.document, lang)
        self.cpu_note.setText("\n".join(line for line in (model, placement, note) if line))

    def _fit_table(self) -> None:
        """Wide enough for every header and value on one line: nothing is cut ("PU baseli")."""
        header = self.table.horizontalHeader()
        for column in range(self.table.columnCount()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.resizeColumnsToContents()
        width = sum(self.table.columnWidth(c) for c in range(self.table.columnCount()))
        frame = 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        self.table.setMinimumWidth(width + frame)
        header.setStretchLastSection(True)

    def _verdict_html(self, document: Report | None, summary: GpuSummary) -> str:
        """What the retry showed, the top cause, each strategy tried (our markup, values escaped)."""
        lang = language()
        headline = facade.gpu_headline(summary)
        colour = {"gpu_verified": STATUS_COLOURS["ok"], "fallback": STATUS_COLOURS["error"]}.get(
            headline, STATUS_COLOURS["warning"]
        )
        head = t(f"gpu.verdict.{headline}", verdict=summary["verdict"])
        # The first cause is core's (core/judgement/judge.py), the same on every page and in every report;
        # when it ran on the GPU there is no "why", only the first thing also found.
        if headline == "gpu_verified":
            found = facade.view_of(document).findings
            said, first = "gpu.also", (found[0] if found else None)
        else:
            chosen = facade.first_cause(document)
            said, first = "gpu.cause", (facade.finding_of(chosen) if chosen is not None else None)
        cause = t(said, cause=facade.finding_words(first, lang)["title"]) if first else ""
        tried = [esc(line) for line in facade.strategy_lines(summary, lang)]
        return (
            f"<p style='font-size:large; color:{colour}'><b>{esc(head)}</b></p>"
            + (f"<p>{esc(cause)}</p>" if cause else "")
            + (f"<p><b>{esc(t('gpu.strategies'))}</b></p>" if tried else "")
            + ("<ul>" + "".join(f"<li>{line}</li>" for line in tried) + "</ul>" if tried else "")
        )
