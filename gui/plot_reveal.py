"""Showing the GPU page's graph without a long stall: laid out and its axes drawn first, then shown.

Shown for the first time at a size (the GPU page opened, a new run), pyqtgraph lays the whole graph
out and draws every axis anew (tick values, labels: Python) in the same turn of the event loop as
the page's own work: 15-18 ms here, the longest stall of a run (benchmarks/bench_gui_stall.py).
:class:`Reveal` shows an empty placeholder of the same size instead, then, one piece per turn of
the event loop, gives the (hidden) graph that size, draws each axis into its cached picture, and
only then swaps the graph in: its first paint plays the pictures back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot
from PySide6.QtGui import QImage, QPainter, QResizeEvent
from PySide6.QtWidgets import QStackedWidget, QStyleOptionGraphicsItem, QWidget

_DONE = object()


class Reveal(QObject):
    """The stack's graph shown in place of its waiting words (``show_graph``), prepared a piece a turn."""

    def __init__(self, owner: QWidget, stack: QStackedWidget, waiting: QWidget) -> None:
        super().__init__(owner)
        self.owner = owner
        self.stack = stack
        self.waiting = waiting
        self.blank = QWidget(stack)
        """The placeholder while the graph is prepared (the size it will have)."""
        stack.addWidget(self.blank)
        self.graphics: QWidget | None = None
        self.axes: Callable[[], list[Any]] = list
        """The axis items to draw ahead, when the graph is prepared."""
        self._steps: Iterator[None] | None = None
        self._due = False
        """The graph is wanted but its page is hidden: prepared when it is shown (``shown``)."""

    def wants_graph(self) -> bool:
        """Whether the graph is shown, or about to be."""
        return self.graphics is not None and (
            self.stack.currentWidget() is self.graphics or self._due or self._steps is not None
        )

    def show_graph(self) -> None:
        """The graph instead of the waiting words: prepared first when it is visible, else when shown."""
        if self.graphics is None or self.wants_graph():
            return
        self.stack.setCurrentWidget(self.blank)
        if self.owner.isVisible():
            self._begin()
        else:
            self._due = True

    def show_waiting(self) -> None:
        """The waiting words (a graph being prepared is not shown)."""
        self._due = False
        self._steps = None
        self.stack.setCurrentWidget(self.waiting)

    def shown(self) -> None:
        """The owner was shown: prepare the graph wanted meanwhile (from the next turn on)."""
        if self._due:
            self._due = False
            self._begin()

    def flush(self) -> None:
        """The graph wanted, shown now (tests and screenshots)."""
        if self.graphics is not None and (self._due or self._steps is not None):
            self._due = False
            self._steps = None
            self.stack.setCurrentWidget(self.graphics)

    def _begin(self) -> None:
        self._steps = self._prepare()
        QTimer.singleShot(0, self, self._next)

    @Slot()
    def _next(self) -> None:
        if self._steps is not None and next(self._steps, _DONE) is not _DONE:
            QTimer.singleShot(0, self, self._next)

    def _prepare(self) -> Iterator[None]:
        """The graph given the placeholder's size and laid out; each axis drawn; then swapped in."""
        graphics = self.graphics
        assert graphics is not None
        yield  # the page painted first (its paint was asked for in the same turn as this)
        rect = self.blank.geometry()
        if rect.size() != graphics.size():  # hidden: Qt would lay it out when shown, in one go
            resized = QResizeEvent(rect.size(), graphics.size())
            graphics.setGeometry(rect)
            QCoreApplication.sendEvent(graphics, resized)  # the scroll area places its viewport
            graphics.resizeEvent(resized)  # (pyqtgraph's, called by the viewport's resize when shown)
            yield
        image = QImage(1, 1, QImage.Format.Format_ARGB32_Premultiplied)
        option = QStyleOptionGraphicsItem()
        for axis in self.axes():
            if axis.isVisible() and getattr(axis, "picture", True) is None:  # drawn once, played after
                painter = QPainter(image)
                try:
                    axis.paint(painter, option, None)
                finally:
                    painter.end()
                yield
        self._steps = None
        self.stack.setCurrentWidget(graphics)
