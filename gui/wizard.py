"""The wizard: seven pages, one FAQ step each, rendered from the report document alone.

Steps run in child processes (gui/jobs.py StepJob, gui/steps.py) and come back as queued
signals; the pages only ever read ``DoctorWizard.document`` (the report ``diagnose --json``
prints, with the test inference added under ``"inference"``), so a bundle opened on another
machine shows the same pages.
"""

from __future__ import annotations

import html
import os
import time
from collections.abc import Callable
from enum import IntEnum
from typing import Any

from fallback_doctor.gui import views
from fallback_doctor.gui.i18n import language, set_language, t
from fallback_doctor.gui.jobs import CallJob, StepJob
from PySide6.QtCore import QSettings, Qt, QThreadPool, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)


def series_from_samples_csv(text: str | None, document: dict[str, Any]) -> dict[str, Any] | None:
    """The utilization series replayed from a bundle's samples.csv (the marks and status from the report).

    None when there is no samples.csv; a cell left empty is a reading that was not available.
    """
    if not text:
        return None
    import csv
    import io

    samples: list[dict[str, Any]] = []
    for row in csv.DictReader(io.StringIO(text)):
        sample: dict[str, Any] = {}
        for key, raw in row.items():
            if key is None:
                continue
            if raw is None or raw == "":
                sample[key] = None
                continue
            try:
                number = float(raw)
            except ValueError:
                sample[key] = raw
            else:
                sample[key] = int(number) if key in {"gpu_index", "pid"} and number.is_integer() else number
        samples.append(sample)
    recorded = dict(((document.get("inference") or {}).get("series")) or {})
    return {
        **recorded,
        "samples": samples,
        "marks": list(recorded.get("marks") or []),
        "recorded_here": False,
        "provenance": t("bundle.samples"),
    }


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


