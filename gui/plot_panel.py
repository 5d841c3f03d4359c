"""One panel of the GPU page's graph, painted with QPainter: lines, a time axis in seconds, phase marks.

Drawn by the wizard itself (no plotting library): nothing heavy is imported on the GUI thread, a
new sample costs one repaint of one widget, and the axes never re-layout per tick: the ranges grow
in steps (:func:`step_up`), the time axis is always plain seconds from the series' start.
Long series are drawn min/max per pixel column (peak downsampling), so a paint is bounded by the
panel's width, not by the number of samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPalette, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

_STEPS = (1.0, 2.0, 2.5, 5.0)


def nice_step(span: float, ticks: int = 5) -> float:
    """A tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` ticks over ``span``."""
    if not span > 0 or math.isinf(span):
        return 1.0
    raw = span / max(ticks, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next((s * power for s in _STEPS if s * power >= raw), 10.0 * power)


def step_up(value: float, floor: float) -> float:
    """The axis end for ``value``: at least ``floor``, grown in steps (so it rarely changes)."""
    if not value > floor or math.isinf(value):
        return floor
    power = 10.0 ** math.floor(math.log10(value))
    return next(s * power for s in (1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0) if s * power >= value)


def tick_label(value: float, step: float) -> str:
    """A tick's number as written (never SI-scaled): as many decimals as the step needs."""
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f}"


class Curve:
    """One line's data: x in seconds from the series' start, y in its axis' unit (NaN: a gap)."""

    def __init__(self, colour: str, *, dashed: bool = False, pairs: bool = False, right: bool = False):
        self.colour = colour
        self.dashed = dashed
        self.pairs = pairs  # vertical segments (x, 0), (x, top): the phase marks
        self.right = right  # drawn against the right-hand axis
        self.name = ""
        self.xs: list[float] = []
        self.ys: list[float] = []

    def setData(self, xs: Sequence[float], ys: Sequence[float]) -> None:  # noqa: N802 - the usual name
        """Replace the data (the panel repaints)."""
        self.xs = list(xs)
        self.ys = list(ys)

    def getData(self) -> tuple[list[float], list[float]]:  # noqa: N802
        """The data as drawn: (xs, ys)."""
        return self.xs, self.ys


def peak_polylines(
    xs: Sequence[float], ys: Sequence[float], to_x: float, to_y: float, left: float, bottom: float, width: int
) -> list[list[tuple[float, float]]]:
    """Screen points of a line, split at gaps (NaN); min/max per pixel column where points are denser."""
    dense = len(xs) > 2 * max(width, 1)
    lines: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    bucket: list[float] = []  # column, first, low, high, last (dense only)

    def flush() -> None:
        if bucket:
            column, first, low, high, last = bucket
            current.extend((column, y) for y in (first, low, high, last))
            bucket.clear()

    for x, y in zip(xs, ys, strict=False):
        if y != y or x != x:  # NaN: a reading that was not available, a gap in the line
            flush()
            if current:
                lines.append(current)
                current = []
            continue
        px, py = left + x * to_x, bottom - y * to_y
        if not dense:
            current.append((px, py))
        elif bucket and bucket[0] == float(int(px)):
            bucket[2], bucket[3], bucket[4] = min(bucket[2], py), max(bucket[3], py), py
        else:
            flush()
            bucket.extend((float(int(px)), py, py, py, py))
    flush()
    if current:
        lines.append(current)
    return lines


class PlotPanel(QWidget):
    """A panel: curves over a shared time range, a left axis (and a right one for the memory)."""

    MARGINS = (52, 22, 58, 30)  # left, top, right, bottom

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(120)
        self.curves: list[Curve] = []
        self.x_end = 10.0
        self.y_end = 100.0
        self.right_end = 0.0  # 0: no right-hand axis
        self.left_title = ""
        self.right_title = ""
        self.bottom_title = ""
        self.mark_labels: list[tuple[float, str]] = []
        self._cached: tuple[tuple[object, ...], QPixmap] | None = None

    def plot_rect(self) -> QRectF:
        """The area inside the axes."""
        left, top, right, bottom = self.MARGINS
        return QRectF(left, top, max(1, self.width() - left - right), max(1, self.height() - top - bottom))

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """The axes, grid and legend (kept as a picture until they change), then the curves."""
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._background())
        area = self.plot_rect()
        painter.setClipRect(area.adjusted(-1, -1, 1, 1))
        for curve in self.curves:
            self._paint_curve(painter, area, curve)
        painter.end()

    def _background(self) -> QPixmap:
        """Everything but the curves, drawn again only when a range, a title, a mark or the size changes."""
        palette = self.palette()
        key = (
            self.width(),
            self.height(),
            self.devicePixelRatioF(),
            self.x_end,
            self.y_end,
            self.right_end,
            self.left_title,
            self.right_title,
            self.bottom_title,
            tuple(self.mark_labels),
            tuple((c.name, bool(c.xs)) for c in self.curves),
            palette.cacheKey(),
            self.font().key(),
        )
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap(max(1, round(self.width() * ratio)), max(1, round(self.height() * ratio)))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(palette.color(QPalette.ColorRole.Base))
        painter = QPainter(pixmap)
        painter.setFont(self.font())
        text = palette.color(QPalette.ColorRole.Text)
        grid = QColor(palette.color(QPalette.ColorRole.Mid))
        grid.setAlpha(90)
        area = self.plot_rect()
        self._paint_axes(painter, area, text, grid)
        painter.end()
        self._cached = (key, pixmap)
        return pixmap

    def x_ticks(self) -> list[tuple[float, str]]:
        """The time axis' ticks as drawn: (seconds from the series' start, the label), from 0."""
        step = nice_step(self.x_end, max(2, int(self.plot_rect().width() // 70)))
        return [(i * step, tick_label(i * step, step)) for i in range(int(self.x_end / step + 1e-9) + 1)]

    def _paint_axes(self, painter: QPainter, area: QRectF, text: QColor, grid: QColor) -> None:
        metrics = QFontMetrics(self.font())
        painter.setPen(QPen(grid, 1))
        painter.drawRect(area)
        y_step = nice_step(self.y_end, max(2, int(area.height() // 35)))
        for value, label in self.x_ticks():
            x = area.left() + value / self.x_end * area.width()
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            painter.setPen(text)
            painter.drawText(
                QPointF(x - metrics.horizontalAdvance(label) / 2, area.bottom() + metrics.ascent() + 2), label
            )
        for index in range(int(self.y_end / y_step + 1e-9) + 1):
            value = index * y_step
            y = area.bottom() - value / self.y_end * area.height()
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
            painter.setPen(text)
            label = tick_label(value, y_step)
            painter.drawText(
                QPointF(area.left() - metrics.horizontalAdvance(label) - 4, y + metrics.ascent() / 2 - 1),
                label,
            )
        if self.right_end > 0:
            r_step = nice_step(self.right_end, max(2, int(area.height() // 35)))
            for index in range(int(self.right_end / r_step + 1e-9) + 1):
                value = index * r_step
                y = area.bottom() - value / self.right_end * area.height()
                painter.drawText(
                    QPointF(area.right() + 4, y + metrics.ascent() / 2 - 1), tick_label(value, r_step)
                )
        painter.setPen(text)
        if self.bottom_title:
            painter.drawText(
                QPointF(area.right() - metrics.horizontalAdvance(self.bottom_title), self.height() - 2),
                self.bottom_title,
            )
        self._paint_titles(painter, area, metrics, text)
        shown_until = -1e9
        for x, label in sorted(self.mark_labels):
            px = area.left() + x / self.x_end * area.width() + 2
            if px < shown_until + 6:
                continue  # too close to the one before: the line under the graph names every phase
            painter.drawText(QPointF(px, area.bottom() - 3), label)
            shown_until = px + metrics.horizontalAdvance(label)

    def _paint_titles(self, painter: QPainter, area: QRectF, metrics: QFontMetrics, text: QColor) -> None:
        """The axis titles above the panel, in the colour of their line (they are the legend)."""
        left = next((c for c in self.curves if not c.pairs and not c.right), None)
        right = next((c for c in self.curves if c.right), None)
        half = max(40, int(self.width() / 2) - 8)
        baseline = area.top() - 6
        if self.left_title:
            painter.setPen(QColor(left.colour) if left is not None else text)
            painter.drawText(
                QPointF(2, baseline), metrics.elidedText(self.left_title, Qt.TextElideMode.ElideRight, half)
            )
        if self.right_title and self.right_end > 0:
            title = metrics.elidedText(self.right_title, Qt.TextElideMode.ElideRight, half)
            painter.setPen(QColor(right.colour) if right is not None else text)
            painter.drawText(QPointF(self.width() - 2 - metrics.horizontalAdvance(title), baseline), title)
        painter.setPen(text)

    def _paint_curve(self, painter: QPainter, area: QRectF, curve: Curve) -> None:
        end = self.right_end if curve.right else self.y_end
        if not curve.xs or end <= 0:
            return
        pen = QPen(QColor(curve.colour), 1 if curve.pairs else 2)
        if curve.dashed or curve.pairs:
            pen.setStyle(Qt.PenStyle.DotLine if curve.pairs else Qt.PenStyle.DashLine)
        painter.setPen(pen)
        to_x = area.width() / self.x_end
        to_y = area.height() / end
        if curve.pairs:
            for x in curve.xs[::2]:
                px = area.left() + x * to_x
                painter.drawLine(QPointF(px, area.top()), QPointF(px, area.bottom()))
            return
        for line in peak_polylines(
            curve.xs, curve.ys, to_x, to_y, area.left(), area.bottom(), int(area.width())
        ):
            if len(line) == 1:
                painter.drawPoint(QPointF(*line[0]))
            else:
                painter.drawPolyline(QPolygonF([QPointF(x, y) for x, y in line]))
