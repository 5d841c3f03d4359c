"""The desktop window. Until the wizard lands: what the tool is, and a quick diagnosis on demand."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

INTRO = (
    "<h2>GPU Fallback Doctor</h2>"
    "<p>When ONNX Runtime cannot start the CUDA or TensorRT execution provider, it logs one "
    "warning and runs everything on the CPU: the answers stay right, only 10 to 40 times slower. "
    "This tool inspects the stack layer by layer (GPU driver → CUDA runtime → cuDNN → ONNX "
    "Runtime → the application) and tells you which layer is broken and the exact fix.</p>"
    "<p>The step-by-step wizard is coming. Today: <b>Run diagnosis</b> inspects the Python "
    "environment below, the same as <code>fallback-doctor diagnose --python PATH</code> in a "
    "terminal (add <code>--json</code> for machines).</p>"
)


class _Signals(QObject):
    finished = Signal(object)
    failed = Signal(str)


class _Job(QRunnable):
    """Runs a core call on a worker thread; results come back as queued signals."""

    def __init__(self, work: Callable[[], Any]) -> None:
        super().__init__()
        self.work = work
        self.signals = _Signals()

    @Slot()
    def run(self) -> None:
        try:
            result = self.work()
        except Exception as error:  # noqa: BLE001 - shown to the user, never a crash
            self.signals.failed.emit(f"{type(error).__name__}: {error}")
        else:
            self.signals.finished.emit(result)


def _diagnose_text(python: str) -> str:
    from fallback_doctor.cli.common import default_language
    from fallback_doctor.core.collect.run import CollectRequest
    from fallback_doctor.core.diagnosis import DiagnoseRequest, diagnose
    from fallback_doctor.core.report import diagnosis_document, render_text

    request = DiagnoseRequest(
        collect=CollectRequest(python=python, env=dict(os.environ)),
        quick=True,
        target={"kind": "python", "python": python},
    )
    return render_text(diagnosis_document(diagnose(request)), default_language())


class MainWindow(QMainWindow):
    """The placeholder main window: the intro, a button, and the text report."""

    def __init__(self, python: str) -> None:
        super().__init__()
        self.python = python
        self.setWindowTitle("GPU Fallback Doctor")
        self.resize(900, 640)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        intro = QLabel(INTRO, body)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.target_label = QLabel(f"Python environment: {python}", body)
        layout.addWidget(self.target_label)
        self.run_button = QPushButton("Run diagnosis", body)
        self.run_button.setAccessibleName("Run diagnosis")
        self.run_button.clicked.connect(self._on_run_clicked)
        layout.addWidget(self.run_button)
        self.output = QPlainTextEdit(body)
        self.output.setReadOnly(True)
        self.output.setAccessibleName("Diagnosis report")
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.output, 1)
        self.setCentralWidget(body)
        self._job: _Job | None = None

    @Slot()
    def _on_run_clicked(self) -> None:
        self.run_button.setEnabled(False)
        self.output.setPlainText("Inspecting the GPU stack…")
        job = _Job(lambda: _diagnose_text(self.python))
        job.signals.finished.connect(self._on_job_finished)
        job.signals.failed.connect(self._on_job_failed)
        self._job = job
        QThreadPool.globalInstance().start(job)

    @Slot(object)
    def _on_job_finished(self, text: object) -> None:
        self.output.setPlainText(str(text))
        self.run_button.setEnabled(True)

    @Slot(str)
    def _on_job_failed(self, message: str) -> None:
        self.output.setPlainText(f"The diagnosis could not run: {message}")
        self.run_button.setEnabled(True)


def run(argv: Sequence[str]) -> int:
    """Open the window; returns the application's exit status."""
    parser = argparse.ArgumentParser(prog="fallback-doctor gui")
    parser.add_argument("--python", metavar="PATH", default=sys.executable)
    args = parser.parse_args(list(argv))
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("GPU Fallback Doctor")
    window = MainWindow(args.python)
    window.show()
    return int(app.exec())
