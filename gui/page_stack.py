"""Page 3, the stack drawn bottom-up: each layer's state, versions and evidence."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.page_base import (
    STATUS_COLOURS,
    STATUS_SIGNS,
    DoctorWizard,
    Page,
    StepPage,
    browser,
    esc,
    mono,
    plain_label,
)
from fallback_doctor.gui.page_html import (
    findings_html,
    verdict_line,
)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)


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
        layers.setSpacing(0)
        self.buttons: dict[str, QPushButton] = {}
        self.arrows: list[QLabel] = []
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        for index, name in enumerate(reversed(facade.STACK_LAYERS)):
            if index:  # the FAQ's diagram: each layer runs on the one below it
                arrow = QLabel("\u25b2", column)
                arrow.setAlignment(Qt.AlignmentFlag.AlignHCenter)
                arrow.setStyleSheet("color: palette(mid); margin: 0; padding: 0;")
                self.arrows.append(arrow)
                layers.addWidget(arrow)
            button = QPushButton(column)
            button.setCheckable(True)
            button.setMinimumHeight(58)
            button.clicked.connect(lambda _checked=False, n=name: self.select(n))
            self.group.addButton(button)
            layers.addWidget(button)
            self.buttons[name] = button
        layers.addStretch(1)
        self.detail = browser(splitter)
        splitter.addWidget(column)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.note = plain_label(self)
        """Where the evidence comes from elsewhere (a log): this machine's layers were not inspected."""
        self.note.setVisible(False)
        self.body.addWidget(self.note)
        self.body.addWidget(splitter, 1)
        self.selected: str | None = None
        self.layers: list[dict[str, Any]] = []

    def draw(self) -> None:
        """Each layer's status, version found and needed; the selected layer's evidence."""
        for _ in self.render_steps():
            pass

    def render_steps(self) -> Iterator[None]:
        """The layers' buttons; the selected layer's evidence (a piece each)."""
        document = self.doctor.report
        self.detail.setAccessibleName(t("stack.findings"))
        self.layers = facade.stack_layers(document) if document is not None else []
        note = facade.elsewhere_note(document, language()) if document is not None else ""
        self.note.setText(note)
        self.note.setVisible(bool(note))
        by_name = {layer["layer"]: layer for layer in self.layers}
        for name, button in self.buttons.items():
            layer = by_name.get(name)
            status = layer["status"] if layer else "unknown"
            words = f"{STATUS_SIGNS[status]}  {t('layer.' + name)}   —   {t('status.' + status)}"
            if layer:
                said = facade.layer_parts(layer, language())
                words += "\n" + "   ·   ".join(part for part in (said["found"], said["needs"]) if part)
                if said["missing"]:
                    words += "\n" + said["missing"]
            button.setText(words)
            button.setAccessibleName(f"{t('layer.' + name)}: {t('status.' + status)}")
            button.setAccessibleDescription(words.split("\n", 1)[-1] if layer else "")
            colour = STATUS_COLOURS[status]
            button.setStyleSheet(
                f"QPushButton {{ text-align: left; padding: 6px 10px; border: 1px solid palette(mid);"
                f" border-left: 10px solid {colour}; border-radius: 3px; }}"
                f" QPushButton:checked {{ background: palette(highlight); color: palette(highlighted-text); }}"  # noqa: E501
            )
        yield
        if self.selected is None and self.layers:
            broken = next((layer["layer"] for layer in self.layers if layer["status"] == "error"), None)
            self.selected = broken or self.layers[0]["layer"]
        if self.selected is not None:
            self.select(self.selected)
        else:
            self.detail.setHtml(f"<p>{esc(t('stack.select'))}</p>")
        if document is not None and self.doctor.running != "diagnose":
            self.status.setText(verdict_line(document, language()))
        yield

    def select(self, name: str) -> None:
        """Show one layer's libraries, facts and findings."""
        self.selected = name
        self.buttons[name].setChecked(True)
        layer = next((item for item in self.layers if item["layer"] == name), None)
        if layer is None:
            self.detail.setHtml("")
            return
        lang = language()
        parts = [f"<h3>{esc(t('layer.' + name))} — {esc(t('status.' + layer['status']))}</h3>"]
        if layer["libraries"]:
            rows = "".join(
                f"<tr><td style='font-family:{mono()}'>{esc(name)}</td><td style='font-family:{mono()};"
                f" color:{STATUS_COLOURS['ok' if found else 'error']}'>{esc(where)}</td></tr>"
                for name, where, found in facade.library_rows(layer, lang)
            )
            parts.append(f"<p><b>{esc(t('stack.libraries'))}</b></p><table cellpadding='2'>{rows}</table>")
        if layer["facts"]:
            rows = "".join(
                f"<tr><td>{esc(k)}</td><td style='font-family:{mono()}'>{esc(v)}</td></tr>"
                for k, v in facade.fact_rows(layer, lang)
            )
            parts.append(f"<p><b>{esc(t('stack.facts'))}</b></p><table cellpadding='2'>{rows}</table>")
        if layer["findings"]:
            parts.append(findings_html(layer["findings"], lang, evidence=True))
        else:
            parts.append(f"<p>{esc(t('stack.clean'))}</p>")
        self.detail.setHtml("".join(parts))
