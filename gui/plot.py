"""The GPU page's live graph: GPU utilization and memory, the probe's CPU use, the probe's phases.

pyqtgraph draws it. It is imported on a pool thread after the first paint (gui/wizard.py
``_preload_modules``) and the graph is built on the GUI thread at an idle moment, so neither
happens while a step runs. Only the GUI thread touches plot items: a QTimer pulls new samples
from the sampler (``since``) and calls setData (peak downsampling, clipped to the view); the
ranges are fixed and grow in steps (no auto-range, no axis relayout per tick). Time is seconds
from the series' start (its first sample or phase mark, whichever is earlier: never negative),
never SI-prefixed. Where there are no GPU readings (no NVML), the GPU plot is replaced by a
sentence saying so: a flat line would look like an idle GPU. A series from the report (a bundle)
draws the same way. After Stop the graph drawn so far is kept (``kept_partial``) until the next
run or a new target (``forget``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.plot_data import (
    SIDES,
    cell_number,
    grid_lines,
    has_gpu,
    one_gpu,
    or_zero,
    reading,
    series_start,
    status_sentence,
    step_up,
)
from fallback_doctor.gui.plot_reveal import Reveal

if TYPE_CHECKING:
    from fallback_doctor.core.facade import Sampler
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

_DONE = object()
"""What ``next(steps, _DONE)`` gives when a queue of pieces is done."""


class GpuPlot(QWidget):
    """Two stacked plots (GPU above, probe CPU below) or, without GPU readings, words instead of the GPU plot."""  # noqa: E501

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(t("plot.gpu"))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._elsewhere = False
        """The series shown comes from a bundle made on another machine."""
        self.setMinimumHeight(330)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.note)
        self.stack = QStackedWidget(self)
        layout.addWidget(self.stack, 1)
        self.phases = QLabel(self)
        self.phases.setWordWrap(True)
        self.phases.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # Room for three lines from the start: a phase added during the run must not shrink the graph
        # (a resize makes pyqtgraph lay out and redraw every axis: tens of milliseconds).
        self.phases.setMinimumHeight(3 * self.phases.fontMetrics().lineSpacing() + 4)
        layout.addWidget(self.phases)
        self.waiting = QLabel(t("gpu.waiting"), self)
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting.setWordWrap(True)
        self.stack.addWidget(self.waiting)
        self.reveal = Reveal(self, self.stack, self.waiting)
        """Shows the graph in place of the waiting words, laid out and its axes drawn first."""
        self._graphics: Any = None
        self._provenance: str | None = None
        self._provenance_words: dict[str, Any] | None = None
        """Where replayed GPU readings come from (the note above the graph), None for this machine's."""
        self._built = False
        self._words: Iterator[None] | None = None
        """The axis titles and legends still to be put in the current language (``retranslate``)."""
        self._steps: Iterator[None] | None = None
        self._gpu_plot: Any = None
        self._cpu_plot: Any = None
        self._mem_axis: Any = None
        self._grid: dict[str, Any] = {}
        self._curves: dict[str, Any] = {}
        self._marks_drawn = 0
        self._no_gpu: QLabel | None = None
        self.sampler: Sampler | None = None
        self._sequence = 0
        self._t0: float | None = None
        self._data: dict[str, list[float]] = {"t": [], "gpu": [], "mem": [], "cpu": []}
        self._index = 0
        self._top_cpu = 0.0
        self._top_mem = 0.0
        self._per_process = False
        """The memory line holds the probe's own memory (NVML per process), not the device's."""
        self._last_mark = 0.0
        self._x_floor = 10.0  # live: the time axis starts at 10 s and grows in steps
        self._phase_text = ""
        self._ranges: tuple[float, float, float] | None = None
        self.kept_partial = False
        self.gpu_available: bool | None = None
        self.samples_drawn = 0
        self.timer = QTimer(self)
        self.timer.setInterval(200)
        self.timer.timeout.connect(self._on_tick)

    # -- building ------------------------------------------------------------------------------

    def build(self) -> None:
        """Create the graph at an idle moment, a piece per turn of the event loop (each under a frame)."""
        if self._built or self._steps is not None:
            return
        self._steps = self._build_steps()
        self._build_more()

    @Slot()
    def _build_more(self) -> None:
        if self._steps is None:
            return
        try:
            next(self._steps)
        except StopIteration:
            self._steps = None
            return
        QTimer.singleShot(0, self, self._build_more)

    def _build(self) -> None:
        """The graph now (what is left of it)."""
        if self._built:
            return
        steps, self._steps = self._steps or self._build_steps(), None
        for _ in steps:
            pass

    def _build_steps(self) -> Iterator[None]:
        from fallback_doctor.gui.plot_build import build_steps  # pyqtgraph: preloaded by then

        yield from build_steps(self)
        self.stack.addWidget(self._graphics)
        self.reveal.graphics = self._graphics
        self.reveal.axes = self._axes
        self._no_gpu = QLabel(self)
        self._no_gpu.setWordWrap(True)
        self._no_gpu.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._no_gpu.setFrameShape(QLabel.Shape.StyledPanel)
        self._no_gpu.setAccessibleName(t("plot.gpu"))
        self._no_gpu.setMinimumHeight(90)
        self._no_gpu.hide()
        column = self.layout()
        assert isinstance(column, QVBoxLayout)  # made in __init__
        column.insertWidget(1, self._no_gpu)
        yield
        self._built = True
        self._set_ranges()
        self.retranslate()

    @Slot()
    def _sync_memory_axis(self) -> None:
        self._mem_axis.setGeometry(self._gpu_plot.vb.sceneBoundingRect())
        self._mem_axis.linkedViewChanged(self._gpu_plot.vb, self._mem_axis.XAxis)

    def _say_provenance(self) -> None:
        """Whose GPU readings these are, when they were not measured here (in the current language)."""
        provenance, words = self._provenance, self._provenance_words
        what = facade.said_text(words, provenance, language()) if provenance else ""
        self.note.setText(t("gpu.replayed", what=what) if what else "")

    def retranslate(self) -> None:
        """Axis titles and legends in the current language, one per turn of the event loop (each
        re-lays out the graph); all of them before the graph is first shown (``showEvent``)."""
        self.waiting.setText(t("gpu.waiting"))
        self._say_provenance()
        if not self._built:
            return
        queued = self._words is not None
        self._words = self._word_steps()
        if not queued:
            QTimer.singleShot(0, self, self._next_words)

    def _word_steps(self) -> Iterator[None]:
        """Each axis title, then the legends' names; yields after each."""
        for plot, side, key in (
            (self._gpu_plot, "left", "plot.gpu"),
            (self._gpu_plot, "right", "plot.memory"),
            (self._cpu_plot, "left", "plot.cpu"),
            (self._cpu_plot, "bottom", "plot.time"),
        ):
            plot.setLabel(side, t(key))
            yield
        names = {"gpu": t("plot.gpu"), "mem": t("plot.memory"), "cpu": t("plot.cpu")}
        for plot in (self._gpu_plot, self._cpu_plot):
            for sample, label in plot.legend.items:
                item = getattr(sample, "item", None)
                named = next((k for k, c in self._curves.items() if c is item), None)
                if named in names:
                    label.setText(names[named])
        yield

    @Slot()
    def _next_words(self) -> None:
        """The next axis title, or the legends (a turn of the event loop each)."""
        if self._words is None:
            return
        if next(self._words, _DONE) is _DONE:
            self._words = None
            return
        QTimer.singleShot(0, self, self._next_words)

    def flush(self) -> None:
        """Every word still queued by ``retranslate`` and the graph wanted, now (tests, screenshots)."""
        self._flush_words()
        self.reveal.flush()

    def _flush_words(self) -> None:
        words, self._words = self._words, None
        for _ in words or ():
            pass

    def _axes(self) -> list[object]:
        """Every axis item of the two plots (gui/plot_reveal.py draws the visible ones ahead)."""
        return [plot.getAxis(side) for plot in (self._gpu_plot, self._cpu_plot) for side in SIDES]

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        """Words changed while hidden are on the axes before the graph is painted; a graph wanted
        meanwhile is prepared and shown (gui/plot_reveal.py)."""
        self._flush_words()
        self.reveal.shown()
        super().showEvent(event)

    # -- live ---------------------------------------------------------------------------------

    def start(self, sampler: Sampler) -> None:
        """Draw from a running sampler until ``stop``."""
        self._build()
        self._x_floor = 10.0
        self.clear()
        self._elsewhere = False  # live readings are this machine's
        self.sampler = sampler
        self._sequence = 0
        state = sampler.state()
        self._set_availability(state.gpu_readings_available, state.gpu.sentence(), state.gpu)
        self.reveal.show_graph()
        self.timer.start()

    def stop(self, keep: bool = True) -> None:
        """Stop pulling samples (one last pull first); ``keep``: the graph so far stays shown."""
        live = self.sampler is not None
        if live:
            self._on_tick()
        self.timer.stop()
        self.sampler = None
        self.kept_partial = keep and live and self.samples_drawn > 0

    def say_stopped(self) -> None:
        """Under the graph kept after Stop: that it is a part of a run."""
        if self.kept_partial and self._data["t"]:
            self.phases.setText(
                t("plot.stopped", seconds=self._data["t"][-1])
                + ("\n" + self._phase_text if self._phase_text else "")
            )

    def forget(self) -> None:
        """Drop a graph kept after Stop (a new target, a new run)."""
        self.kept_partial = False

    @Slot()
    def _on_tick(self) -> None:
        sampler = self.sampler
        if sampler is None:
            return
        samples, self._sequence = sampler.since(self._sequence)
        state = sampler.state()
        self._set_availability(
            state.gpu_readings_available or self.gpu_available is True, state.gpu.sentence(), state.gpu
        )
        self._append([s.to_dict() for s in samples])
        self._draw_marks([m.to_dict() for m in sampler.marks()])

    # -- from a series (the report) -----------------------------------------------------------

    def show_series(self, series: dict[str, Any] | None, *, elsewhere: bool = False) -> None:
        """Draw a finished series (``SamplingSeries.to_dict()``), as recorded.

        ``None`` (no finished series) keeps a graph stopped part-way (``kept_partial``).
        ``elsewhere``: the series comes from a bundle made on another machine (the words say whose)."""
        self.timer.stop()
        self.sampler = None
        if not series:
            if self.kept_partial:
                return
            self.clear()
            self.reveal.show_waiting()
            self._provenance = None
            self._say_provenance()
            return
        self.kept_partial = False
        self._build()
        self._x_floor = 1.0  # a finished series: the axis fits its length
        self.clear(ranges=False)  # set once the series is in (each range set redraws the axes)
        status = series.get("gpu_status") or {}
        samples = one_gpu(list(series.get("samples") or []))
        marks = list(series.get("marks") or [])
        self._t0 = series_start(samples, marks, series.get("interval_s"))
        available = any(has_gpu(s) for s in samples)
        self._elsewhere = elsewhere
        self._set_availability(available, status_sentence(status), None, series)
        self._append(samples)
        self._draw_marks(marks)
        self._set_ranges()  # (a series with neither samples nor marks: the empty ranges)
        self.reveal.show_graph()

    # -- drawing ------------------------------------------------------------------------------

    def clear(self, *, ranges: bool = True) -> None:
        """Forget every sample and mark; ``ranges``: the axes' ranges for no data, now."""
        self._t0 = None
        self._index = 0
        self._data = {"t": [], "gpu": [], "mem": [], "cpu": []}
        self.samples_drawn = 0
        self.gpu_available = None
        self.kept_partial = False
        for curve in self._curves.values():
            curve.setData([], [])
        self._marks_drawn = 0
        self._phase_text = ""
        self._top_cpu = self._top_mem = self._last_mark = 0.0
        self._per_process = False
        self.phases.setText("")
        if ranges:
            self._set_ranges()

    def _set_availability(
        self, available: bool, sentence: str, status: Any, series: dict[str, Any] | None = None
    ) -> None:
        if self._no_gpu is None:
            return
        provenance, words = None, None
        if series is not None and not series.get("recorded_here", True):
            provenance, words = series.get("provenance"), series.get("provenance_words")
        elif status is not None and getattr(status, "source", "") == "replay":
            provenance, words = status.reason, status.reason_words
        self._provenance = provenance if available else None
        self._provenance_words = words if available and isinstance(words, dict) else None
        self._say_provenance()
        if not available:  # whose machine had no readings: this one, or the bundle's
            held = status if status is not None else (series or {}).get("gpu_status")
            said = facade.sentence_words_of(held)
            why = facade.said_text(said, sentence, language())
            self._no_gpu.setText(t("gpu.no_nvml.there" if self._elsewhere else "gpu.no_nvml", why=why))
        if available == self.gpu_available:
            return
        self.gpu_available = available
        self._gpu_plot.setVisible(available)
        self._no_gpu.setVisible(not available)

    def _append(self, samples: list[dict[str, Any]]) -> None:
        """Add samples to the lines (incremental: the lists grow, the panels repaint)."""
        if not samples:
            return
        for sample in samples:
            stamp = cell_number(sample.get("timestamp"))
            if stamp is None:  # no usable time (a redacted cell): one interval after the last
                stamp = (self._t0 or 0.0) + self._index * 0.1
            self._index += 1
            if self._t0 is None:
                self._t0 = stamp
            self._data["t"].append(max(0.0, stamp - self._t0))
            self._data["gpu"].append(reading(sample.get("utilization_percent")))
            memory = self._memory(sample)  # (first: it may blank the line drawn so far)
            self._data["mem"].append(memory)
            self._data["cpu"].append(reading(sample.get("probe_cpu_percent")))
            self._top_cpu = max(self._top_cpu, or_zero(self._data["cpu"][-1]))
            self._top_mem = max(self._top_mem, or_zero(self._data["mem"][-1]))
        self.samples_drawn = len(self._data["t"])
        xs = self._data["t"]
        if self.gpu_available:
            self._curves["gpu"].setData(xs, self._data["gpu"])
            self._curves["mem"].setData(xs, self._data["mem"])
        else:
            self._curves["gpu"].setData([], [])
            self._curves["mem"].setData([], [])
        self._curves["cpu"].setData(xs, self._data["cpu"])
        self._set_ranges()

    def _memory(self, sample: dict[str, Any]) -> float:
        """The memory line's value: the probe's own GPU memory where NVML reports it per process, else
        the device's memory in use. Never both in one line: at the first per-process reading the
        device figures drawn before it (read before the probe started) become gaps."""
        own = cell_number(sample.get("process_memory_mib"))
        if own is not None and not self._per_process:
            self._per_process = True
            self._data["mem"] = [math.nan] * len(self._data["mem"])
            self._top_mem = 0.0
        if self._per_process:
            return math.nan if own is None else own
        return reading(sample.get("memory_used_mib"))

    def _set_ranges(self) -> None:
        """Fixed ranges that grow in steps (set only when they change: each change makes pyqtgraph
        lay out and draw the axes anew, so not per tick)."""
        last = max(self._data["t"][-1] if self._data["t"] else 0.0, self._last_mark)
        ranges = (step_up(last, self._x_floor), step_up(self._top_cpu, 100.0), step_up(self._top_mem, 1.0))
        if ranges == self._ranges or not self._built:
            return
        self._ranges = ranges
        x_end, cpu_end, mem_end = ranges
        for plot in (self._gpu_plot, self._cpu_plot):  # set on both: a hidden plot would not follow a link
            plot.setXRange(0, x_end, padding=0)
        self._cpu_plot.setYRange(0, cpu_end, padding=0)
        self._mem_axis.setYRange(0, mem_end, padding=0)
        for key, y_end in (("gpu", 100.0), ("cpu", cpu_end)):
            self._grid[key].setData(*grid_lines(x_end, y_end))

    def _draw_marks(self, marks: list[dict[str, Any]]) -> None:
        """Phase marks: dotted vertical lines on both panels, short names on the CPU panel's."""
        if self._t0 is None or len(marks) == self._marks_drawn:
            return
        self._marks_drawn = len(marks)
        names: list[str] = []
        xs: list[float] = []
        labels: list[tuple[float, str]] = []
        for mark in marks:
            x = max(0.0, (cell_number(mark.get("timestamp")) or self._t0) - self._t0)
            name = str(mark.get("name"))
            label = facade.phase_name(name, language())  # core's words, as report.html names them
            xs.append(x)
            names.append(f"{label} {x:.1f} s")
            labels.append((x, label))
        self._last_mark = max(xs, default=0.0)
        pairs = [x for x in xs for _ in (0, 1)]
        self._set_ranges()
        top = self._ranges[1] if self._ranges else 100.0
        self._curves["cpu_marks"].setData(pairs, [v for _ in xs for v in (0.0, top)])
        if self.gpu_available:
            self._curves["gpu_marks"].setData(pairs, [v for _ in xs for v in (0.0, 100.0)])
        self._phase_text = t("plot.phases", phases=" \u00b7 ".join(names))
        self.phases.setText(self._phase_text)
        self._set_ranges()
