""" "Open log" from a quoted line: the log itself, read-only, at that line (issue 26, item 5).

The log page quotes the decisive lines with their line numbers; a technician wants the lines
around them. A number is a link: this pane opens the file (or the pasted text) read-only, scrolled
to the line and highlighted. A log of a bundle from another machine is not on this one: the pane
says so instead. By hand: ``less +N FILE``.
"""

from __future__ import annotations

import os

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import t
from fallback_doctor.gui.page_base import mono
from PySide6.QtGui import QColor, QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

MAX_BYTES = 64 * 1024 * 1024
"""A log larger than this is not opened here (the pane holds it in memory)."""
PASTED = "<pasted text>"
"""core's name for a pasted log (core/readers/collect/log.py PASTED_SOURCE)."""


def log_text(source: str, pasted: str | None, elsewhere: bool = False) -> tuple[str | None, str]:
    """(the log's text, or None, and why not): the pasted text, else the file when it is a regular
    file here; ``elsewhere`` (an opened bundle): the path is the other machine's, nothing is read."""
    if source == PASTED:
        return (pasted, "") if pasted is not None else (None, t("log.open.gone"))
    if elsewhere or not os.path.isfile(source):  # a bundle's path names the customer's file, not one
        return None, t("log.open.missing", path=source)  # here; and never a device or a fifo
    try:
        if os.path.getsize(source) > MAX_BYTES:
            return None, t("log.open.too_big", path=source, mib=MAX_BYTES >> 20)
        return facade.read_regular_text(source, MAX_BYTES), ""  # a regular file only: never waits
    except OSError:
        return None, t("log.open.missing", path=source)


class LogViewer(QDialog):
    """A log, read-only, with one line highlighted and scrolled to."""

    def __init__(self, source: str, line: int, text: str | None, why: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        shown = t("log.pasted") if source == PASTED else source
        self.setWindowTitle(t("log.open.title", path=shown, line=line))
        self.resize(900, 600)
        column = QVBoxLayout(self)
        self.note = QLabel(why or t("log.open.note", path=shown, line=line), self)
        self.note.setWordWrap(True)
        column.addWidget(self.note)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFont(mono()))
        self.text.setAccessibleName(shown)
        column.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        column.addWidget(buttons)
        self.text.setVisible(text is not None)
        if text is not None:
            self.text.setPlainText(text)
            self.go_to(line)

    def go_to(self, line: int) -> None:
        """Line ``line`` (1-based) selected, highlighted and in view."""
        block = self.text.document().findBlockByNumber(max(line - 1, 0))
        cursor = QTextCursor(block)
        self.text.setTextCursor(cursor)
        highlight = QTextEdit.ExtraSelection()
        highlight.format.setBackground(QColor("#fff59d"))
        highlight.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        highlight.cursor = cursor
        self.text.setExtraSelections([highlight])
        self.text.centerCursor()

    def current_line(self) -> int:
        """The 1-based line the cursor is on."""
        return self.text.textCursor().blockNumber() + 1
