"""The GPU page's live graph: GPU utilization and memory, the probe's CPU use, the probe's phases.

pyqtgraph is imported when the graph is first built (not at start-up). Only the GUI thread
touches plot items: a QTimer pulls new samples from the sampler (``since``) and calls setData.
Where there are no GPU readings (no NVML), the GPU plot is replaced by a sentence saying so: a
flat line would look like an idle GPU. A series from the report (a bundle) draws the same way.
"""

from __future__ import annotations

import math
from typing import Any

from fallback_doctor.gui.i18n import t
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

PHASE_LABELS = {
    "import": "import",
    "cpu.session": "CPU session",
    "cpu.timed": "CPU runs",
    "gpu.session": "GPU session",
    "gpu.timed": "GPU runs",
    "gpu.strict": "strict",
    "preload": "preload_dlls",
    "cpu.warmup": "CPU warm-up",
    "gpu.warmup": "GPU warm-up",
}


class GpuPlot(QWidget):
    """Two stacked plots (GPU above, probe CPU below) or, without GPU readings, words instead of the GPU plot."""  # noqa: E501

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(t("plot.gpu"))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
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
        layout.addWidget(self.phases)
        self.waiting = QLabel(t("gpu.waiting"), self)
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting.setWordWrap(True)
        self.stack.addWidget(self.waiting)
        self._graphics: Any = None
        self._gpu_plot: Any = None
        self._cpu_plot: Any = None
        self._curves: dict[str, Any] = {}
        self._marks_drawn = 0
        self._no_gpu: QLabel | None = None
        self.sampler: Any = None
        self._sequence = 0
        self._t0: float | None = None
        self._data: dict[str, list[float]] = {"t": [], "gpu": [], "mem": [], "cpu": []}
        self.gpu_available: bool | None = None
        self.samples_drawn = 0
        self.timer = QTimer(self)
        self.timer.setInterval(200)
        self.timer.timeout.connect(self._on_tick)

    # -- building ------------------------------------------------------------------------------

    def build(self) -> None:
        """Create the graph (done at an idle moment after start-up, or when first needed)."""
        self._build()

    def _build(self) -> None:
        if self._graphics is not None:
            return
        import pyqtgraph as pg

        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Base)
        foreground = palette.color(QPalette.ColorRole.Text)
        pg.setConfigOptions(antialias=False, background=background, foreground=foreground)
        self._pg = pg
        self._graphics = pg.GraphicsLayoutWidget(self)
        self._graphics.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # mouse only (zoom, pan): Tab skips it
        self._graphics.setAccessibleName(t("plot.gpu"))
        self._gpu_plot = self._graphics.addPlot(row=0, col=0)
        self._cpu_plot = self._graphics.addPlot(row=1, col=0)
        self._cpu_plot.setXLink(self._gpu_plot)
        for plot in (self._gpu_plot, self._cpu_plot):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.setDownsampling(mode="peak")
            plot.addLegend(offset=(8, 4))
        self._gpu_plot.setYRange(0, 100)
        dark = background.lightness() < 128
        self._curves["gpu"] = self._gpu_plot.plot(
            name=t("plot.gpu"), pen=pg.mkPen("#4fc3f7" if dark else "#0277bd", width=2), connect="finite"
        )
        self._mem_axis = pg.ViewBox()
        self._gpu_plot.showAxis("right")
        self._gpu_plot.scene().addItem(self._mem_axis)
        self._gpu_plot.getAxis("right").linkToView(self._mem_axis)
        self._mem_axis.setXLink(self._gpu_plot)
        self._curves["mem"] = pg.PlotDataItem(
            name=t("plot.memory"),
            pen=pg.mkPen("#ffb74d" if dark else "#e65100", width=2, style=Qt.PenStyle.DashLine),
            connect="finite",
        )
        self._mem_axis.addItem(self._curves["mem"])
        self._gpu_plot.legend.addItem(self._curves["mem"], t("plot.memory"))
        self._gpu_plot.vb.sigResized.connect(self._sync_memory_axis)
        self._curves["cpu"] = self._cpu_plot.plot(
            name=t("plot.cpu"), pen=pg.mkPen("#e57373" if dark else "#c62828", width=2), connect="finite"
        )
        mark_pen = pg.mkPen(self.palette().color(QPalette.ColorRole.Mid), width=1, style=Qt.PenStyle.DotLine)
        self._curves["cpu_marks"] = pg.PlotDataItem(pen=mark_pen, connect="pairs")
        self._curves["gpu_marks"] = pg.PlotDataItem(pen=mark_pen, connect="pairs")
        self._cpu_plot.addItem(self._curves["cpu_marks"])
        self._gpu_plot.addItem(self._curves["gpu_marks"])
        self.stack.addWidget(self._graphics)
        self._no_gpu = QLabel(self)
        self._no_gpu.setWordWrap(True)
        self._no_gpu.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._no_gpu.setFrameShape(QLabel.Shape.StyledPanel)
        self._no_gpu.setAccessibleName(t("plot.gpu"))
        self._no_gpu.setMinimumHeight(90)
        self._no_gpu.hide()
        self.layout().insertWidget(1, self._no_gpu)
        self.retranslate()

    @Slot()
    def _sync_memory_axis(self) -> None:
        self._mem_axis.setGeometry(self._gpu_plot.vb.sceneBoundingRect())
        self._mem_axis.linkedViewChanged(self._gpu_plot.vb, self._mem_axis.XAxis)

    def retranslate(self) -> None:
        """Axis titles and legends in the current language."""
        self.waiting.setText(t("gpu.waiting"))
        if self._graphics is None:
            return
        self._gpu_plot.setLabel("left", t("plot.gpu"))
        self._gpu_plot.setLabel("right", t("plot.memory"))
        self._cpu_plot.setLabel("left", t("plot.cpu"))
        self._cpu_plot.setLabel("bottom", t("plot.time"))
        for plot in (self._gpu_plot, self._cpu_plot):
            for sample, label in plot.legend.items:
                item = getattr(sample, "item", None)
                key = next((k for k, c in self._curves.items() if c is item), None)
                if key is not None:
                    label.setText({"gpu": t("plot.gpu"), "mem": t("plot.memory"), "cpu": t("plot.cpu")}[key])

    # -- live ---------------------------------------------------------------------------------

    def start(self, sampler: Any) -> None:
        """Draw from a running sampler until ``stop``."""
        self._build()
        self.clear()
        self.sampler = sampler
        self._sequence = 0
        state = sampler.state()
        self._set_availability(state.gpu_readings_available, state.gpu.sentence(), state.gpu)
        self.stack.setCurrentWidget(self._graphics)
        self.timer.start()

    def stop(self) -> None:
        """Stop pulling samples (one last pull first)."""
        if self.sampler is not None:
            self._on_tick()
        self.timer.stop()
        self.sampler = None

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

    def show_series(self, series: dict[str, Any] | None) -> None:
        """Draw a finished series (``SamplingSeries.to_dict()``), as recorded."""
        self.timer.stop()
        self.sampler = None
        if not series:
            self.clear()
            self.stack.setCurrentWidget(self.waiting)
            self.note.setText("")
            return
        self._build()
        self.clear()
        status = series.get("gpu_status") or {}
        samples = list(series.get("samples") or [])
        available = any(_has_gpu(s) for s in samples)
        sentence = _sentence(status)
        self._set_availability(available, sentence, None, series)
        self._append(samples)
        self._draw_marks(list(series.get("marks") or []))
        self.stack.setCurrentWidget(self._graphics)

    # -- drawing ------------------------------------------------------------------------------

    def clear(self) -> None:
        """Forget every sample and mark."""
        self._t0 = None
        self._data = {"t": [], "gpu": [], "mem": [], "cpu": []}
        self.samples_drawn = 0
        self.gpu_available = None
        for curve in self._curves.values():
            curve.setData([], [])
        self._marks_drawn = 0
        self.phases.setText("")

    def _set_availability(
        self, available: bool, sentence: str, status: Any, series: dict[str, Any] | None = None
    ) -> None:
        if self._no_gpu is None:
            return
        provenance = None
        if series is not None and not series.get("recorded_here", True):
            provenance = series.get("provenance")
        elif status is not None and getattr(status, "source", "") == "replay":
            provenance = status.reason
        self.note.setText(t("gpu.replayed", what=provenance) if provenance and available else "")
        if available == self.gpu_available:
            return
        self.gpu_available = available
        self._gpu_plot.setVisible(available)
        self._no_gpu.setVisible(not available)
        if not available:
            self._no_gpu.setText(t("gpu.no_nvml", why=sentence))

    def _append(self, samples: list[dict[str, Any]]) -> None:
        if not samples:
            return
        for sample in samples:
            stamp = sample.get("timestamp")
            if stamp is None or (isinstance(stamp, float) and math.isnan(stamp)):
                continue
            if self._t0 is None:
                self._t0 = float(stamp)
            self._data["t"].append(float(stamp) - self._t0)
            self._data["gpu"].append(_value(sample.get("utilization_percent")))
            memory = sample.get("process_memory_mib")
            if memory is None:
                memory = sample.get("memory_used_mib")
            self._data["mem"].append(_value(memory))
            self._data["cpu"].append(_value(sample.get("probe_cpu_percent")))
        self.samples_drawn = len(self._data["t"])
        xs = self._data["t"]
        if self.gpu_available:
            self._curves["gpu"].setData(xs, self._data["gpu"])
            self._curves["mem"].setData(xs, self._data["mem"])
        else:
            self._curves["gpu"].setData([], [])
            self._curves["mem"].setData([], [])
        self._curves["cpu"].setData(xs, self._data["cpu"])
        finite = [v for v in self._data["cpu"] if not math.isnan(v)]
        self._cpu_plot.setYRange(0, max([100.0, *finite]) * 1.05, padding=0)
        self._cpu_plot.setXRange(0, max(xs[-1], 1.0), padding=0.02)

    def _draw_marks(self, marks: list[dict[str, Any]]) -> None:
        """Phase marks as dotted vertical segments of one curve per plot (items are never added or removed:
        PySide6 6.12 with pyqtgraph 0.14 crashes at exit after InfiniteLine/TextItem churn)."""
        if self._t0 is None or len(marks) == self._marks_drawn:
            return
        self._marks_drawn = len(marks)
        names: list[str] = []
        xs: list[float] = []
        for mark in marks:
            x = float(mark.get("timestamp", self._t0)) - self._t0
            name = str(mark.get("name"))
            short = name.split(".", 1)[-1] if name.startswith(("preload_dlls.", "lib_path_first.")) else name
            xs.append(x)
            names.append(f"{PHASE_LABELS.get(short, name)} {x:.1f} s")
        finite = [v for v in self._data["cpu"] if not math.isnan(v)]
        top = max([100.0, *finite])
        self._curves["cpu_marks"].setData(
            [x for x in xs for _ in (0, 1)], [v for _ in xs for v in (0.0, top)]
        )
        if self.gpu_available:
            self._curves["gpu_marks"].setData(
                [x for x in xs for _ in (0, 1)], [v for _ in xs for v in (0.0, 100.0)]
            )
        self.phases.setText(t("plot.phases", phases=" \u00b7 ".join(names)))


def _value(value: Any) -> float:
    """A reading, or NaN for "not available" (a gap, never a zero)."""
    return float(value) if isinstance(value, int | float) else math.nan


def _has_gpu(sample: dict[str, Any]) -> bool:
    return any(
        sample.get(k) is not None for k in ("utilization_percent", "memory_used_mib", "process_memory_mib")
    )


def _sentence(status: dict[str, Any]) -> str:
    label = {"nvml": "NVML", "replay": "replay"}.get(
        str(status.get("source")), str(status.get("source") or "")
    )
    reason = status.get("reason") or status.get("state") or ""
    return f"{label}: {reason}" if label else str(reason)
