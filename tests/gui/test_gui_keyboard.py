"""Keyboard: Tab reaches every button, list and field of each page in the visual order; accessible names."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextBrowser,
    QWidget,
    QWizard,
)

pytestmark = pytest.mark.gui

FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}
INTERACTIVE = (QAbstractButton, QAbstractItemView, QComboBox, QLineEdit, QPlainTextEdit, QTextBrowser)
BUTTONS = (
    QWizard.WizardButton.CustomButton2,
    QWizard.WizardButton.CustomButton1,
    QWizard.WizardButton.BackButton,
    QWizard.WizardButton.NextButton,
    QWizard.WizardButton.FinishButton,
    QWizard.WizardButton.CancelButton,
)


def _interactive(wizard: DoctorWizard) -> list[QWidget]:
    """What a person can use on the page now, and the wizard's buttons shown."""
    page = wizard.currentPage()
    widgets = [
        w
        for w in page.findChildren(QWidget)
        if isinstance(w, INTERACTIVE) and w.isVisible() and w.isEnabled()
    ]
    buttons = [wizard.button(b) for b in BUTTONS]
    return widgets + [b for b in buttons if b.isVisible() and b.isEnabled()]


def _exclusive_group(widget: QWidget) -> object | None:
    group = widget.group() if isinstance(widget, QAbstractButton) else None
    return group if group is not None and group.exclusive() else None


def _tab_cycle(wizard: DoctorWizard) -> list[QWidget]:
    """The widgets Tab visits, in order, once around."""
    seen: list[QWidget] = []
    for _ in range(80):
        QTest.keyClick(QApplication.focusWidget() or wizard, Qt.Key.Key_Tab)
        focus = QApplication.focusWidget()
        if focus in seen:
            if len(seen) > 1 and focus is seen[0]:
                break
            continue
        seen.append(focus)
    return seen


def _rect(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def _in_visual_order(sequence: list[QWidget]) -> list[str]:
    """Steps that go back: to a widget wholly above (not in a column to the right) or left on the same row."""
    wrong = []
    for a, b in itertools.pairwise(sequence):
        ra, rb = _rect(a), _rect(b)
        above = rb.bottom() < ra.top() and rb.left() < ra.right()
        same_row = rb.top() <= ra.bottom() and ra.top() <= rb.bottom()
        if above or (same_row and rb.right() < ra.left()):
            wrong.append(f"{a.accessibleName()} -> {b.accessibleName()}")
    return wrong


@pytest.fixture
def wizard(qtbot, tmp_path) -> Iterator[DoctorWizard]:  # type: ignore[no-untyped-def]
    """A Python target's wizard, shown and active, its installations searched."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = DoctorWizard({"kind": "python"}, settings=settings, probe_options=FAST, lang="en")
    qtbot.addWidget(made)
    made.show()
    made.activateWindow()
    try:
        qtbot.waitUntil(lambda: not made.searching, timeout=10_000)
        yield made
    finally:
        made.shutdown()
        set_language("en")


def test_tab_walks_every_page_in_visual_order(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    for number in range(len(Page)):
        if number:
            wizard.next()
            qtbot.waitUntil(lambda: wizard.running is None, timeout=120_000)
            wizard.flush_rendering()
        assert wizard.currentId() == number
        cycle = _tab_cycle(wizard)
        page = wizard.currentPage()
        for widget in _interactive(wizard):
            assert widget.accessibleName().strip(), f"page {number}: {type(widget).__name__} has no name"
            group = _exclusive_group(widget)
            if not widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
                continue  # part of another widget (a table's headers): not a Tab stop of its own
            if group is None:
                assert widget in cycle, f"page {number}: Tab never reaches {widget.accessibleName()}"
            else:
                # An exclusive group is one Tab stop; the arrow keys move inside it.
                assert any(b in cycle for b in group.buttons()), f"page {number}: {widget.accessibleName()}"
        # The cycle read from the page's first widget (the one after the button row).
        start = next(
            i for i, w in enumerate(cycle) if page.isAncestorOf(w) and not page.isAncestorOf(cycle[i - 1])
        )
        ordered = cycle[start:] + cycle[:start]
        assert _in_visual_order(ordered) == [], f"page {number}"
    # Arrow keys move between the layers of the stack (one exclusive group).
    wizard.back()
    wizard.back()
    wizard.back()
    stack = wizard.pages[Page.STACK]
    stack.buttons["driver"].setFocus()
    QTest.keyClick(stack.buttons["driver"], Qt.Key.Key_Up)
    assert QApplication.focusWidget() is stack.buttons["cuda"]


def test_return_goes_next_even_where_the_focus_rests_on_run_again(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    wizard.next()  # the configuration page
    wizard.next()  # the log page: its step runs
    for page in (Page.LOG, Page.STACK):
        qtbot.waitUntil(lambda: wizard.running is None, timeout=120_000)
        assert wizard.currentId() == page
        again = wizard.pages[page].again
        assert again.isVisible()
        again.setFocus()
        ran: list[bool] = []
        again.clicked.connect(lambda _checked=False, ran=ran: ran.append(True))
        QTest.keyClick(again, Qt.Key.Key_Return)
        assert ran == [], "Return ran the step again"
        assert wizard.currentId() == page + 1, "Return did not go Next"