def _tint(colour: str, strength: float = 0.12) -> str:
    """A light background from a text colour (Qt rich text reads 8-digit hex as #AARRGGBB)."""
    red, green, blue = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    mix = [round(255 - (255 - part) * strength) for part in (red, green, blue)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def _esc(value: object) -> str:
    return html.escape(str(value))


def _mono() -> str:
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
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setStyleSheet(
            "QLabel { background: #fff3e0; color: #4e342e; border: 2px solid #ef6c00;"
            " border-radius: 3px; padding: 6px; font-weight: bold; }"
        )
        self.banner.hide()
        self.body.addWidget(self.banner)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(10)
        self.busy.hide()
        self.again = QPushButton(self)
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
        """Start this page's step when its result is missing; show what there is."""
        self.doctor.ensure(self.step)
        self.render()

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

    def render(self) -> None:
        """Show the document."""


class StartPage(StepPage):
    """0. What to diagnose."""

    page_id = Page.START
    key = "start"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.again.hide()
        self.status.hide()
        self.group = QButtonGroup(self)
        grid = QGridLayout()
        self.radios: dict[str, QRadioButton] = {}
        self.fields: dict[str, QLineEdit] = {}
        self.browse: dict[str, QPushButton] = {}
        row = 0
        for kind in ("bareun", "python", "log", "paste", "bundle"):
            radio = QRadioButton(self)
            self.group.addButton(radio)
            self.radios[kind] = radio
            grid.addWidget(radio, row, 0, 1, 3)
            row += 1
            if kind == "bareun":
                self.found = QComboBox(self)
                self.found.setEditable(False)
                self.found_label = QLabel(self)
                self.found_label.setWordWrap(True)
                grid.addWidget(self.found_label, row, 1)
                grid.addWidget(self.found, row, 2)
                self.found.currentIndexChanged.connect(self._on_found)
                row += 1
            if kind == "paste":
                self.paste = QPlainTextEdit(self)
                self.paste.setMaximumHeight(110)
                self.paste.setTabChangesFocus(True)
                self.paste.textChanged.connect(lambda: self.radios["paste"].setChecked(True))
                grid.addWidget(self.paste, row, 1, 1, 3)
                row += 1
                continue
            label = QLabel(self)
            edit = QLineEdit(self)
            edit.textEdited.connect(lambda _text, k=kind: self.radios[k].setChecked(True))
            label.setBuddy(edit)
            button = QPushButton(self)
            button.clicked.connect(lambda _checked=False, k=kind: self._on_browse(k))
            grid.addWidget(label, row, 1)
            grid.addWidget(edit, row, 2)
            grid.addWidget(button, row, 3)
            self.fields[kind] = edit
            self.browse[kind] = button
            self.fields_labels = getattr(self, "fields_labels", {})
            self.fields_labels[kind] = label
            row += 1
        grid.setColumnStretch(2, 1)
        grid.setColumnMinimumWidth(0, 24)
        self.body.addLayout(grid)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {STATUS_COLOURS['error']};")
        self.body.addWidget(self.problem)
        self.body.addStretch(1)
        self.installations: list[str] = []

    def retranslate(self) -> None:
        """Labels of the choices."""
        super().retranslate()
        for kind, radio in self.radios.items():
            radio.setText(t(f"start.{kind}"))
            radio.setAccessibleName(t(f"start.{kind}"))
        names = {
            "bareun": "start.folder",
            "python": "start.interpreter",
            "log": "start.logfile",
            "bundle": "start.bundlefile",
        }
        for kind, key in names.items():
            self.fields_labels[kind].setText(t(key) + ":")
            self.fields[kind].setAccessibleName(t(key))
            self.browse[kind].setText(t("start.browse"))
            self.browse[kind].setAccessibleName(f"{t('start.browse')} {t(key)}")
        self.paste.setPlaceholderText(t("start.paste.hint"))
        self.paste.setAccessibleName(t("start.paste"))
        self.found.setAccessibleName(t("start.bareun.found"))
        self.show_installations(self.installations, searching=self.doctor.searching)

    def show_installations(self, roots: list[str], searching: bool = False) -> None:
        """The Bareun installations found on this machine, first in the list."""
        self.installations = roots
        self.found.blockSignals(True)
        self.found.clear()
        for root in roots:
            self.found.addItem(root)
        self.found.blockSignals(False)
        self.found.setVisible(bool(roots))
        if searching:
            self.found_label.setText(t("start.bareun.searching"))
        elif roots:
            self.found_label.setText(t("start.bareun.found"))
            if not self.fields["bareun"].text():
                self.fields["bareun"].setText(roots[0])
        else:
            self.found_label.setText(t("start.bareun.none"))

    @Slot(int)
    def _on_found(self, index: int) -> None:
        if 0 <= index < len(self.installations):
            self.fields["bareun"].setText(self.installations[index])
            self.radios["bareun"].setChecked(True)

    def _on_browse(self, kind: str) -> None:
        current = self.fields[kind].text()
        if kind == "bareun":
            path = QFileDialog.getExistingDirectory(self, t("start.folder"), current or "/")
        elif kind == "bundle":
            path, _ = QFileDialog.getOpenFileName(self, t("start.bundlefile"), current, "Bundle (*.zip)")
        else:
            path, _ = QFileDialog.getOpenFileName(
                self, t(f"start.{'interpreter' if kind == 'python' else 'logfile'}"), current
            )
        if path:
            self.fields[kind].setText(path)
            self.radios[kind].setChecked(True)

    def load(self, target: dict[str, Any]) -> None:
        """Fill the page from a target (the command line or the last one remembered)."""
        kind = target.get("kind") or "auto"
        if target.get("bareun_root") or target.get("config"):
            self.fields["bareun"].setText(target.get("bareun_root") or target.get("config") or "")
        if target.get("python"):
            self.fields["python"].setText(target["python"])
        if target.get("logs"):
            self.fields["log"].setText(target["logs"][0])
        if target.get("bundle"):
            self.fields["bundle"].setText(target["bundle"])
        choice = {"bareun": "bareun", "python": "python", "log": "log", "bundle": "bundle"}.get(kind)
        if choice is None:
            choice = "bareun" if self.fields["bareun"].text() else "python"
        self.radios[choice].setChecked(True)
        self.pending_pid = target.get("pid")
        self.pending_config = target.get("config")

    def target(self) -> tuple[dict[str, Any] | None, str | None]:
        """The chosen target, or a problem in words."""
        chosen = next((k for k, r in self.radios.items() if r.isChecked()), "python")
        pid = getattr(self, "pending_pid", None)
        if chosen == "paste":
            text = self.paste.toPlainText().strip()
            if not text:
                return None, t("start.missing", what=t("start.paste"))
            return {"kind": "log", "log_text": text}, None
        value = self.fields[chosen].text().strip()
        if not value:
            if chosen == "python":
                return {"kind": "python", "pid": pid}, None
            return None, t("start.missing", what=self.fields_labels[chosen].text().rstrip(":"))
        value = os.path.expanduser(value)
        if not os.path.exists(value):
            return None, t("start.not_found", path=value)
        if chosen == "bareun":
            if os.path.isfile(value):
                return {"kind": "bareun", "config": value, "pid": pid}, None
            config = getattr(self, "pending_config", None)
            return {"kind": "bareun", "bareun_root": value, "config": config, "pid": pid}, None
        if chosen == "python":
            if os.path.isdir(value):
                for candidate in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
                    if os.path.isfile(os.path.join(value, candidate)):
                        value = os.path.join(value, candidate)
                        break
            return {"kind": "python", "python": value, "pid": pid}, None
        if chosen == "log":
            return {"kind": "log", "logs": [value]}, None
        return {"kind": "bundle", "bundle": value}, None

    def initializePage(self) -> None:  # noqa: N802
        """Nothing runs on the start page."""
        self.problem.setText("")

    def validatePage(self) -> bool:  # noqa: N802
        """Take the target; the diagnosis starts as the next page opens."""
        target, problem = self.target()
        if target is None:
            self.problem.setText(problem or "")
            return False
        self.problem.setText("")
        self.doctor.set_target(target)
        return True


class ConfigPage(StepPage):
    """1. Check the configuration."""

    page_id = Page.CONFIG
    key = "config"
    step = "diagnose"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.file = QTextBrowser(self)
        self.file.setOpenExternalLinks(False)
        self.file.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        self.legend = QLabel(self)
        self.legend.setWordWrap(True)
        self.view = QTextBrowser(self)
        self.view.setOpenExternalLinks(False)
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.file, 1)
        column.addWidget(self.legend)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.body.addWidget(self.splitter, 1)
        self.line_marks: dict[int, str] = {}
        """What the file view marks: line -> "key" (a key that matters), "cpu" (executionProvider asks
        for the CPU) or a finding's severity ("error", "warning", "info")."""

    def _render_file(self, view: dict[str, Any]) -> None:
        """The whole file, monospace, numbered; the keys that matter and the findings' lines marked."""
        self.line_marks = {}
        text = view["text"]
        self.file.setVisible(bool(view["path"]))
        self.legend.setVisible(bool(view["path"]) and text is not None)
        if not view["path"]:
            self.file.setHtml("")
            return
        if text is None:
            self.file.setHtml(f"<p>{_esc(t('config.text.missing'))}</p>")
            return
        for line in (*view["key_lines"].values(), view["provider_line"]):
            if isinstance(line, int):
                self.line_marks[line] = "key"  # the provider's own line too ({"provider": "cuda"})
        self.line_marks.update(view["marks"])
        if view["wants_cpu"]:
            for line in (view["key_lines"].get("executionProvider"), view["provider_line"]):
                if isinstance(line, int) and self.line_marks.get(line) in (None, "key", "info"):
                    self.line_marks[line] = "cpu"  # the answer at once: red, above a finding's "info"
        lines = text.split("\n")
        if lines and lines[-1] == "" and len(lines) > 1:
            lines.pop()
        width = len(str(len(lines)))
        mono = _mono()
        rows: list[str] = []
        for number, line in enumerate(lines, start=1):
            kind = self.line_marks.get(number)
            if kind == "key":
                colour = STATUS_COLOURS["info"]
            elif kind == "cpu":
                colour = STATUS_COLOURS["error"]
            else:
                colour = STATUS_COLOURS.get(kind or "", "")
            sign = STATUS_SIGNS.get(kind or "", " ") if kind not in (None, "key", "cpu") else " "
            style = f"margin:0; white-space:pre; font-family:{mono}"
            if colour:
                style += f"; background-color:{_tint(colour, 0.22 if kind != 'key' else 0.14)}"
            gutter = f"<span style='color:#9e9e9e'>{number:>{width}} </span>"
            mark = f"<span style='color:{colour or '#9e9e9e'}'>{sign}</span> "
            weight = "font-weight:bold; " if kind in ("key", "cpu") else ""
            shown = _esc(line.rstrip("\r"))
            rows.append(f"<p style='{style}'>{gutter}{mark}<span style='{weight}'>{shown}</span></p>")
        self.file.setHtml("".join(rows))
        first = min((n for n, k in self.line_marks.items() if k != "key"), default=None)
        if first is not None and first > 20:
            block = self.file.document().findBlockByNumber(first - 5)
            if block.isValid():
                cursor = self.file.textCursor()
                cursor.setPosition(block.position())
                self.file.setTextCursor(cursor)
                self.file.ensureCursorVisible()

    def render(self) -> None:
        """The configuration file, its provider setting and issues, and the findings with fixes."""
        document = self.doctor.document
        self.view.setAccessibleName(t("config.name"))
        self.file.setAccessibleName(t("config.text.name"))
        self.legend.setText(t("config.legend"))
        if document is None:
            self.view.setHtml("")
            self.file.setHtml("")
            self.line_marks = {}
            return
        view = views.config_view(document)
        self._render_file(view)
        lang = language()
        parts: list[str] = []
        if not view["path"]:
            parts.append(f"<p>{_esc(t('config.none'))}</p>")
        else:
            parts.append(f"<p><b>{_esc(t('config.file', path=view['path']))}</b></p>")
            if view["provider_raw"] is not None:
                colour = STATUS_COLOURS["error"] if view["wants_cpu"] else STATUS_COLOURS["info"]
                tint = _tint(colour)
                parts.append(
                    f"<p style='font-family:{_mono()}; background:{tint}; border-left:4px solid {colour};"
                    f" padding:4px'>{_esc(t('config.provider', value=view['provider_raw'], line=view['provider_line']))}"  # noqa: E501
                    "</p>"
                )
            else:
                parts.append(f"<p>{_esc(t('config.provider.none'))}</p>")
            if view["wants_cpu"]:
                parts.append(
                    f"<p style='color:{STATUS_COLOURS['error']}'><b>{_esc(t('config.wants_cpu'))}</b></p>"
                )
            if view["lib_path"]:
                parts.append(
                    f"<p style='font-family:{_mono()}'>{_esc(t('config.libpath', path=view['lib_path']))}</p>"
                )
            for issue in view["issues"]:
                colour = STATUS_COLOURS.get(str(issue.get("severity")), STATUS_COLOURS["warning"])
                parts.append(
                    f"<p style='border-left:4px solid {colour}; padding-left:6px'>"
                    f"<span style='font-family:{_mono()}'>{_esc(issue.get('line'))}: "
                    f"{_esc(issue.get('line_text') or '')}</span><br>{_esc(issue.get('message') or '')}</p>"
                )
        parts.append(_findings_html(view["findings"], lang))
        if view["path"] and not view["findings"] and not view["wants_cpu"]:
            parts.append(f"<p style='color:{STATUS_COLOURS['ok']}'>{_esc(t('config.ok'))}</p>")
        self.view.setHtml("".join(parts))
        if self.doctor.running != "diagnose":
            self.status.setText(_verdict_line(document, lang))


