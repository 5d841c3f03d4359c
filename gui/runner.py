"""The worker glue of the wizard: steps in child processes, the sampler, bundles opened and written.

The base class of :class:`fallback_doctor.gui.wizard.DoctorWizard`. Each step runs in a child
(core/flow/step_child.py through gui/jobs.py StepJob) and comes back as a queued signal; what it adds
to the document is core's (``facade.apply_inspection``, ``facade.apply_outcome``: the same steps
`diagnose` applies), never the window's.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.jobs import CallJob, StepJob
from fallback_doctor.gui.page_base import Page, StepPage
from PySide6.QtCore import QThreadPool, QTimer, SignalInstance, Slot
from PySide6.QtWidgets import QWizard

if TYPE_CHECKING:
    from collections.abc import Callable

    from fallback_doctor.core.facade import Report, Sampler, SampleSource
    from fallback_doctor.gui.bundle_dialog import BundleDialog
    from fallback_doctor.gui.page_diagnosis import DiagnosisPage
    from fallback_doctor.gui.page_gpu import GpuPage

STEP_NAMES = {"cpu": "cpu_baseline", "gpu": "gpu_retry"}
"""The wizard's steps that run a probe, and the core step each one is (core/flow/steps.py)."""


class StepRunner(QWizard):
    """The wizard's base: running, stopping and following the steps (pages and words: DoctorWizard)."""

    document: dict[str, Any] | None
    target: dict[str, Any]
    bundle_mode: bool
    bundle_info: dict[str, Any] | None
    running: str | None
    job: StepJob | None
    jobs: list[StepJob | CallJob]
    failures: dict[str, str]
    sampler: Sampler | None
    partial_series: dict[str, object] | None
    """After Stop of the GPU retry: the series sampled so far (``SamplingSeries.to_dict()``), which the
    graph keeps showing (``GpuPlot.kept_partial``); None otherwise. Never put into the document."""
    probe_options: dict[str, object]
    _applying: CallJob | None = None
    pages: dict[Page, Any]
    saved_document: dict[str, object] | None
    sample_source: Callable[[], SampleSource] | None
    ticker: QTimer
    # The wizard's own (DoctorWizard, gui/wizard.py): its signals and how it draws the pages.
    document_changed: SignalInstance
    step_state_changed: SignalInstance

    def _queue_pages(self, retranslate: bool = False) -> None:
        raise NotImplementedError  # DoctorWizard's

    def bring_up_to_date(self, page: StepPage) -> None:
        raise NotImplementedError  # DoctorWizard's

    _read: tuple[dict[str, object], Report] | None = None

    @property
    def report(self) -> Report | None:
        """The document read once into core's typed view (``facade.view_of``), for every page: read
        again only when the document is another one (core's steps return a new document each time)."""
        if self.document is None:
            return None
        if self._read is None or self._read[0] is not self.document:
            self._read = (self.document, facade.view_of(self.document))
        return self._read[1]

    @property
    def gpu_page(self) -> GpuPage:
        """Page 5 (the live graph)."""
        return self.pages[Page.GPU]  # type: ignore[no-any-return]

    @property
    def diagnosis_page(self) -> DiagnosisPage:
        """Page 6."""
        return self.pages[Page.DIAGNOSIS]  # type: ignore[no-any-return]

    # -- steps ----------------------------------------------------------------------------------

    def ensure(self, step: str | None) -> None:
        """Run ``step`` when its result is not there yet (and nothing runs)."""
        if step is None or self.running is not None or (self.bundle_mode and self.document is not None):
            return
        if self.bundle_mode:
            self.run_step("diagnose")
            return
        if self.document is None:
            self.run_step("diagnose")
            return
        done = set(self.document.get("steps") or ())
        if step in STEP_NAMES and STEP_NAMES[step] not in done and step not in self.failures:
            self.run_step(step)

    def run_step(self, step: str) -> None:
        """Start a step now (the one running is stopped first)."""
        if self.running is not None:
            self.cancel_step()
        self.failures.pop(step, None)
        self.partial_series = None
        if self.bundle_mode:
            self._open_bundle()
            return
        request: dict[str, object] = {"step": step, "target": self.target}
        if step != "diagnose":
            request["options"] = self.probe_options
        job = StepJob(request)
        job.signals.started.connect(self._on_step_started)
        job.signals.progress.connect(self._on_step_progress)
        job.signals.finished.connect(self._on_step_finished)
        job.signals.failed.connect(self._on_step_failed)
        job.signals.cancelled.connect(self._on_step_cancelled)
        self.job = job
        self._set_running(step)
        if step == "gpu":
            self._start_sampler()
        self._start(job)

    def _start(self, job: StepJob | CallJob) -> None:
        self.jobs = [j for j in self.jobs if not isinstance(j, StepJob) or not j.done.is_set()]
        self.jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _set_running(self, step: str | None) -> None:
        self.running = step
        self._started = time.monotonic()
        self._progress = {
            "diagnose": t("run.diagnosing"),
            "cpu": t("cpu.running"),
            "gpu": t("gpu.running"),
        }.get(step or "", "")
        self.button(QWizard.WizardButton.CustomButton1).setEnabled(step is not None)
        if step is None:
            self.ticker.stop()
        else:
            self.ticker.start()
        for page in self.pages.values():
            page.show_running(step, self._progress)
        current = self.currentPage()  # QWizard asks only the page on screen (and each page it opens)
        if current is not None:
            current.completeChanged.emit()
        self.step_state_changed.emit()

    @Slot()
    def _on_ticker(self) -> None:
        if self.running is None:
            return
        text = t("run.elapsed", what=self._progress, seconds=time.monotonic() - self._started)
        for page in self.pages.values():
            page.show_running(self.running, text)

    def cancel_step(self) -> None:
        """Stop the running step at once (its processes are killed)."""
        job = self.job
        if self.running is None or (job is None and self._applying is None):
            return
        if job is not None:
            job.cancel()
        self._applying = None  # a result being added is dropped
        step = self.running
        self.job = None
        self.partial_series = self._stop_sampler(keep=True)  # the graph so far stays shown
        self.gpu_page.plot.say_stopped()
        self._set_running(None)
        if step:
            self.failures[step] = t("run.cancelled")
        self._render_all()

    @Slot(int)
    def _on_step_started(self, pid: int) -> None:
        if self.sender() is not (self.job.signals if self.job else None):
            return
        if self.sampler is not None:
            self.sampler.set_pid(pid)

    @Slot(object)
    def _on_step_progress(self, event: dict[str, Any]) -> None:
        if self.job is None or self.sender() is not self.job.signals:
            return
        said = facade.progress_words(event, self.running, language())  # words, never a tag
        if said is not None:
            self._progress = said
        if event.get("event") == "phase" and event.get("edge") == "start" and self.sampler is not None:
            self.sampler.mark_phase(str(event.get("name")), at=float(event.get("at") or time.time()))

    @Slot(object)
    def _on_step_finished(self, data: dict[str, Any]) -> None:
        """The step's result is added to the document on a pool thread (core re-judges it: tens of
        milliseconds, more than a frame); the step counts as running until that is done."""
        if self.job is None or self.sender() is not self.job.signals:
            return
        step = self.running
        self.job = None
        document = self.document
        series = self._stop_sampler(keep=True) if step == "gpu" else None

        def apply() -> dict[str, object] | None:
            if step == "diagnose":
                return facade.apply_inspection(document, data)
            if step in {"cpu", "gpu"} and document is not None:
                return facade.apply_outcome(
                    document, {**data, **({"series": series} if step == "gpu" else {})}
                )
            return document

        job = CallJob(apply)
        job.signals.finished.connect(self._on_applied)
        job.signals.failed.connect(self._on_apply_failed)
        self._applying = job
        self._start(job)

    @Slot(object)
    def _on_applied(self, document: object) -> None:
        if self._applying is None or self.sender() is not self._applying.signals:
            return  # stopped meanwhile
        self._applying = None
        self.document = document if isinstance(document, dict) else self.document
        self._set_running(None)
        self._render_all()
        self.pages[Page.DIAGNOSIS].after_check()

    @Slot(str)
    def _on_apply_failed(self, message: str) -> None:
        if self._applying is None or self.sender() is not self._applying.signals:
            return
        self._applying = None
        if self.running:
            self.failures[self.running] = t("run.failed", message=message)
        self._set_running(None)
        self._render_all()

    @Slot(str)
    def _on_step_failed(self, message: str) -> None:
        if self.job is None or self.sender() is not self.job.signals:
            return
        step = self.running
        self.job = None
        self._stop_sampler(keep=False)
        if step:
            self.failures[step] = t("run.failed", message=message)
        self._set_running(None)
        self._render_all()
        if step == "diagnose":
            self._failure_on_pages(self.failures[step])

    @Slot()
    def _on_step_cancelled(self) -> None:
        """A cancelled step is already accounted for by cancel_step."""

    def _render_all(self) -> None:
        self._queue_pages()
        self.document_changed.emit()

    def _failure_on_pages(self, words: str) -> None:
        """The diagnosis' failure on the status line of the pages it fills (the page on screen drawn
        first, so its drawing does not put the verdict of an earlier document over it)."""
        current = self.currentPage()
        if isinstance(current, StepPage):
            self.bring_up_to_date(current)
        for page in (Page.CONFIG, Page.LOG, Page.STACK):
            self.pages[page].status.setText(words)

    # -- the sampler ----------------------------------------------------------------------------

    def _start_sampler(self) -> None:
        self.sampler = facade.new_sampler(self.sample_source)
        self.sampler.start()
        self.gpu_page.plot.start(self.sampler)

    def _stop_sampler(self, keep: bool) -> dict[str, object] | None:
        sampler, self.sampler = self.sampler, None
        self.gpu_page.plot.stop(keep=keep)
        if sampler is None:
            return None
        series = sampler.stop(timeout=1.0)
        return series.to_dict() if keep else None

    # -- bundles --------------------------------------------------------------------------------

    def _open_bundle(self) -> None:
        path = str(self.target.get("bundle"))

        def open_it() -> dict[str, object]:
            return facade.open_bundle(path)

        job = CallJob(open_it)
        job.signals.finished.connect(self._on_bundle_opened)
        job.signals.failed.connect(self._on_step_failed_call)
        self.job = None
        self._set_running("diagnose")
        self._call = job
        self._start(job)

    @Slot(object)
    def _on_bundle_opened(self, opened: object) -> None:
        value = opened if isinstance(opened, dict) else {}
        self.document = dict(value.get("document") or {}) or None
        self.bundle_info = dict(value.get("info") or {}) or None
        self._set_running(None)
        for page in self.pages.values():
            page.show_banner()
        self._render_all()

    def bundle_banner(self) -> str:
        """The banner of a bundle from another machine ("" when not showing one)."""
        info = self.bundle_info if self.bundle_mode else None
        if not info:
            return ""
        text = t(
            "bundle.banner",
            name=info.get("name"),
            created=info.get("created"),
            version=info.get("version"),
            redacted=t("bundle.redacted" if info.get("redacted") else "bundle.not_redacted"),
        )
        if info.get("problems"):
            text += "\n" + t("bundle.integrity", problems="; ".join(info["problems"][:3]))
        return text

    @Slot(str)
    def _on_step_failed_call(self, message: str) -> None:
        self.failures["diagnose"] = t("run.failed", message=message)
        self._set_running(None)
        self._render_all()
        self._failure_on_pages(self.failures["diagnose"])

    def bundle_export_available(self) -> bool:
        """Whether this build can write bundles (core/bundle)."""
        return facade.export_available()

    def open_export_dialog(self) -> BundleDialog:
        """The bundle preview (nothing is written until the technician saves)."""
        from fallback_doctor.gui.bundle_dialog import BundleDialog

        dialog = BundleDialog(dict(self.document or {}), parent=self)
        dialog.accepted.connect(lambda: self._on_exported(dialog.written))
        dialog.open()
        self.export_dialog = dialog
        return dialog

    def export_bundle(self, path: str) -> None:
        """Write the document as a bundle (redacted, no preview) on a pool thread; never replaces a file."""
        document = dict(self.document or {})
        lang = language()

        def write() -> str:
            return facade.export_bundle(document, path, lang)

        job = CallJob(write)
        job.signals.finished.connect(self._on_exported)
        job.signals.failed.connect(self._on_export_failed)
        self._start(job)

    @Slot(object)
    def _on_exported(self, path: object) -> None:
        if path:
            self.saved_document = self.document
            self.diagnosis_page.handover.saved(str(path))
        self.diagnosis_page.note.setText(t("diag.export.done", path=path))

    @Slot(str)
    def _on_export_failed(self, message: str) -> None:
        self.diagnosis_page.note.setText(t("run.failed", message=message))
