"""Export a bundle from the wizard: a preview of every member before anything is written.

The dialog asks core/bundle for a :class:`BundlePreview` (``prepare_bundle``, on a pool thread)
and shows each member's text as read, every redaction highlighted (its kind and replacement on
hover). The technician can leave a member out, add strings to mask ("redact more") and, only
after confirming, turn redaction off (the manifest then says so). "Save…" asks for a file,
asks again before replacing an existing one, and writes with ``write_bundle`` (atomic).
Nothing here reads the core's live objects: the preview is computed from the report document.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import has, language, t
from fallback_doctor.gui.jobs import CallJob
from PySide6.QtCore import QEvent, QObject, Qt, QThreadPool, Signal, Slot
from PySide6.QtGui import QColor, QFontDatabase, QHelpEvent, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from fallback_doctor.core.facade import BundleOptions, BundlePreview, ExtraMember, Redaction


SHOWN_CHARACTERS = 400_000
"""At most this much of one member is shown (the whole member is redacted and written)."""

REDACTION_PROPERTY = int(QTextFormat.Property.UserProperty) + 1
"""The text property holding a highlighted span's redaction number (one per redaction)."""

CATEGORY_COLOURS = {"secret": "#ef9a9a", "identity": "#90caf9", "extra": "#ffcc80"}


def kind_words(kind: str) -> str:
    """A redaction's kind in words ("licence", "라이선스"), not its code ("license"); a kind the
    catalogue does not know yet is "other value"."""
    key = f"redaction.kind.{kind}"
    return t(key) if has(key) else t("redaction.kind.other")


class RedactionView(QTextBrowser):
    """A member's text with each redaction highlighted; hovering a highlight says its kind."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        self.document().setDefaultFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    def show_member(self, text: str, redactions: Sequence[Redaction], highlight: bool) -> None:
        """``text`` with ``redactions`` (spans in ``text``) highlighted; only the start of a huge text."""
        self.clear()
        cursor = QTextCursor(self.document())
        plain = QTextCharFormat()
        shown = text[:SHOWN_CHARACTERS]
        position = 0
        if highlight:
            for number, redaction in enumerate(sorted(redactions, key=lambda r: (r.start, r.end))):
                start, end = max(redaction.start, position), min(redaction.end, len(shown))
                if start >= end:
                    continue
                cursor.insertText(shown[position:start], plain)
                marked = QTextCharFormat()
                marked.setBackground(QColor(CATEGORY_COLOURS.get(redaction.category, "#ffcc80")))
                marked.setForeground(QColor("#000000"))
                words = t(
                    "preview.hover", kind=kind_words(redaction.kind), replacement=redaction.replacement
                ) + (f"\n{redaction.where}" if redaction.where else "")
                marked.setToolTip("<p>" + html.escape(words).replace("\n", "<br>") + "</p>")
                marked.setProperty(REDACTION_PROPERTY, number)
                cursor.insertText(shown[start:end], marked)
                position = end
        cursor.insertText(shown[position:], plain)
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def highlighted_spans(self) -> int:
        """How many redactions are highlighted (a span cut by a line break counts once)."""
        seen: set[int] = set()
        block = self.document().begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                value = fragment.charFormat().property(REDACTION_PROPERTY)
                if isinstance(value, int):
                    seen.add(value)
                iterator += 1
            block = block.next()
        return len(seen)

    def event(self, event: QEvent) -> bool:
        """Tool tips: the kind of the redaction under the mouse."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            cursor = self.cursorForPosition(self.viewport().mapFromGlobal(event.globalPos()))
            tip = cursor.charFormat().toolTip()
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class _Signals(QObject):
    prepared = Signal()