class LogPage(StepPage):
    """2. Read the log."""

    page_id = Page.LOG
    key = "log"
    step = "diagnose"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.view = QTextBrowser(self)
        self.body.addWidget(self.view, 1)

    def render(self) -> None:
        """The decisive lines, highlighted by role, and the causes they point to."""
        document = self.doctor.document
        self.view.setAccessibleName(t("log.name"))
        if document is None:
            self.view.setHtml("")
            return
        view = views.log_view(document)
        lang = language()
        parts: list[str] = []
        if not view["collected"]:
            parts.append(f"<p>{_esc(t('log.none'))}</p>")
        else:
            files = ", ".join(str(s) for s in view["sources"]) or "-"
            parts.append(f"<p>{_esc(t('log.sources', files=files, lines=view['examined']))}</p>")
            if not view["lines"]:
                parts.append(f"<p>{_esc(t('log.no_lines'))}</p>")
            else:
                rows = []
                for quote in view["lines"]:
                    role = str(quote.get("role") or "context")
                    colour = ROLE_COLOURS.get(role, "#757575")
                    label = t(f"log.role.{role}") if f"log.role.{role}" in _LABEL_KEYS else role
                    rows.append(
                        f"<tr><td style='color:{colour}; white-space:nowrap'><b>{_esc(label)}</b></td>"
                        f"<td style='white-space:nowrap'>{_esc(quote.get('line') or '')}</td>"
                        f"<td style='font-family:{_mono()}; background:{_tint(colour)}'>{_esc(quote.get('text'))}</td></tr>"  # noqa: E501
                    )
                parts.append(
                    "<table cellspacing='0' cellpadding='3' width='100%'>" + "".join(rows) + "</table>"
                )
            for cause in view["causes"][:3]:
                parts.append(
                    f"<p>{_esc(t('log.cause', cause=cause.get('cause'), confidence=cause.get('confidence') or 0))}"  # noqa: E501
                    "</p>"
                )
            for hidden in view["hidden"]:
                says = hidden.get("says") or {}
                parts.append(f"<p><i>{_esc(says.get(lang) or says.get('en') or '')}</i></p>")
        parts.append(_findings_html(view["findings"], lang))
        self.view.setHtml("".join(parts))
        if self.doctor.running != "diagnose":
            self.status.setText(_verdict_line(document, lang))


class StackPage(StepPage):
    """3. Inspect the stack, drawn bottom-up."""

    page_id = Page.STACK
    key = "stack"
    step = "diagnose"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        column = QWidget(splitter)
        layers = QVBoxLayout(column)
        layers.setSpacing(4)
        self.buttons: dict[str, QPushButton] = {}
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        for name in reversed(views.STACK_LAYERS):
            button = QPushButton(column)
            button.setCheckable(True)
            button.setMinimumHeight(58)
            button.clicked.connect(lambda _checked=False, n=name: self.select(n))
            self.group.addButton(button)
            layers.addWidget(button)
            self.buttons[name] = button
        layers.addStretch(1)
        self.detail = QTextBrowser(splitter)
        splitter.addWidget(column)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.body.addWidget(splitter, 1)
        self.selected: str | None = None
        self.layers: list[dict[str, Any]] = []

    def render(self) -> None:
        """Each layer's status, version found and needed; the selected layer's evidence."""
        document = self.doctor.document
        self.detail.setAccessibleName(t("stack.findings"))
        self.layers = views.stack_layers(document) if document is not None else []
        by_name = {layer["layer"]: layer for layer in self.layers}
        for name, button in self.buttons.items():
            layer = by_name.get(name)
            status = layer["status"] if layer else "unknown"
            words = f"{STATUS_SIGNS[status]}  {t('layer.' + name)}   —   {t('status.' + status)}"
            if layer:
                version = layer.get("version") or t("stack.unknown")
                extra = t("stack.version", version=version)
                if layer.get("needed"):
                    extra += "   ·   " + t("stack.needed", needed=layer["needed"])
                words += "\n" + extra
            button.setText(words)
            button.setAccessibleName(f"{t('layer.' + name)}: {t('status.' + status)}")
            colour = STATUS_COLOURS[status]
            button.setStyleSheet(
                f"QPushButton {{ text-align: left; padding: 6px 10px; border: 1px solid palette(mid);"
                f" border-left: 10px solid {colour}; border-radius: 3px; }}"
                f" QPushButton:checked {{ background: palette(highlight); color: palette(highlighted-text); }}"  # noqa: E501
            )
        if self.selected is None and self.layers:
            broken = next((layer["layer"] for layer in self.layers if layer["status"] == "error"), None)
            self.selected = broken or self.layers[0]["layer"]
        if self.selected is not None:
            self.select(self.selected)
        else:
            self.detail.setHtml(f"<p>{_esc(t('stack.select'))}</p>")
        if document is not None and self.doctor.running != "diagnose":
            self.status.setText(_verdict_line(document, language()))

    def select(self, name: str) -> None:
        """Show one layer's libraries, facts and findings."""
        self.selected = name
        self.buttons[name].setChecked(True)
        layer = next((item for item in self.layers if item["layer"] == name), None)
        if layer is None:
            self.detail.setHtml("")
            return
        lang = language()
        parts = [f"<h3>{_esc(t('layer.' + name))} — {_esc(t('status.' + layer['status']))}</h3>"]
        if layer["libraries"]:
            rows = "".join(
                f"<tr><td style='font-family:{_mono()}'>{_esc(lib['name'])}</td><td style='font-family:{_mono()};"  # noqa: E501
                f" color:{STATUS_COLOURS['ok'] if lib['path'] else STATUS_COLOURS['error']}'>"
                f"{_esc(lib['path'] or t('stack.missing'))}</td></tr>"
                for lib in layer["libraries"]
            )
            parts.append(f"<p><b>{_esc(t('stack.libraries'))}</b></p><table cellpadding='2'>{rows}</table>")
        if layer["facts"]:
            rows = "".join(
                f"<tr><td>{_esc(k)}</td><td style='font-family:{_mono()}'>{_esc(v)}</td></tr>"
                for k, v in layer["facts"].items()
            )
            parts.append(f"<p><b>{_esc(t('stack.facts'))}</b></p><table cellpadding='2'>{rows}</table>")
        if layer["findings"]:
            parts.append(_findings_html(layer["findings"], lang, evidence=True))
        else:
            parts.append(f"<p>{_esc(t('stack.clean'))}</p>")
        self.detail.setHtml("".join(parts))


