"""The window opens at its preferred size, or smaller where the screen is smaller.

At ``QT_SCALE_FACTOR=2`` a 2560x1440 screen is 1280x720 logical pixels: a window of the preferred
1100x780 would put Next and Close below its bottom edge. By hand: ``xdpyinfo | grep dimensions``.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

FRAME = QSize(16, 48)
"""Room for the window manager's frame and title bar, which lie outside the size a window sets."""


def fit_to_screen(window: QWidget, preferred: QSize, minimum: QSize) -> None:
    """Size ``window`` to ``preferred`` bounded by its screen's free area, centred on it."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        window.setMinimumSize(minimum)
        window.resize(preferred)
        return
    room = screen.availableGeometry()
    size = preferred.boundedTo(QSize(room.width() - FRAME.width(), room.height() - FRAME.height()))
    window.setMinimumSize(minimum.boundedTo(size))
    window.resize(size)
    left = (room.width() - size.width() - FRAME.width()) // 2
    top = (room.height() - size.height() - FRAME.height()) // 2
    window.move(room.topLeft() + QPoint(max(0, left), max(0, top)))
