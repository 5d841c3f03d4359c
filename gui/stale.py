"""Figures being measured again are not shown as the new run's (issue 26, item 5).

While a step runs again, the document still holds the previous run's figures; the CPU and GPU pages
would show them in the table as if they were the run in progress. The cells of the step that runs
show "…" (being measured) with a tooltip instead, until its result arrives (or, after Stop, the last
finished run's figures come back with the page's "Stopped" line).
"""

from __future__ import annotations

from collections.abc import Iterable

from fallback_doctor.gui.i18n import t
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

MEASURING = "…"


def clear_cells(table: QTableWidget, cells: Iterable[tuple[int, int]]) -> None:
    """Each (row, column) of ``table`` shows "…" and says in its tooltip that it is being measured."""
    for row, column in cells:
        if 0 <= row < table.rowCount() and 0 <= column < table.columnCount():
            item = QTableWidgetItem(MEASURING)
            item.setToolTip(t("table.measuring"))
            table.setItem(row, column, item)


def column_cells(table: QTableWidget, column: int) -> list[tuple[int, int]]:
    """Every cell of one column."""
    return [(row, column) for row in range(table.rowCount())]