class CpuPage(StepPage):
    """4. The CPU baseline."""

    page_id = Page.CPU
    key = "cpu"
    step = "cpu"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.table = QTableWidget(self)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (arrows move between cells)
        self.table.setCornerButtonEnabled(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.body.addWidget(self.table, 1)

    def render(self) -> None:
        """The latency table of the CPU baseline."""
        self.table.setAccessibleName(t("table.cpu"))
        self.table.horizontalHeader().setAccessibleName(f"{t('table.cpu')}: {t('table.columns')}")
        self.table.verticalHeader().setAccessibleName(f"{t('table.cpu')}: {t('table.rows')}")
        inference = (self.doctor.document or {}).get("inference") or {}
        step = inference.get("cpu") or {}
        result = step.get("result") or {}
        cpu = result.get("cpu") or {}
        rows = _session_rows(cpu)
        self.table.setColumnCount(2)
        self.table.setHorizontalHeaderLabels([t("table.metric"), t("table.cpu")])
        self.table.setRowCount(len(rows))
        for row, (label, value) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(label))
            self.table.setItem(row, 1, QTableWidgetItem(value))
        if self.doctor.running == "cpu":
            return
        if self.doctor.failures.get("cpu"):
            self.status.setText(self.doctor.failures["cpu"])
        elif cpu.get("latency"):
            model = step.get("model") or {}
            self.status.setText(
                t("cpu.done", runs=(cpu.get("latency") or {}).get("runs"), model=model.get("name"))
            )
        elif step:
            failure = (result.get("failure") or {}).get("sentence") or cpu.get("error") or "?"
            self.status.setText(t("cpu.failed", why=failure))
        elif self.doctor.bundle_mode:
            self.status.setText(t("run.bundle"))


class GpuPage(StepPage):
    """5. The GPU retry with the live graph."""

    page_id = Page.GPU
    key = "gpu"
    step = "gpu"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        from fallback_doctor.gui.plot import GpuPlot

        self.plot = GpuPlot(self)
        self.verdict = QLabel(self)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(self)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (arrows move between cells)
        self.table.setCornerButtonEnabled(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(120)
        self.table.verticalHeader().setVisible(False)
        self.body.addWidget(self.verdict)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        self.body.addWidget(splitter, 1)

    def retranslate(self) -> None:
        """Labels, and the graph's axes."""
        super().retranslate()
        self.plot.retranslate()

    def render(self) -> None:
        """The graph (live while running, else the recorded series), the verdict and the comparison."""
        self.table.setAccessibleName(t("table.gpu"))
        self.table.horizontalHeader().setAccessibleName(f"{t('table.gpu')}: {t('table.columns')}")
        self.verdict.setAccessibleName(t("gpu.name"))
        inference = (self.doctor.document or {}).get("inference") or {}
        if self.doctor.running != "gpu":
            self.plot.show_series(inference.get("series"))
        summary = views.gpu_summary(inference)
        lang = language()
        self.table.setColumnCount(3)
        self.table.setHorizontalHeaderLabels([t("table.metric"), t("table.cpu"), t("table.gpu")])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        cpu_rows = _session_rows(summary["cpu"])
        gpu_rows = _session_rows(summary["gpu"])
        extra = [
            (
                t("table.speedup"),
                "",
                f"{summary['speedup']:.2f}\u00d7"
                if summary["speedup"]
                else (t("table.speedup_none") if summary["ran"] and not summary["on_gpu"] else "-"),
            ),
            (
                t("table.equal"),
                "",
                "-"
                if summary["outputs_equal"] is None
                else t("yes")
                if summary["outputs_equal"]
                else t("no"),
            ),
        ]
        rows = [(a[0], a[1], b[1]) for a, b in zip(cpu_rows, gpu_rows, strict=True)] + extra
        self.table.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(value))
        if self.doctor.running == "gpu":
            return
        if not summary["ran"]:
            self.verdict.setText(
                self.doctor.failures.get("gpu") or (t("run.bundle") if self.doctor.bundle_mode else "")
            )
            return
        if summary["gpu_verified"]:
            head, colour = t("gpu.verdict.gpu_verified"), STATUS_COLOURS["ok"]
        elif (
            summary["verdict"] in {"fell_back_to_cpu", "gpu_unusable", "cpu_only"}
            or not summary["gpu_providers"]
            or summary["gpu_providers"] == ["CPUExecutionProvider"]
        ):
            head, colour = t("gpu.verdict.fallback"), STATUS_COLOURS["error"]
        else:
            head, colour = t("gpu.verdict.other", verdict=summary["verdict"]), STATUS_COLOURS["warning"]
        cause = ""
        first = (self.doctor.document or {}).get("findings") or summary["findings"]
        if first:
            cause = t("gpu.cause", cause=views.finding_words(first[0], lang)["title"])
        tried = []
        for strategy in summary["strategies"]:
            name = str(strategy.get("name"))
            label = t(f"strategy.{name}") if f"strategy.{name}" in _LABEL_KEYS else name
            state = (
                t("strategy.skipped", why=strategy.get("skipped"))
                if strategy.get("skipped")
                else _stage_words(str(strategy.get("stage") or ""))
            )
            tried.append(f"{_esc(label)}: {_esc(state)}")
        self.verdict.setText(
            f"<p style='font-size:large; color:{colour}'><b>{_esc(head)}</b></p>"
            + (f"<p>{_esc(cause)}</p>" if cause else "")
            + (f"<p><b>{_esc(t('gpu.strategies'))}</b>: " + "; ".join(tried) + "</p>" if tried else "")
        )
        self.status.setText(self.doctor.failures.get("gpu") or "")


