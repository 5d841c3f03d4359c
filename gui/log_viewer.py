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
AROUND = 2 * 1024 * 1024
"""Characters shown before and after the quoted line at most: the pane takes about 0.2 s on the GUI
thread per 4 MiB of text (3 s for a 64 MiB log), so a long log shows the part around the line."""


def around(text: str, line: int, budget: int = AROUND) -> tuple[str, int]:
    """The whole lines of ``text`` within ``budget`` characters before and after line ``line``
    (1-based), and how many lines are left out before them."""
    if len(text) <= 2 * budget:
        return text, 0
    parts = text.split("\n")
    at = min(max(line - 1, 0), len(parts) - 1)
    first, size = at, 0
    while first > 0 and size + len(parts[first - 1]) < budget:
        first -= 1
        size += len(parts[first]) + 1
    last, size = at + 1, 0
    while last < len(parts) and size + len(parts[last]) < budget:
        size += len(parts[last]) + 1
        last += 1
    return "\n".join(parts[first:last]), first


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
        self.before = 0
        """Lines of the log not shown above the pane's first (a long log shows the part around the line)."""
        if text is not None:
            shown_text, self.before = around(text, line)
            self.text.setPlainText(shown_text)
            if len(shown_text) < len(text):
                last = self.before + shown_text.count("\n") + 1
                self.note.setText(
                    self.note.text() + " " + t("log.open.part", first=self.before + 1, last=last)
                )
            self.go_to(line)

    def go_to(self, line: int) -> None:
        """Line ``line`` (1-based, of the log) selected, highlighted and in view."""
        block = self.text.document().findBlockByNumber(max(line - 1 - self.before, 0))
        cursor = QTextCursor(block)
        self.text.setTextCursor(cursor)
        highlight = QTextEdit.ExtraSelection()
        highlight.format.setBackground(QColor("#fff59d"))
        highlight.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        highlight.cursor = cursor
        self.text.setExtraSelections([highlight])
        self.text.centerCursor()

    def current_line(self) -> int:
        """The 1-based line of the log the cursor is on."""
        return self.text.textCursor().blockNumber() + 1 + self.before
