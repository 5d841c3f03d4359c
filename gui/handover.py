"""What the technician hands over from the diagnosis page: report.html on its own ("Save report…")
and, once something is saved, "Open folder" where it lies (issue 26: after "Bundle saved" there
was no way to the file, and no report without the zip)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.jobs import CallJob
from PySide6.QtCore import QThreadPool, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

if TYPE_CHECKING:
    from fallback_doctor.gui.page_base import DoctorWizard


class HandOver(QWidget):
    """Save report… and Open folder, beside the bundle's export."""

    def __init__(self, doctor: DoctorWizard, note: QLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doctor = doctor
        self.note = note
        self.folder: str | None = None
        """The folder of what was saved last (the bundle or the report)."""
        self.save_report = QPushButton(self)
        self.save_report.setAutoDefault(False)
        self.save_report.clicked.connect(self._on_save_report)
        self.open_folder = QPushButton(self)
        self.open_folder.setAutoDefault(False)
        self.open_folder.clicked.connect(self._on_open_folder)
        self.open_folder.hide()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.save_report)
        row.addWidget(self.open_folder)
        self._jobs: list[CallJob] = []

    def retranslate(self) -> None:
        """Both buttons' words."""
        for button, key in ((self.save_report, "diag.save_report"), (self.open_folder, "diag.open_folder")):
            button.setText(t(key))
            button.setAccessibleName(t(key))
            button.setToolTip(t(f"{key}.tip"))

    def saved(self, path: str) -> None:
        """Something was written to ``path``: offer its folder."""
        self.folder = os.path.dirname(os.path.abspath(path))
        self.open_folder.show()

    def choose_report_path(self) -> str:
        """Where to write report.html, from a save dialog ("" when cancelled)."""
        document = self.doctor.document or {}
        suggested = os.path.join(os.path.expanduser("~"), facade.default_bundle_name(document, ".html"))
        path, _ = QFileDialog.getSaveFileName(self, t("diag.save_report"), suggested, "HTML (*.html)")
        return path

    @Slot()
    def _on_save_report(self) -> None:
        path = self.choose_report_path()
        if path and self.doctor.document is not None:
            self.write_report(path)

    def write_report(self, path: str) -> None:
        """Write report.html to ``path`` on a pool thread; the note says where, or why not."""
        document, lang = dict(self.doctor.document or {}), language()
        job = CallJob(lambda: facade.save_report_html(document, path, lang))
        job.signals.finished.connect(self._on_report_written)
        job.signals.failed.connect(lambda message: self.note.setText(t("run.failed", message=message)))
        self._jobs = [*self._jobs[-4:], job]
        QThreadPool.globalInstance().start(job)

    @Slot(object)
    def _on_report_written(self, path: object) -> None:
        self.note.setText(t("diag.report.done", path=path))
        self.saved(str(path))
        self.doctor.saved_document = self.doctor.document

    @Slot()
    def _on_open_folder(self) -> None:
        if self.folder:
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.folder))