class DiagnosisPage(StepPage):
    """6. The ranked findings, the fix, how to verify it, check again, export."""

    page_id = Page.DIAGNOSIS
    key = "diag"
    step = None

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.verdict = QLabel(self)
        self.verdict.setWordWrap(True)
        self.body.addWidget(self.verdict)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.list = QListWidget(splitter)
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSpacing(2)
        self.list.currentRowChanged.connect(self._on_row)
        self.detail = QTextBrowser(splitter)
        splitter.addWidget(self.list)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.body.addWidget(splitter, 1)
        buttons = QHBoxLayout()
        self.copy = QPushButton(self)
        self.copy.clicked.connect(self._on_copy)
        self.check = QPushButton(self)
        self.check.clicked.connect(self._on_check)
        self.export = QPushButton(self)
        self.export.clicked.connect(self._on_export)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        buttons.addWidget(self.copy)
        buttons.addWidget(self.check)
        buttons.addWidget(self.note, 1)
        buttons.addWidget(self.export)
        self.body.addLayout(buttons)
        self.findings: list[dict[str, Any]] = []
        self.checking: str | None = None

    def retranslate(self) -> None:
        """Buttons and their tips."""
        super().retranslate()
        self.copy.setText(t("diag.copy"))
        self.copy.setAccessibleName(t("diag.copy"))
        self.check.setText(t("diag.again"))
        self.check.setToolTip(t("diag.again.tip"))
        self.check.setAccessibleName(t("diag.again"))
        self.export.setText(t("diag.export"))
        self.export.setAccessibleName(t("diag.export"))
        available = self.doctor.bundle_export_available()
        self.export.setEnabled(available)
        self.export.setToolTip(t("diag.export.tip") if available else t("diag.export.unavailable"))
        self.list.setAccessibleName(t("stack.findings"))
        self.detail.setAccessibleName(t("diag.cause"))

    def initializePage(self) -> None:  # noqa: N802
        """Nothing new runs; the findings so far are shown."""
        self.note.setText("")
        self.render()

    def render(self) -> None:
        """The verdict and the ranked findings."""
        document = self.doctor.document
        lang = language()
        self.findings = views.all_findings(document) if document else []
        if document is not None:
            self.verdict.setText(_verdict_html(document, lang))
        row = max(self.list.currentRow(), 0)
        self.list.blockSignals(True)
        self.list.clear()
        for number, finding in enumerate(self.findings, start=1):
            words = views.finding_words(finding, lang)
            severity = str(finding.get("severity"))
            item = QListWidgetItem(
                f"{number}. {STATUS_SIGNS.get(severity, '')} [{t('severity.' + severity)}] {words['title']}"
            )
            item.setToolTip(words["title"])
            self.list.addItem(item)
        self.list.blockSignals(False)
        if self.findings:
            self.list.setCurrentRow(min(row, len(self.findings) - 1))
            self._on_row(self.list.currentRow())
        else:
            self.detail.setHtml(f"<p>{_esc(t('diag.none'))}</p>")
        self.copy.setEnabled(bool(self.findings))
        self.check.setEnabled(
            bool(self.findings) and self.doctor.running is None and not self.doctor.bundle_mode
        )

    @Slot(int)
    def _on_row(self, row: int) -> None:
        if not 0 <= row < len(self.findings):
            return
        self.detail.setHtml(_finding_detail_html(self.findings[row], language()))

    def current(self) -> dict[str, Any] | None:
        """The selected finding."""
        row = self.list.currentRow()
        return self.findings[row] if 0 <= row < len(self.findings) else None

    def fix_text(self) -> str:
        """The fix of the selected finding with its commands, as copied."""
        finding = self.current()
        if finding is None:
            return ""
        words = views.finding_words(finding, language())
        commands = (finding.get("remediation") or {}).get("commands") or []
        return "\n".join([words["fix"], *commands]).strip()

    @Slot()
    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.fix_text())
        self.note.setText(t("diag.copied"))

    @Slot()
    def _on_check(self) -> None:
        finding = self.current()
        if finding is None:
            return
        self.checking = str(finding.get("id"))
        self.note.setText("")
        self.doctor.run_step(views.check_again_step(finding))

    def after_check(self) -> None:
        """Say whether the finding checked again is gone."""
        if self.checking is None:
            return
        present = any(f.get("id") == self.checking for f in self.findings)
        self.note.setText(t("diag.again.still") if present else t("diag.again.gone"))
        self.checking = None

    @Slot()
    def _on_export(self) -> None:
        if self.doctor.document is None:
            return
        self.doctor.open_export_dialog()


_LABEL_KEYS: frozenset[str] = frozenset()


def _stage_words(stage: str) -> str:
    """How far a GPU attempt got, in words ("runtime_loaded" -> "ONNX Runtime loaded, …")."""
    key = f"stage.{stage}"
    return t(key) if key in _LABEL_KEYS else stage


def _session_rows(session: dict[str, Any]) -> list[tuple[str, str]]:
    latency = views.latency_rows(session)

    def ms(value: float | None) -> str:
        return t("ms", value=value) if value is not None else "-"

    providers = ", ".join(
        str(p).replace("ExecutionProvider", "") for p in session.get("active_providers") or []
    )
    nodes = ", ".join(
        f"{str(k).replace('ExecutionProvider', '')}: {v}"
        for k, v in (session.get("nodes_per_provider") or {}).items()
    )
    rate = latency["batches_per_s"]
    return [
        (t("table.p50"), ms(latency["p50_ms"])),
        (t("table.p95"), ms(latency["p95_ms"])),
        (t("table.p99"), ms(latency["p99_ms"])),
        (t("table.mean"), ms(latency["mean_ms"])),
        (t("table.rate"), f"{rate:.2f}" if rate is not None else "-"),
        (t("table.providers"), providers or "-"),
        (t("table.nodes"), nodes or "-"),
    ]


def _verdict_line(document: dict[str, Any], lang: str) -> str:
    texts = document.get("verdict_text") or {}
    return str(texts.get(lang) or texts.get("en") or document.get("verdict") or "")


def _verdict_html(document: dict[str, Any], lang: str) -> str:
    verdict = str(document.get("verdict"))
    colour = {
        "gpu_verified": STATUS_COLOURS["ok"],
        "no_problem_found": STATUS_COLOURS["ok"],
        "gpu_at_risk": STATUS_COLOURS["warning"],
        "cpu_by_configuration": STATUS_COLOURS["info"],
    }.get(verdict, STATUS_COLOURS["error"])
    line = f"<p style='font-size:large; color:{colour}'><b>{_esc(_verdict_line(document, lang))}</b></p>"
    gpu = (document.get("inference") or {}).get("gpu") or {}
    if gpu:
        key = "gpu.verdict.gpu_verified" if gpu.get("gpu_verified") else "gpu.verdict.fallback"
        line += f"<p>{_esc(t('gpu.name'))}: {_esc(t(key))}</p>"
    return line


def _findings_html(findings: list[dict[str, Any]], lang: str, evidence: bool = False) -> str:
    if not findings:
        return ""
    parts = [f"<p><b>{_esc(t('stack.findings'))}</b></p>"]
    for finding in findings:
        words = views.finding_words(finding, lang)
        severity = str(finding.get("severity"))
        colour = STATUS_COLOURS.get(severity, STATUS_COLOURS["info"])
        parts.append(
            f"<div style='border-left:4px solid {colour}; padding-left:6px; margin-bottom:8px'>"
            f"<p><b style='color:{colour}'>{STATUS_SIGNS.get(severity, '')} {_esc(t('severity.' + severity))}</b> "  # noqa: E501
            f"<b>{_esc(words['title'])}</b></p><p>{_esc(words['detail'])}</p>"
            + (f"<p><b>{_esc(t('diag.fix'))}:</b> {_esc(words['fix'])}</p>" if words["fix"] else "")
            + (_evidence_html(finding) if evidence else "")
            + "</div>"
        )
    return "".join(parts)


def _evidence_html(finding: dict[str, Any]) -> str:
    items = finding.get("evidence") or []
    if not items:
        return ""
    rows = "".join(
        f"<tr><td>{_esc(e.get('label'))}</td><td style='font-family:{_mono()}'>{_esc(e.get('value'))}"
        + (
            f" <i>({_esc(e.get('source'))}{':' + _esc(e.get('line')) if e.get('line') else ''})</i>"
            if e.get("source")
            else ""
        )
        + "</td></tr>"
        for e in items[:16]
    )
    return f"<p><b>{_esc(t('diag.evidence'))}</b></p><table cellpadding='2'>{rows}</table>"


