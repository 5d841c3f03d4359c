"""Page 4, the CPU baseline: the latency of the test model on the CPU."""

from __future__ import annotations

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.model_field import ModelField
from fallback_doctor.gui.page_base import (
    DoctorWizard,
    Page,
    StepPage,
    plain_label,
)
from fallback_doctor.gui.stale import clear_cells, column_cells
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
)


class CpuPage(StepPage):
    """4. The CPU baseline."""

    page_id = Page.CPU
    key = "cpu"
    step = "cpu"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self._measuring = False
        """Whether the table was last drawn while this step ran (its cells cleared)."""
        self.model = ModelField(lambda: wizard.probe_options, self)
        self.body.addWidget(self.model)
        self.model_used = plain_label(self)
        self.body.addWidget(self.model_used)
        self.table = QTableWidget(self)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (arrows move between cells)
        self.table.setCornerButtonEnabled(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.body.addWidget(self.table, 1)

    def retranslate(self) -> None:
        """Labels, and the model field's words."""
        super().retranslate()
        self.model.retranslate()

    def show_running(self, running: str | None, what: str) -> None:
        """The status line; the table redrawn when this step starts or ends (its cells cleared while
        it runs)."""
        super().show_running(running, what)
        if (running == self.step) != getattr(self, "_measuring", False):
            self._measuring = running == self.step
            self.draw()

    def draw(self) -> None:
        """The model that ran (name, dims and their sources), the latency table of the CPU baseline."""
        self.model.setEnabled(not self.doctor.bundle_mode)
        report = self.doctor.report
        self.model_used.setText(facade.model_line(self.doctor.document, language()))
        self.table.setAccessibleName(t("table.cpu"))
        self.table.horizontalHeader().setAccessibleName(f"{t('table.cpu')}: {t('table.columns')}")
        self.table.verticalHeader().setAccessibleName(f"{t('table.cpu')}: {t('table.rows')}")
        nothing_to_run = facade.no_inference_words(report, language())
        self.model.setVisible(not nothing_to_run)
        self.model_used.setVisible(not nothing_to_run)
        self.table.setVisible(not nothing_to_run)
        if nothing_to_run:  # a log: a sentence, not a table of dashes
            self.status.setText(nothing_to_run)
            return
        view = facade.cpu_view(report)
        rows = facade.session_rows(view["session"], language())
        self.table.setColumnCount(2)
        self.table.setHorizontalHeaderLabels([t("table.metric"), t("table.cpu")])
        self.table.setRowCount(len(rows))
        for row, (label, value) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(label))
            self.table.setItem(row, 1, QTableWidgetItem(value))
        if self.doctor.running == "cpu":
            clear_cells(self.table, column_cells(self.table, 1))  # the old figures are not this run's
            return
        if self.doctor.failures.get("cpu"):
            self.status.setText(self.doctor.failures["cpu"])
        elif view["session"].get("latency"):
            self.status.setText(t("cpu.done", runs=view["runs"], model=view["model"]))
        elif view["ran"]:
            why = facade.said_text(view["failure_words"], view["failure"], language()) or "?"
            self.status.setText(t("cpu.failed", why=why))
        elif self.doctor.bundle_mode:
            self.status.setText(t("run.bundle"))
