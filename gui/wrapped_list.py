"""A list whose items wrap to as many lines as their text needs: never cut with "…", never a gap.

QListWidget's own word wrap measures an item once, at the width it had then, and elides what no
longer fits after a resize (the Korean diagnosis list showed item 2 cut and a blank gap under it).
The delegate here measures each item at the list's current width, every time it is asked.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QListView,
    QListWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

_PAD = 4
_FLAGS = int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


class WrappingDelegate(QStyledItemDelegate):
    """Sizes and paints an item's text wrapped at the view's width."""

    def __init__(self, view: QListWidget) -> None:
        super().__init__(view)
        self.view = view

    def _text_rect(self, width: int) -> QRect:
        return QRect(0, 0, max(40, width - 2 * _PAD), 100000)

    def sizeHint(  # noqa: N802
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """The height the wrapped text needs at the viewport's width now."""
        width = self.view.viewport().width() - 2 * self.view.spacing()
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        bound = option.fontMetrics.boundingRect(self._text_rect(width), _FLAGS, text)
        return QSize(width, bound.height() + 2 * _PAD)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """The row's background (selection, hover) by the style, then the whole text, wrapped."""
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        background = QStyleOptionViewItem(option)
        self.initStyleOption(background, index)
        background.text = ""
        style = option.widget.style() if option.widget is not None else self.view.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, background, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setPen(option.palette.color(role))
        painter.drawText(option.rect.adjusted(_PAD, _PAD, -_PAD, -_PAD), _FLAGS, text)
        painter.restore()


def wrapped_list(parent: QWidget) -> QListWidget:
    """A QListWidget whose items wrap fully at any width (laid out again when it is resized)."""
    view = QListWidget(parent)
    view.setWordWrap(True)
    view.setResizeMode(QListView.ResizeMode.Adjust)
    view.setTextElideMode(Qt.TextElideMode.ElideNone)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setItemDelegate(WrappingDelegate(view))
    return view