def _finding_detail_html(finding: dict[str, Any], lang: str) -> str:
    words = views.finding_words(finding, lang)
    remediation = finding.get("remediation") or {}
    severity = str(finding.get("severity"))
    colour = STATUS_COLOURS.get(severity, STATUS_COLOURS["info"])
    parts = [
        f"<h3 style='color:{colour}'>{STATUS_SIGNS.get(severity, '')} {_esc(words['title'])}</h3>",
        f"<p><b>{_esc(t('diag.cause'))}</b><br>{_esc(words['detail'])}</p>",
    ]
    if words["fix"]:
        parts.append(f"<p><b>{_esc(t('diag.fix'))}</b><br>{_esc(words['fix'])}</p>")
    commands = remediation.get("commands") or []
    if commands:
        parts.append(
            f"<p><b>{_esc(t('diag.commands.english' if lang != 'en' else 'diag.commands'))}</b></p>"
            f"<pre style='font-family:{_mono()}'>" + _esc("\n".join(commands)) + "</pre>"
        )
    # The knowledge base has no Korean "how to verify" yet: a translated one (texts[lang]["verify"])
    # is used when the document carries it, else the English line, labelled as English.
    own_verify = str(((finding.get("texts") or {}).get(lang) or {}).get("verify") or "")
    verify = own_verify or str(remediation.get("verify") or "")
    if verify:
        english = lang != "en" and not own_verify
        parts.append(
            f"<p><b>{_esc(t('diag.verify.english' if english else 'diag.verify'))}</b><br>"
            f"<span style='font-family:{_mono()}'>{_esc(verify)}</span></p>"
        )
    parts.append(_evidence_html(finding))
    parts.append(
        f"<p style='color:gray'><small>{_esc(finding.get('layer'))} / {_esc(finding.get('cause'))} / "
        f"{_esc(finding.get('id'))}</small></p>"
    )
    return "".join(parts)


# --- the wizard -----------------------------------------------------------------------------------


