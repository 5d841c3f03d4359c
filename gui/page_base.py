"""What every page shares: the page ids, the colours, plain-text and escaped rich text, the step page.

Texts from a document are shown as plain text: labels that carry them are in Qt.PlainText, and
where a page draws rich text (the colours, the tables) the markup is the wizard's own and every
value from the document is escaped (:func:`esc`); tooltips too (:func:`tip`). A crafted bundle can
neither draw a banner of its own nor make the window load a file.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol

from fallback_doctor.gui.i18n import has, t
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

if TYPE_CHECKING:
    from fallback_doctor.core.facade import Report


class DoctorWizard(Protocol):
    """What a page uses of the window (gui/wizard.py DoctorWizard), so pages need not import it."""

    document: dict[str, Any] | None
    saved_document: dict[str, object] | None
    """The document as last exported (gui/leaving.py asks before closing on anything newer)."""
    running: str | None
    failures: dict[str, str]
    bundle_mode: bool
    searching: bool
    probe_options: dict[str, object]
    target: dict[str, Any]

    @property
    def report(self) -> Report | None:
        """The document read once into core's typed view (gui/runner.py)."""

    def bundle_banner(self) -> str: ...
    def ensure(self, step: str | None) -> None: ...
    def bring_up_to_date(self, page: StepPage) -> None: ...
    def run_step(self, step: str) -> None: ...
    def set_target(self, target: dict[str, Any]) -> None: ...
    def bundle_export_available(self) -> bool: ...
    def open_export_dialog(self) -> QDialog: ...


class Page(IntEnum):
    """The pages, in FAQ order."""

    START = 0
    CONFIG = 1
    LOG = 2
    STACK = 3
    CPU = 4
    GPU = 5
    DIAGNOSIS = 6


STATUS_COLOURS = {
    "error": "#d32f2f",
    "warning": "#f9a825",
    "ok": "#388e3c",
    "info": "#1976d2",
    "unknown": "#9e9e9e",
}
STATUS_SIGNS = {"error": "\u2716", "warning": "\u26a0", "ok": "\u2714", "info": "\u2139", "unknown": "?"}
ROLE_COLOURS = {
    "cause": "#d32f2f",
    "fallback": "#ef6c00",
    "context": "#757575",
    "startup": "#1976d2",
    "hidden": "#6a1b9a",
}


def tint(colour: str, strength: float = 0.12) -> str:
    """A light background from a text colour (Qt rich text reads 8-digit hex as #AARRGGBB)."""
    red, green, blue = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    mix = [round(255 - (255 - part) * strength) for part in (red, green, blue)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def esc(value: object) -> str:
    """A value from a document, made safe inside the wizard's own rich text."""
    return html.escape("" if value is None else str(value), quote=True)


def tip(text: object) -> str:
    """A tooltip that shows ``text`` as it is (Qt would read markup in a plain string as rich text)."""
    return f"<p>{esc(text)}</p>"


def plain_label(parent: QWidget | None) -> QLabel:
    """A word-wrapped, selectable label that never reads its text as markup."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def rich_label(parent: QWidget | None) -> QLabel:
    """A label for the wizard's own markup (every document value in it passes through :func:`esc`)."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def browser(parent: QWidget | None) -> QTextBrowser:
    """A read-only rich-text view that follows no link and loads nothing."""
    view = QTextBrowser(parent)
    view.setOpenLinks(False)
    view.setOpenExternalLinks(False)
    return view


def with_caption(parent: QWidget | None, main: QWidget, caption: QWidget) -> QWidget:
    """``main`` (taking the height) with ``caption`` under it, as one widget for a splitter side."""
    holder = QWidget(parent)
    column = QVBoxLayout(holder)
    column.setContentsMargins(0, 0, 0, 0)
    column.addWidget(main, 1)
    column.addWidget(caption)
    return holder


def label_or(key: str, fallback: str, **params: object) -> str:
    """The label ``key`` when the catalog has it, else ``fallback`` as it is."""
    return t(key, **params) if has(key) else fallback


def mono() -> str:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


# --- the pages ------------------------------------------------------------------------------------


class StepPage(QWizardPage):
    """A page with a title from the labels, a status line, a busy bar and "run this step again"."""

    page_id: Page
    step: str | None = None
    """The step this page runs ("diagnose", "cpu", "gpu") or None."""

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__()
        self.doctor = wizard
        self.body = QVBoxLayout(self)
        self.banner = plain_label(self)
        self.banner.setStyleSheet(
            "QLabel { background: #fff3e0; color: #4e342e; border: 2px solid #ef6c00;"
            " border-radius: 3px; padding: 6px; font-weight: bold; }"
        )
        self.banner.hide()
        self.body.addWidget(self.banner)
        self.status = plain_label(self)
        self._progress_shown = False
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(10)
        if self.step is not None:  # its room kept while hidden: a step's start or end moves nothing
            policy = self.busy.sizePolicy()  # (on the GPU page that made pyqtgraph lay the graph out
            policy.setRetainSizeWhenHidden(True)  # and draw its axes anew: ~10 ms)
            self.busy.setSizePolicy(policy)
        self.busy.hide()
        self.again = QPushButton(self)
        # Return goes Next (the wizard's default button) even where the focus rests on this one;
        # Space or a click runs the step again.
        self.again.setAutoDefault(False)
        self.again.clicked.connect(self._on_again)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.again)
        self.body.addLayout(top)
        self.body.addWidget(self.busy)
        if self.step is None:
            self.again.hide()

    def retranslate(self) -> None:
        """Every word on the page in the current language."""
        name = t(f"{self.key}.name")
        self.setTitle(t("step", n=int(self.page_id) + 1, name=name))
        self.setSubTitle(t(f"{self.key}.sub"))
        self.again.setText(t("run.again"))
        self.again.setAccessibleName(t("run.again"))
        self.status.setAccessibleName(t("status.line"))
        self.show_banner()

    def show_banner(self) -> None:
        """The "bundle from another machine" banner, when a bundle is shown."""
        text = self.doctor.bundle_banner()
        self.banner.setText(text)
        self.banner.setAccessibleName(text)
        self.banner.setVisible(bool(text))

    key = ""

    def isComplete(self) -> bool:  # noqa: N802 - Qt's name
        """Next is available unless this page's step is running."""
        return self.doctor.running is None

    def initializePage(self) -> None:  # noqa: N802 - Qt's name
        """Start this page's step when its result is missing; show what there is (drawn already
        unless the wizard's rendering queue has not come to this page yet)."""
        self.doctor.ensure(self.step)
        self.doctor.bring_up_to_date(self)

    @Slot()
    def _on_again(self) -> None:
        if self.step is not None:
            self.doctor.run_step(self.step)

    def show_running(self, running: str | None, what: str) -> None:
        """The busy bar and the status line while a step runs (or the outcome after)."""
        mine = running is not None and running == self.step
        self.busy.setVisible(mine)
        self.again.setEnabled(running is None and not self.doctor.bundle_mode)
        if mine:
            self.status.setText(what)
        elif self._progress_shown:
            self.status.setText("")  # no stale "Running … (2 s)" above the outcome (Stopped., a failure)
        self._progress_shown = mine

    def draw(self) -> None:
        """Show the document."""

    def render_steps(self) -> Iterator[None]:
        """``draw`` in pieces, one per turn of the event loop when the wizard's queue draws the page
        (each piece well within a frame); yields after each piece. Here: one piece."""
        self.draw()
        yield