class BundleDialog(QDialog):
    """The preview: members (tick to include), the selected member's text, redact more, save."""

    def __init__(
        self,
        document: dict[str, Any],
        extras: Sequence[ExtraMember] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = dict(document)
        self.extras: list[ExtraMember] | None = list(extras) if extras is not None else None
        self.preview: BundlePreview | None = None
        self.written: str | None = None
        self.exclude: set[str] = set()
        self.redact_more: list[str] = []
        self.redact = True
        self._generation = 0
        self._jobs: list[CallJob] = []
        self.signals = _Signals()
        self.setModal(True)
        self.resize(1040, 700)
        layout = QVBoxLayout(self)
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        layout.addWidget(self.intro)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.summary)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        left = self._member_column(splitter)
        right = self._text_column(splitter)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        layout.addWidget(splitter, 1)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.note, 1)
        self.save = QPushButton(self)
        self.save.setDefault(True)
        self.save.clicked.connect(self._on_save)
        self.cancel = QPushButton(self)
        self.cancel.clicked.connect(self.reject)
        buttons.addWidget(self.save)
        buttons.addWidget(self.cancel)
        layout.addLayout(buttons)
        for label in self.findChildren(QLabel):  # names and notes come from the document: never markup
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.retranslate()
        self.refresh()

    def _member_column(self, splitter: QSplitter) -> QWidget:
        """The members with their boxes, the extra texts to mask, and redaction on or off."""
        left = QWidget(splitter)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        self.members_label = QLabel(left)
        self.members = QListWidget(left)
        self.members_label.setBuddy(self.members)
        self.members.currentRowChanged.connect(self._on_member)
        self.members.itemChanged.connect(self._on_ticked)
        column.addWidget(self.members_label)
        column.addWidget(self.members, 1)
        self.more_label = QLabel(left)
        self.more_label.setWordWrap(True)
        self.more = QLineEdit(left)
        self.more_label.setBuddy(self.more)
        self.more.returnPressed.connect(self._on_add)
        self.add = QPushButton(left)
        self.add.clicked.connect(self._on_add)
        row = QHBoxLayout()
        row.addWidget(self.more, 1)
        row.addWidget(self.add)
        self.masked = QListWidget(left)
        self.masked.setMaximumHeight(90)
        self.remove = QPushButton(left)
        self.remove.clicked.connect(self._on_remove)
        column.addWidget(self.more_label)
        column.addLayout(row)
        column.addWidget(self.masked)
        column.addWidget(self.remove)
        self.redact_box = QCheckBox(left)
        self.redact_box.setChecked(True)
        self.redact_box.clicked.connect(self._on_redact_clicked)
        column.addWidget(self.redact_box)
        return left

    def _text_column(self, splitter: QSplitter) -> QWidget:
        """The chosen member's text with its redactions highlighted."""
        right = QWidget(splitter)
        text_column = QVBoxLayout(right)
        text_column.setContentsMargins(0, 0, 0, 0)
        self.member_note = QLabel(right)
        self.member_note.setWordWrap(True)
        self.as_written = QCheckBox(right)
        self.as_written.toggled.connect(lambda _on: self._on_member(self.members.currentRow()))
        top = QHBoxLayout()
        top.addWidget(self.member_note, 1)
        top.addWidget(self.as_written)
        text_column.addLayout(top)
        self.text = RedactionView(right)
        text_column.addWidget(self.text, 1)
        return right

    # -- words ----------------------------------------------------------------------------------

    def retranslate(self) -> None:
        """Every label and accessible name in the current language."""
        self.setWindowTitle(t("preview.title"))
        self.intro.setText(t("preview.intro"))
        self.members_label.setText(t("preview.members"))
        self.members.setAccessibleName(t("preview.members"))
        self.members.setToolTip(t("preview.members.tip"))
        self.more_label.setText(t("preview.more"))
        self.more.setAccessibleName(t("preview.more"))
        self.more.setPlaceholderText(t("preview.more.hint"))
        self.add.setText(t("preview.more.add"))
        self.add.setAccessibleName(t("preview.more.add"))
        self.masked.setAccessibleName(t("preview.more.list"))
        self.remove.setText(t("preview.more.remove"))
        self.remove.setAccessibleName(t("preview.more.remove"))
        self.redact_box.setText(t("preview.redact"))
        self.redact_box.setAccessibleName(t("preview.redact"))
        self.as_written.setText(t("preview.as_written"))
        self.as_written.setAccessibleName(t("preview.as_written"))
        self.text.setAccessibleName(t("preview.text"))
        self.save.setText(t("preview.save"))
        self.save.setAccessibleName(t("preview.save"))
        self.cancel.setText(t("preview.cancel"))
        self.cancel.setAccessibleName(t("preview.cancel"))

    # -- the preview ----------------------------------------------------------------------------

    def options(self) -> BundleOptions:
        """The BundleOptions of the choices made so far."""
        return facade.bundle_options(
            redact=self.redact,
            exclude=frozenset(self.exclude),
            redact_more=tuple(self.redact_more),
            lang=language(),
        )

    def refresh(self) -> None:
        """Compute the preview again (on a pool thread) with the current choices."""
        self._generation += 1
        generation = self._generation
        document, options, extras = self.document, self.options(), self.extras

        def prepare() -> tuple[int, BundlePreview, list[ExtraMember]]:
            preview, members = facade.prepare_bundle(document, extras, options)
            return generation, preview, members

        self.save.setEnabled(False)
        self.summary.setText(t("preview.preparing"))
        job = CallJob(prepare)
        job.signals.finished.connect(self._on_prepared)
        job.signals.failed.connect(self._on_failed)
        self._jobs = [*self._jobs[-4:], job]
        QThreadPool.globalInstance().start(job)

    @Slot(object)
    def _on_prepared(self, value: object) -> None:
        # Qt's Signal(object) carries no type: the value is what prepare() above returned.
        generation, preview, extras = cast("tuple[int, BundlePreview, list[ExtraMember]]", value)
        if generation != self._generation:
            return
        self.extras = extras
        self.preview = preview
        current = self.members.currentItem()
        name = current.data(Qt.ItemDataRole.UserRole) if current is not None else None
        self.members.blockSignals(True)
        self.members.clear()
        required = facade.required_members()
        for member in preview.members:
            item = QListWidgetItem(
                t("preview.member", name=member.name, count=len(member.redactions))
                if not member.derived
                else t("preview.member.derived", name=member.name)
            )
            item.setData(Qt.ItemDataRole.UserRole, member.name)
            flags = item.flags() | Qt.ItemFlag.ItemIsUserCheckable
            if member.name in required:
                flags &= ~Qt.ItemFlag.ItemIsUserCheckable
                item.setToolTip(t("preview.required"))
            item.setFlags(flags)
            item.setCheckState(Qt.CheckState.Checked if member.included else Qt.CheckState.Unchecked)
            self.members.addItem(item)
        self.members.blockSignals(False)
        names = [m.name for m in preview.members]
        self.members.setCurrentRow(names.index(name) if name in names else 0)
        self._on_member(self.members.currentRow())
        counts = preview.redaction_counts()
        kinds = ", ".join(
            t("redaction.kind.count", kind=kind_words(kind), count=n) for kind, n in counts.items()
        )
        words = (
            t("preview.summary", files=len(preview.included()), redactions=sum(counts.values()), kinds=kinds)
            if counts
            else t("preview.summary.none", files=len(preview.included()))  # not "0 values masked (-)"
        )
        if not self.redact:
            words = t("preview.unredacted") + " " + words
        for cut in preview.cuts:
            words += "\n" + t("preview.cut", name=cut.member, why=facade.cut_words(cut, language()))
        self.summary.setText(words)
        self.summary.setStyleSheet("color: #d32f2f;" if not self.redact else "")
        self.save.setEnabled(True)
        self.signals.prepared.emit()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.summary.setText(t("run.failed", message=message))

    @Slot(int)
    def _on_member(self, row: int) -> None:
        if self.preview is None or not 0 <= row < len(self.preview.members):
            self.text.clear()
            return
        member = self.preview.members[row]
        written = self.as_written.isChecked()
        self.text.show_member(member.redacted if written else member.original, member.redactions, not written)
        note = (
            t("preview.member.derived.note")
            if member.derived
            else t("preview.member.note", count=len(member.redactions), source=member.source or "-")
        )
        if not member.included:
            note = t("preview.excluded") + " " + note
        if len(member.original) > SHOWN_CHARACTERS:
            note += " " + t("preview.truncated", shown=SHOWN_CHARACTERS, total=len(member.original))
        self.member_note.setText(note)

    @Slot(QListWidgetItem)
    def _on_ticked(self, item: QListWidgetItem) -> None:
        name = str(item.data(Qt.ItemDataRole.UserRole))
        if item.checkState() == Qt.CheckState.Checked:
            self.exclude.discard(name)
        else:
            self.exclude.add(name)
        self.refresh()

    def set_included(self, name: str, included: bool) -> None:
        """Tick or untick a member (as a click on its box does)."""
        for row in range(self.members.count()):
            item = self.members.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == name:
                item.setCheckState(Qt.CheckState.Checked if included else Qt.CheckState.Unchecked)
                return
        raise KeyError(name)

    @Slot()
    def _on_add(self) -> None:
        value = self.more.text().strip()
        if not value or value in self.redact_more:
            return
        self.redact_more.append(value)
        self.masked.addItem(value)
        self.more.clear()
        self.refresh()

    @Slot()
    def _on_remove(self) -> None:
        row = self.masked.currentRow()
        if 0 <= row < len(self.redact_more):
            self.redact_more.pop(row)
            self.masked.takeItem(row)
            self.refresh()

    @Slot(bool)
    def _on_redact_clicked(self, checked: bool) -> None:
        if not checked and not self.ask(t("preview.off.title"), t("preview.off.text")):
            self.redact_box.setChecked(True)
            return
        self.redact = checked
        self.refresh()

    # -- saving ---------------------------------------------------------------------------------

    def ask(self, title: str, text: str) -> bool:
        """A yes/no question; No is the default."""
        answer = QMessageBox.question(
            self,
            title,
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def choose_path(self) -> str:
        """The file to write, from a save dialog ("" when cancelled)."""
        path, _ = QFileDialog.getSaveFileName(
            self,
            t("preview.save"),
            os.path.join(os.path.expanduser("~"), facade.default_bundle_name(self.document)),
            "Bundle (*.zip)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        return path

    @Slot()
    def _on_save(self) -> None:
        path = self.choose_path()
        if path:
            self.save_to(path)

    def save_to(self, path: str) -> None:
        """Write the previewed bundle to ``path`` (asking before replacing a file there)."""
        if self.preview is None:
            return
        if not path.lower().endswith(".zip"):
            path += ".zip"
        force = False
        if os.path.exists(path):
            if not self.ask(t("preview.exists.title"), t("preview.exists.text", path=path)):
                self.note.setText(t("preview.not_saved"))
                return
            force = True
        preview = self.preview

        def write() -> str:
            return facade.write_bundle(preview, path, force)

        self.save.setEnabled(False)
        self.note.setText(t("preview.writing"))
        job = CallJob(write)
        job.signals.finished.connect(self._on_written)
        job.signals.failed.connect(self._on_write_failed)
        self._jobs = [*self._jobs[-4:], job]
        QThreadPool.globalInstance().start(job)

    @Slot(object)
    def _on_written(self, path: object) -> None:
        self.written = str(path)
        self.note.setText(t("diag.export.done", path=path))
        self.accept()

    @Slot(str)
    def _on_write_failed(self, message: str) -> None:
        self.save.setEnabled(True)
        self.note.setText(t("run.failed", message=message))
