"""Page 6, the diagnosis: the ranked findings, the fix, check again, export."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from fallback_doctor.core import facade
from fallback_doctor.gui.handover import HandOver
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.page_base import (
    STATUS_COLOURS,
    STATUS_SIGNS,
    DoctorWizard,
    Page,
    StepPage,
    browser,
    esc,
    plain_label,
    rich_label,
    tip,
)
from fallback_doctor.gui.page_html import (
    finding_detail_html,
    verdict_html,
)
from fallback_doctor.gui.wrapped_list import wrapped_list
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidgetItem,
    QPushButton,
    QSplitter,
)

if TYPE_CHECKING:
    from fallback_doctor.core.facade import Finding


class DiagnosisPage(StepPage):
    """6. The ranked findings, the fix, how to verify it, check again, export."""

    page_id = Page.DIAGNOSIS
    key = "diag"
    step = None

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.verdict = rich_label(self)
        self.body.addWidget(self.verdict)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.list = wrapped_list(splitter)  # every title whole, at any width, in both languages
        self.list.setSpacing(2)
        self.list.currentRowChanged.connect(self._on_row)
        self.detail = browser(splitter)
        splitter.addWidget(self.list)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.body.addWidget(splitter, 1)
        buttons = QHBoxLayout()
        self.copy = QPushButton(self)
        self.copy.clicked.connect(self._on_copy)
        self.check = QPushButton(self)
        self.check.clicked.connect(self._on_check)
        self.export = QPushButton(self)
        self.export.clicked.connect(self._on_export)
        self.note = plain_label(self)
        self.handover = HandOver(self.doctor, self.note, self)
        buttons.addWidget(self.copy)
        buttons.addWidget(self.check)
        buttons.addWidget(self.note, 1)
        buttons.addWidget(self.export)
        buttons.addWidget(self.handover)  # after the export: Tab goes left to right
        self.body.addLayout(buttons)
        self.findings: tuple[Finding, ...] = ()
        self.checking: str | None = None
        self._said: tuple[str, str] | None = None
        """The note's catalogue key and the words shown for it, said again on a language switch."""

    def retranslate(self) -> None:
        """Buttons and their tips."""
        super().retranslate()
        self.copy.setText(t("diag.copy"))
        self.copy.setAccessibleName(t("diag.copy"))
        self.check.setText(t("diag.again"))
        self.check.setToolTip(t("diag.again.tip"))
        self.check.setAccessibleName(t("diag.again"))
        self.handover.retranslate()
        self.export.setText(t("diag.export"))
        self.export.setAccessibleName(t("diag.export"))
        available = self.doctor.bundle_export_available()
        self.export.setEnabled(available)
        self.export.setToolTip(t("diag.export.tip") if available else t("diag.export.unavailable"))
        self.list.setAccessibleName(t("stack.findings"))
        self.detail.setAccessibleName(t("diag.cause"))
        if self._said is not None and self.note.text() == self._said[1]:  # still shown: in the new language
            self._say(self._said[0])

    def _say(self, key: str) -> None:
        """The note under the findings ("Checked again: …", "Copied"), kept to be said again in the
        window's language when it switches (it stayed English after a switch)."""
        self._said = (key, t(key))
        self.note.setText(self._said[1])

    def initializePage(self) -> None:  # noqa: N802
        """Nothing new runs; the findings so far are shown."""
        self.note.setText("")
        self.doctor.bring_up_to_date(self)

    def draw(self) -> None:
        """The verdict and the ranked findings."""
        for _ in self.render_steps():
            pass

    def render_steps(self) -> Iterator[None]:
        """The verdict; the list of findings; the selected finding in full (made, then set): a piece each."""
        document = self.doctor.report
        lang = language()
        self.findings = document.findings if document is not None else ()
        if document is not None:
            self.verdict.setText(
                verdict_html(document, lang) + self._missing_steps_html(self.doctor.document or {})
            )
        yield
        row = max(self.list.currentRow(), 0)
        self.list.blockSignals(True)
        self.list.clear()
        for number, finding in enumerate(self.findings, start=1):
            words = facade.finding_words(finding, lang)
            severity = finding.severity
            item = QListWidgetItem(
                f"{number}. {STATUS_SIGNS.get(severity, '')} [{t('severity.' + severity)}] {words['title']}"
            )
            item.setToolTip(tip(words["title"]))
            self.list.addItem(item)
        if self.findings:
            self.list.setCurrentRow(min(row, len(self.findings) - 1))
        self.list.blockSignals(False)
        self.copy.setEnabled(bool(self.findings))
        self.check.setEnabled(
            bool(self.findings) and self.doctor.running is None and not self.doctor.bundle_mode
        )
        yield
        row = self.list.currentRow()
        if not self.findings:
            self.detail.setHtml(f"<p>{esc(t('diag.none'))}</p>")
        elif 0 <= row < len(self.findings):  # the detail is drawn once: made, then set
            html = finding_detail_html(self.findings[row], lang)
            yield
            self.detail.setHtml(html)
        yield

    @Slot(int)
    def _on_row(self, row: int) -> None:
        if not 0 <= row < len(self.findings):
            return
        self.detail.setHtml(finding_detail_html(self.findings[row], language()))

    def _missing_steps_html(self, document: Mapping[str, Any]) -> str:
        """What the diagnosis lacks because a probe step was stopped or failed: "The retry on the
        GPU was stopped before it finished: …" (a verdict without it says nothing of the GPU run)."""
        done = set(document.get("steps") or ())
        stopped = {facade.label("run.cancelled", lang) for lang in facade.LANGUAGES}
        lines = []
        for step, core_step in (("cpu", "cpu_baseline"), ("gpu", "gpu_retry")):
            failure = self.doctor.failures.get(step)
            if failure and core_step not in done:
                key = f"diag.stopped.{step}" if failure in stopped else f"diag.failed.{step}"
                lines.append(f"<p style='color:{STATUS_COLOURS['warning']}'>{esc(t(key))}</p>")
        return "".join(lines)

    def current(self) -> Finding | None:
        """The selected finding."""
        row = self.list.currentRow()
        return self.findings[row] if 0 <= row < len(self.findings) else None

    def fix_text(self) -> str:
        """The fix of the selected finding as the script that pastes (the document's,
        core/document/script.py)."""
        finding = self.current()
        if finding is None:
            return ""
        return str(facade.fix_script(self.doctor.document or {}, finding, language()))

    @Slot()
    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.fix_text())
        self._say("diag.copied")

    @Slot()
    def _on_check(self) -> None:
        finding = self.current()
        if finding is None:
            return
        self.checking = finding.id
        self.note.setText("")
        self.doctor.run_step(facade.check_again_step(finding))

    def after_check(self) -> None:
        """Say whether the finding checked again is gone."""
        if self.checking is None:
            return
        # (the list may not be drawn anew yet: the document says)
        present = any(f.id == self.checking for f in facade.view_of(self.doctor.report).findings)
        self._say("diag.again.still" if present else "diag.again.gone")
        self.checking = None

    @Slot()
    def _on_export(self) -> None:
        if self.doctor.document is None:
            return
        self.doctor.open_export_dialog()


_LABEL_KEYS: frozenset[str] = frozenset()
