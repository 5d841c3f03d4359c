"""The GPU page's graph made in pieces, one per turn of the event loop (gui/plot.py ``GpuPlot.build``).

Imported once pyqtgraph is loaded (gui/warmup.py preloads it on a pool thread). Each piece stays
within a few milliseconds, so the window keeps answering while the graph is made
(benchmarks/bench_gui_stall.py): a ViewBox made its right-click menu up front (7-13 ms: a QMenu
with two forms), so the ViewBoxes here make it when first right-clicked; a PlotItem with its
options form (~8 ms) is one piece; every curve is one piece.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyqtgraph as pg
from fallback_doctor.gui.i18n import t
from fallback_doctor.gui.plot_data import SIDES
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette


class LazyMenuViewBox(pg.ViewBox):  # type: ignore[misc]
    """A ViewBox whose right-click menu (the same one) is made when it is first asked for."""

    def __init__(self, **options: Any) -> None:
        super().__init__(enableMenu=False, **options)
        self.state["enableMenu"] = True  # enabled; ``self.menu`` is made on first use

    def _own_menu(self) -> Any:
        """The menu, made now if it is not yet."""
        if self.menu is None and self.menuEnabled():  # type: ignore[has-type]  # pyqtgraph's attribute
            from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu

            self.menu = ViewBoxMenu(self)
            self.updateViewLists()
        return self.menu

    def getMenu(self, ev: Any) -> Any:  # noqa: N802 - pyqtgraph's name
        """The right-click menu (made at the first right click)."""
        return self._own_menu()

    def getContextMenus(self, event: Any) -> Any:  # noqa: N802 - pyqtgraph's name
        """This view's actions in another item's context menu."""
        menu = self._own_menu() if self.menuEnabled() else None
        return menu.actions() if menu is not None else []


def _plot_item(graphics: Any, row: int, plots: list[Any]) -> Iterator[None]:
    """One PlotItem in row ``row`` of ``graphics``, appended to ``plots``: its view, axes, the item."""
    view = LazyMenuViewBox()
    yield
    axes = {side: pg.AxisItem(side) for side in SIDES}
    yield
    item = pg.PlotItem(viewBox=view, axisItems=axes)
    yield
    graphics.addItem(item, row=row, col=0)
    plots.append(item)
    yield


def _configure(plot: Any) -> None:
    """One time axis for both plots: same ranges, same axis widths; no mouse, no SI prefixes."""
    plot.showAxis("right")
    plot.getAxis("left").setWidth(56)
    plot.getAxis("right").setWidth(56)
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)
    plot.disableAutoRange()
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.addLegend(offset=(8, 4))
    for side in ("left", "bottom"):
        plot.getAxis(side).enableAutoSIPrefix(False)  # plain seconds and percent, no "x0.001"


def build_steps(owner: Any) -> Iterator[None]:
    """Make ``owner``'s (a GpuPlot's) graph: ``_graphics``, ``_gpu_plot``, ``_cpu_plot``, ``_mem_axis``,
    ``_curves`` and ``_grid``; it yields between pieces (the caller goes on at the next turn)."""
    palette = owner.palette()
    background = palette.color(QPalette.ColorRole.Base)
    foreground = palette.color(QPalette.ColorRole.Text)
    pg.setConfigOptions(antialias=False, background=background, foreground=foreground)
    graphics = pg.GraphicsLayoutWidget(owner)
    graphics.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    graphics.setAccessibleName(t("plot.gpu"))
    owner._graphics = graphics
    yield
    plots: list[Any] = []
    for row in (0, 1):
        yield from _plot_item(graphics, row, plots)
        _configure(plots[-1])
        yield
    owner._gpu_plot, owner._cpu_plot = plots
    owner._gpu_plot.setYRange(0, 100, padding=0)
    yield from _curves(owner, palette, background)
    grid = QColor(foreground)
    grid.setAlpha(45)
    # The grid as one curve per plot, redrawn when a range steps: pyqtgraph's own grid (showGrid)
    # made the axes repaint over the whole plot on every new sample (30 ms a frame here).
    owner._grid = {}
    for key, plot in (("gpu", owner._gpu_plot), ("cpu", owner._cpu_plot)):
        owner._grid[key] = pg.PlotDataItem(pen=pg.mkPen(grid, width=1), connect="pairs")
        plot.addItem(owner._grid[key])
        yield
    owner._gpu_plot.getAxis("bottom").setStyle(showValues=False)  # the times: under the CPU plot


def _curves(owner: Any, palette: QPalette, background: QColor) -> Iterator[None]:
    """The lines (GPU, memory on its own right axis, probe CPU) and the phase marks, a piece each."""
    dark = background.lightness() < 128
    gpu_plot, cpu_plot = owner._gpu_plot, owner._cpu_plot
    curves = owner._curves
    curves["gpu"] = gpu_plot.plot(
        name=t("plot.gpu"), pen=pg.mkPen("#4fc3f7" if dark else "#0277bd", width=2), connect="finite"
    )
    yield
    owner._mem_axis = LazyMenuViewBox(enableMouse=False)
    owner._mem_axis.disableAutoRange()
    cpu_plot.getAxis("right").setStyle(showValues=False)
    gpu_plot.getAxis("right").enableAutoSIPrefix(False)
    gpu_plot.scene().addItem(owner._mem_axis)
    gpu_plot.getAxis("right").linkToView(owner._mem_axis)
    owner._mem_axis.setXLink(gpu_plot)
    yield
    curves["mem"] = pg.PlotDataItem(
        name=t("plot.memory"),
        pen=pg.mkPen("#ffb74d" if dark else "#e65100", width=2, style=Qt.PenStyle.DashLine),
        connect="finite",
    )
    owner._mem_axis.addItem(curves["mem"])
    gpu_plot.legend.addItem(curves["mem"], t("plot.memory"))
    gpu_plot.vb.sigResized.connect(owner._sync_memory_axis)
    yield
    curves["cpu"] = cpu_plot.plot(
        name=t("plot.cpu"), pen=pg.mkPen("#e57373" if dark else "#c62828", width=2), connect="finite"
    )
    yield
    mark_pen = pg.mkPen(palette.color(QPalette.ColorRole.Mid), width=1, style=Qt.PenStyle.DotLine)
    for key, plot in (("cpu_marks", cpu_plot), ("gpu_marks", gpu_plot)):
        curves[key] = pg.PlotDataItem(pen=mark_pen, connect="pairs")
        plot.addItem(curves[key])
        yield