class DoctorWizard(QWizard):
    """The window: the pages, the steps running behind them, the document they show."""

    document_changed = Signal()
    step_state_changed = Signal()

    def __init__(
        self,
        target: dict[str, Any] | None = None,
        *,
        settings: QSettings | None = None,
        probe_options: dict[str, Any] | None = None,
        sample_source: Callable[[], Any] | None = None,
        lang: str | None = None,
    ) -> None:
        super().__init__()
        from fallback_doctor.gui.i18n import LABELS, system_language

        global _LABEL_KEYS
        _LABEL_KEYS = frozenset(LABELS)
        set_language(
            lang or (settings.value("language") if settings is not None else None) or system_language()
        )
        self.settings = settings if settings is not None else QSettings("fallback-doctor", "wizard")
        self.probe_options = dict(probe_options or {})
        self.sample_source = sample_source
        self.document: dict[str, Any] | None = None
        self.target: dict[str, Any] = {}
        self.bundle_mode = False
        self.bundle_info: dict[str, Any] | None = None
        self.running: str | None = None
        self.job: StepJob | None = None
        self.jobs: list[Any] = []
        self.failures: dict[str, str] = {}
        self.sampler: Any = None
        self.searching = True
        self._started = 0.0
        self._progress = ""
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.HaveCustomButton1, True)
        self.setOption(QWizard.WizardOption.HaveCustomButton2, True)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setButtonLayout(
            [
                QWizard.WizardButton.CustomButton2,
                QWizard.WizardButton.Stretch,
                QWizard.WizardButton.CustomButton1,
                QWizard.WizardButton.BackButton,
                QWizard.WizardButton.NextButton,
                QWizard.WizardButton.FinishButton,
                QWizard.WizardButton.CancelButton,
            ]
        )
        self.customButtonClicked.connect(self._on_custom_button)
        self.currentIdChanged.connect(self._order_tabs)
        self.pages: dict[Page, StepPage] = {}
        for cls in (StartPage, ConfigPage, LogPage, StackPage, CpuPage, GpuPage, DiagnosisPage):
            page = cls(self)
            self.setPage(int(cls.page_id), page)
            self.pages[cls.page_id] = page
        self.resize(1100, 780)
        self.setMinimumSize(820, 600)
        self._pending: list[StepPage] = []
        self._pending_translate: set[StepPage] = set()
        self._render_timer = QTimer(self)
        self._render_timer.setInterval(0)
        self._render_timer.timeout.connect(self._render_next)
        self.ticker = QTimer(self)
        self.ticker.setInterval(500)
        self.ticker.timeout.connect(self._on_ticker)
        self.retranslate()
        remembered = self._remembered_target()
        self.start_page.load({**remembered, **{k: v for k, v in (target or {}).items() if v}})
        self.button(QWizard.WizardButton.CustomButton1).setEnabled(False)
        self._find_installations()
        QTimer.singleShot(300, self._preload)

    @Slot(int)
    def _order_tabs(self, _page_id: int = -1) -> None:
        """Tab in the visual order: the page top to bottom, then the button row left to right.

        QWizard chains its buttons in its own order (the language button, leftmost, came last).
        """
        page = self.currentPage()
        language_button = self.button(QWizard.WizardButton.CustomButton2)
        first = self.button(QWizard.WizardButton.CustomButton1)
        if page is None:
            return
        focusable = [
            widget
            for widget in page.findChildren(QWidget)
            if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisibleTo(page)
        ]
        last: QWidget | None = None
        widget = page.nextInFocusChain()
        for _ in range(500):
            if widget in focusable:
                last = widget
            if widget is not page and not page.isAncestorOf(widget) and last is not None:
                break  # past the page's own widgets
            widget = widget.nextInFocusChain()
        if last is None:
            return
        QWidget.setTabOrder(last, language_button)
        QWidget.setTabOrder(language_button, first)
        QWidget.setTabOrder(first, self.button(QWizard.WizardButton.BackButton))

    def _preload(self) -> None:
        """Import the graph's and the sampler's modules on a pool thread while the technician reads page 0,
        so that the GPU page does not stall the window when it builds its graph."""

        def load() -> None:
            import fallback_doctor.core.sampling.sampler
            import fallback_doctor.core.sampling.sources  # noqa: F401
            import pyqtgraph  # noqa: F401

            try:
                import pynvml  # noqa: F401
            except ImportError:
                pass

        job = CallJob(load)
        job.signals.finished.connect(self._on_preloaded)
        self._start(job)

    @Slot(object)
    def _on_preloaded(self, _value: object) -> None:
        page = self.pages[Page.GPU]
        assert isinstance(page, GpuPage)
        QTimer.singleShot(0, page.plot.build)

    # -- pages and words ------------------------------------------------------------------------

    @property
    def start_page(self) -> StartPage:
        """Page 0."""
        page = self.pages[Page.START]
        assert isinstance(page, StartPage)
        return page

    def retranslate(self) -> None:
        """Every word of the window in the current language (the findings' own words included)."""
        self.setWindowTitle(t("app.title"))
        self.setButtonText(QWizard.WizardButton.NextButton, t("button.next"))
        self.setButtonText(QWizard.WizardButton.BackButton, t("button.back"))
        self.setButtonText(QWizard.WizardButton.FinishButton, t("button.finish"))
        self.setButtonText(QWizard.WizardButton.CancelButton, t("button.close"))
        self.setButtonText(QWizard.WizardButton.CustomButton1, t("button.stop"))
        self.setButtonText(QWizard.WizardButton.CustomButton2, t("lang.switch"))
        self.button(QWizard.WizardButton.CustomButton1).setToolTip(t("button.stop.tip"))
        self.button(QWizard.WizardButton.CustomButton2).setToolTip(t("lang.switch.tip"))
        for button_id in (
            QWizard.WizardButton.NextButton,
            QWizard.WizardButton.BackButton,
            QWizard.WizardButton.FinishButton,
            QWizard.WizardButton.CancelButton,
            QWizard.WizardButton.CustomButton1,
            QWizard.WizardButton.CustomButton2,
        ):
            button = self.button(button_id)
            button.setAccessibleName(button.text().replace("&", ""))
        self._queue_pages(retranslate=True)

    def _queue_pages(self, retranslate: bool = False) -> None:
        """Render the page on screen now and the others one per turn of the event loop (no stall)."""
        current = self.currentPage()
        ordered = (
            [current, *(p for p in self.pages.values() if p is not current)]
            if current
            else list(self.pages.values())
        )
        for page in ordered:
            if retranslate:
                self._pending_translate.add(page)
            if page not in self._pending:
                self._pending.append(page)
        self._render_next()
        if self._pending:
            self._render_timer.start()

    @Slot()
    def _render_next(self) -> None:
        if not self._pending:
            self._render_timer.stop()
            return
        page = self._pending.pop(0)
        if page in self._pending_translate:
            self._pending_translate.discard(page)
            page.retranslate()
        page.render()
        if not self._pending:
            self._render_timer.stop()

    def flush_rendering(self) -> None:
        """Render every queued page now (tests and screenshots)."""
        while self._pending:
            self._render_next()

    def switch_language(self, lang: str | None = None) -> None:
        """Show the window in ``lang`` (default: the other language) and remember it."""
        set_language(lang or ("en" if language() == "ko" else "ko"))
        self.settings.setValue("language", language())
        self.retranslate()

    @Slot(int)
    def _on_custom_button(self, which: int) -> None:
        if which == QWizard.WizardButton.CustomButton1.value:
            self.cancel_step()
        elif which == QWizard.WizardButton.CustomButton2.value:
            self.switch_language()

    # -- the target -----------------------------------------------------------------------------

    def _remembered_target(self) -> dict[str, Any]:
        value = self.settings.value("target")
        if isinstance(value, str):
            import json

            try:
                loaded = json.loads(value)
            except ValueError:
                return {}
            return loaded if isinstance(loaded, dict) else {}
        return {}

    def set_target(self, target: dict[str, Any]) -> None:
        """The target chosen on the start page: remembered; a new one discards the old results."""
        import json

        remembered = {k: v for k, v in target.items() if k != "log_text" and v}
        self.settings.setValue("target", json.dumps(remembered))
        self.settings.sync()
        if target == self.target and self.document is not None:
            return
        self.cancel_step()
        self.target = dict(target)
        self.document = None
        self.failures.clear()
        self.bundle_mode = target.get("kind") == "bundle"
        self.bundle_info = None
        for page in self.pages.values():
            page.show_banner()
        self._render_all()

    def _find_installations(self) -> None:
        def find() -> list[str]:
            from fallback_doctor.core.targets import bareun

            roots: list[str] = []
            found = bareun.find_root(dict(os.environ))
            if found is not None:
                roots.append(found[0])
            for root in bareun.default_roots():
                if root not in roots and os.path.isdir(root) and bareun.looks_like_bareun(root):
                    roots.append(root)
            return roots

        job = CallJob(find)
        job.signals.finished.connect(self._on_installations)
        job.signals.failed.connect(self._on_installations_failed)
        self._start(job)

    @Slot(object)
    def _on_installations(self, roots: object) -> None:
        self.searching = False
        self.start_page.show_installations(list(roots) if isinstance(roots, list) else [])

    @Slot(str)
    def _on_installations_failed(self, _message: str) -> None:
        self.searching = False
        self.start_page.show_installations([])

    # -- steps ----------------------------------------------------------------------------------

    def ensure(self, step: str | None) -> None:
        """Run ``step`` when its result is not there yet (and nothing runs)."""
        if step is None or self.running is not None or (self.bundle_mode and self.document is not None):
            return
        if self.bundle_mode:
            self.run_step("diagnose")
            return
        if self.document is None:
            self.run_step("diagnose")
            return
        inference = self.document.get("inference") or {}
        if step in {"cpu", "gpu"} and step not in inference and step not in self.failures:
            self.run_step(step)

    def run_step(self, step: str) -> None:
        """Start a step now (the one running is stopped first)."""
        if self.running is not None:
            self.cancel_step()
        self.failures.pop(step, None)
        if self.bundle_mode:
            self._open_bundle()
            return
        request: dict[str, Any] = {"step": step, "target": self.target}
        if step == "diagnose":
            request["quick"] = True
        else:
            request["options"] = self.probe_options
        job = StepJob(request)
        job.signals.started.connect(self._on_step_started)
        job.signals.progress.connect(self._on_step_progress)
        job.signals.finished.connect(self._on_step_finished)
        job.signals.failed.connect(self._on_step_failed)
        job.signals.cancelled.connect(self._on_step_cancelled)
        self.job = job
        self._set_running(step)
        if step == "gpu":
            self._start_sampler()
        self._start(job)

    def _start(self, job: Any) -> None:
        self.jobs = [j for j in self.jobs if not getattr(j, "done", None) or not j.done.is_set()]
        self.jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _set_running(self, step: str | None) -> None:
        self.running = step
        self._started = time.monotonic()
        self._progress = {
            "diagnose": t("run.diagnosing"),
            "cpu": t("cpu.running"),
            "gpu": t("gpu.running"),
        }.get(step or "", "")
        self.button(QWizard.WizardButton.CustomButton1).setEnabled(step is not None)
        if step is None:
            self.ticker.stop()
        else:
            self.ticker.start()
        for page in self.pages.values():
            page.show_running(step, self._progress)
            page.completeChanged.emit()
        self.step_state_changed.emit()

    @Slot()
    def _on_ticker(self) -> None:
        if self.running is None:
            return
        text = t("run.elapsed", what=self._progress, seconds=time.monotonic() - self._started)
        for page in self.pages.values():
            page.show_running(self.running, text)

    def cancel_step(self) -> None:
        """Stop the running step at once (its processes are killed)."""
        job = self.job
        if job is None or self.running is None:
            return
        job.cancel()
        step = self.running
        self.job = None
        self._stop_sampler(keep=False)
        self._set_running(None)
        if step:
            self.failures[step] = t("run.cancelled")
        self._render_all()

    @Slot(int)
    def _on_step_started(self, pid: int) -> None:
        if self.sender() is not (self.job.signals if self.job else None):
            return
        if self.sampler is not None:
            self.sampler.set_pid(pid)

    @Slot(object)
    def _on_step_progress(self, event: dict) -> None:
        if self.job is None or self.sender() is not self.job.signals:
            return
        if event.get("event") == "progress":
            self._progress = t("run.collecting", what=event.get("what"))
        elif event.get("event") == "phase" and event.get("edge") == "start":
            self._progress = (
                f"{t(self.running + '.running') if self.running in {'cpu', 'gpu'} else ''} "
                f"[{event.get('name')}]"
            )
            if self.sampler is not None:
                self.sampler.mark_phase(str(event.get("name")), at=float(event.get("at") or time.time()))

    @Slot(object)
    def _on_step_finished(self, data: dict) -> None:
        if self.job is None or self.sender() is not self.job.signals:
            return
        step = self.running
        self.job = None
        if step == "diagnose":
            inference = (self.document or {}).get("inference")
            self.document = dict(data)
            if inference:
                self.document["inference"] = inference
        elif step in {"cpu", "gpu"}:
            if self.document is None:
                self.document = {}
            inference = dict(self.document.get("inference") or {})
            inference[step] = data
            if step == "gpu":
                inference["series"] = self._stop_sampler(keep=True)
            self.document["inference"] = inference
        self._set_running(None)
        self._render_all()
        self.pages[Page.DIAGNOSIS].after_check()  # type: ignore[attr-defined]

    @Slot(str)
    def _on_step_failed(self, message: str) -> None:
        if self.job is None or self.sender() is not self.job.signals:
            return
        step = self.running
        self.job = None
        self._stop_sampler(keep=False)
        if step:
            self.failures[step] = t("run.failed", message=message)
        self._set_running(None)
        self._render_all()
        if step == "diagnose":
            for page in (Page.CONFIG, Page.LOG, Page.STACK):
                self.pages[page].status.setText(self.failures[step])

    @Slot()
    def _on_step_cancelled(self) -> None:
        """A cancelled step is already accounted for by cancel_step."""

    def _render_all(self) -> None:
        self._queue_pages()
        self.document_changed.emit()

    # -- the sampler ----------------------------------------------------------------------------

    def _start_sampler(self) -> None:
        from fallback_doctor.core.sampling.sampler import Sampler
        from fallback_doctor.core.sampling.sources import NvmlSource, PsutilCpuSource

        source = self.sample_source() if self.sample_source is not None else NvmlSource()
        self.sampler = Sampler(
            source, PsutilCpuSource(include_children=True), interval_s=0.2, stop_when_finished=False
        )
        self.sampler.start()
        page = self.pages[Page.GPU]
        assert isinstance(page, GpuPage)
        page.plot.start(self.sampler)

    def _stop_sampler(self, keep: bool) -> dict[str, Any] | None:
        sampler, self.sampler = self.sampler, None
        page = self.pages[Page.GPU]
        assert isinstance(page, GpuPage)
        page.plot.stop()
        if sampler is None:
            return None
        series = sampler.stop(timeout=1.0)
        return series.to_dict() if keep else None

    # -- bundles --------------------------------------------------------------------------------

    def _open_bundle(self) -> None:
        path = str(self.target.get("bundle"))

        def open_it() -> dict[str, Any]:
            from fallback_doctor.core.bundle.safe_open import open_bundle

            opened = open_bundle(path)
            document = dict(opened.document)
            series = series_from_samples_csv(opened.samples_csv, document)
            if series is not None:
                document["inference"] = {**(document.get("inference") or {}), "series": series}
            manifest = opened.manifest
            return {
                "document": document,
                "info": {
                    "name": opened.path.name,
                    "created": str(manifest.get("created") or "?"),
                    "version": str(manifest.get("tool_version") or "?"),
                    "redacted": opened.redacted,
                    "problems": list(opened.integrity_problems),
                },
            }

        job = CallJob(open_it)
        job.signals.finished.connect(self._on_bundle_opened)
        job.signals.failed.connect(self._on_step_failed_call)
        self.job = None
        self._set_running("diagnose")
        self._call = job
        self._start(job)

    @Slot(object)
    def _on_bundle_opened(self, opened: object) -> None:
        value = opened if isinstance(opened, dict) else {}
        self.document = dict(value.get("document") or {}) or None
        self.bundle_info = dict(value.get("info") or {}) or None
        self._set_running(None)
        for page in self.pages.values():
            page.show_banner()
        self._render_all()

    def bundle_banner(self) -> str:
        """The banner of a bundle from another machine ("" when not showing one)."""
        info = self.bundle_info if self.bundle_mode else None
        if not info:
            return ""
        text = t(
            "bundle.banner",
            name=info.get("name"),
            created=info.get("created"),
            version=info.get("version"),
            redacted=t("bundle.redacted" if info.get("redacted") else "bundle.not_redacted"),
        )
        if info.get("problems"):
            text += "\n" + t("bundle.integrity", problems="; ".join(info["problems"][:3]))
        return text

    @Slot(str)
    def _on_step_failed_call(self, message: str) -> None:
        self.failures["diagnose"] = t("run.failed", message=message)
        self._set_running(None)
        self._render_all()
        for page in (Page.CONFIG, Page.LOG, Page.STACK):
            self.pages[page].status.setText(self.failures["diagnose"])

    def bundle_export_available(self) -> bool:
        """Whether this build can write bundles (core/bundle)."""
        try:
            import importlib.util

            return importlib.util.find_spec("fallback_doctor.core.bundle.export") is not None
        except (ImportError, ValueError):
            return False

    def open_export_dialog(self) -> Any:
        """The bundle preview (nothing is written until the technician saves)."""
        from fallback_doctor.gui.bundle_dialog import BundleDialog

        dialog = BundleDialog(dict(self.document or {}), parent=self)
        dialog.accepted.connect(lambda: self._on_exported(dialog.written))
        dialog.open()
        self.export_dialog = dialog
        return dialog

    def export_bundle(self, path: str) -> None:
        """Write the document as a bundle (redacted, no preview) on a pool thread; never replaces a file."""
        document = dict(self.document or {})
        lang = language()

        def write() -> str:
            from fallback_doctor.core.bundle.export import BundleOptions, export_bundle, extras_from_document

            result = export_bundle(
                document, path, extras_from_document(document), BundleOptions(lang=lang), force=False
            )
            return str(getattr(result, "path", path))

        job = CallJob(write)
        job.signals.finished.connect(self._on_exported)
        job.signals.failed.connect(self._on_export_failed)
        self._start(job)

    @Slot(object)
    def _on_exported(self, path: object) -> None:
        page = self.pages[Page.DIAGNOSIS]
        assert isinstance(page, DiagnosisPage)
        page.note.setText(t("diag.export.done", path=path))

    @Slot(str)
    def _on_export_failed(self, message: str) -> None:
        page = self.pages[Page.DIAGNOSIS]
        assert isinstance(page, DiagnosisPage)
        page.note.setText(t("run.failed", message=message))

    # -- closing --------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop everything: the step's processes, the sampler, the pool's threads."""
        if self.job is not None:
            self.job.cancel()
        self._stop_sampler(keep=False)
        self.ticker.stop()
        QThreadPool.globalInstance().waitForDone(3000)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        """Closing the window stops whatever runs."""
        self.shutdown()
        super().closeEvent(event)

    def done(self, result: int) -> None:
        """Finish or Close: stop whatever runs first."""
        self.shutdown()
        super().done(result)
