"""Page 1, the configuration: the file as written, its marks, the provider and the findings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import has, language, t
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
    tint,
    with_caption,
)
from fallback_doctor.gui.page_html import (
    findings_html,
    verdict_line,
)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QSplitter,
    QTextBrowser,
)

if TYPE_CHECKING:
    from fallback_doctor.core.facade import ConfigView


class ConfigPage(StepPage):
    """1. Check the configuration."""

    page_id = Page.CONFIG
    key = "config"
    step = "diagnose"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.file = browser(self)
        self.file.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        self.legend = plain_label(self)
        self.view = browser(self)
        left = with_caption(self, self.file, self.legend)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.body.addWidget(self.splitter, 1)
        self.line_marks: dict[int, str] = {}
        """What the file view marks: line -> "key" (a key that matters), "cpu" (executionProvider asks
        for the CPU) or a finding's severity ("error", "warning", "info")."""

    def _render_file(self, view: ConfigView) -> None:
        """The whole file, monospace, numbered; the keys that matter and the findings' lines marked."""
        self.line_marks = {}
        text = view["text"]
        self.file.setVisible(bool(view["path"] or view["settings"]))
        self.legend.setVisible((bool(view["path"]) and text is not None) or bool(view["settings"]))
        wrap = QTextBrowser.LineWrapMode.WidgetWidth if not view["path"] else QTextBrowser.LineWrapMode.NoWrap
        self.file.setLineWrapMode(wrap)  # a file as written (no wrap); the settings' values wrap
        if not view["path"]:
            self.legend.setText(t("config.python.legend"))
            self.file.setHtml(self._settings_html(view["settings"]))
            return
        if text is None:
            self.file.setHtml(f"<p>{esc(t('config.text.missing'))}</p>")
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
        family = mono()
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
            style = f"margin:0; white-space:pre; font-family:{family}"
            if colour:
                style += f"; background-color:{tint(colour, 0.22 if kind != 'key' else 0.14)}"
            gutter = f"<span style='color:#9e9e9e'>{number:>{width}} </span>"
            mark = f"<span style='color:{colour or '#9e9e9e'}'>{sign}</span> "
            weight = "font-weight:bold; " if kind in ("key", "cpu") else ""
            shown = esc(line.rstrip("\r"))
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

    def _settings_html(self, settings: list[dict[str, Any]]) -> str:
        """A Python target's deciding settings as a table, a mark beside each one a finding is about."""
        if not settings:
            return ""
        rows: list[str] = []
        for row in settings:
            key = row["key"]
            name = t(f"config.python.{key}") if has(f"config.python.{key}") else key
            if key == "code":
                value = t("config.python.code.value")
            elif row["value"] is None:
                value = t("config.python.not_set" if key.isupper() else "config.python.unknown")
            else:
                value = str(row["value"])
            severity = row["severity"] or ""
            colour = STATUS_COLOURS.get(severity, "")
            sign = STATUS_SIGNS.get(severity, "") if severity else ""
            shade = f" style='background-color:{tint(colour, 0.22)}'" if colour else ""
            faded = " color:#757575;" if row["value"] is None and key != "code" else ""
            rows.append(
                f"<tr{shade}><td style='color:{colour or '#9e9e9e'}'>{sign}</td><td><b>{esc(name)}</b></td>"
                f"<td style='font-family:{mono()};{faded}'>{esc(value)}</td></tr>"
            )
        title = f"<p><b>{esc(t('config.python.title'))}</b></p>"
        return title + "<table cellpadding='4' cellspacing='0'>" + "".join(rows) + "</table>"

    def draw(self) -> None:
        """The configuration file, its provider setting and issues, and the findings with fixes."""
        for _ in self.render_steps():
            pass

    def render_steps(self) -> Iterator[None]:
        """The file with its marks; the provider, issues and findings (a piece each)."""
        document = self.doctor.report
        self.view.setAccessibleName(t("config.name"))
        self.file.setAccessibleName(t("config.text.name"))
        self.legend.setText(t("config.legend"))
        if document is None:
            self.view.setHtml("")
            self.file.setHtml("")
            self.line_marks = {}
            yield
            return
        view = facade.config_view(document)
        self._render_file(view)
        yield
        lang = language()
        parts: list[str] = []
        if not view["path"]:
            parts.append(f"<p>{esc(t('config.python.none' if view['settings'] else 'config.none'))}</p>")
        else:
            parts.append(f"<p><b>{esc(t('config.file', path=view['path']))}</b></p>")
            if view["provider_raw"] is not None:
                colour = STATUS_COLOURS["error"] if view["wants_cpu"] else STATUS_COLOURS["info"]
                shade = tint(colour)
                parts.append(
                    f"<p style='font-family:{mono()}; background:{shade}; border-left:4px solid {colour};"
                    f" padding:4px'>{esc(t('config.provider', value=view['provider_raw'], line=view['provider_line']))}"  # noqa: E501
                    "</p>"
                )
            else:
                parts.append(f"<p>{esc(t('config.provider.none'))}</p>")
            if view["wants_cpu"]:
                parts.append(
                    f"<p style='color:{STATUS_COLOURS['error']}'><b>{esc(t('config.wants_cpu'))}</b></p>"
                )
            if view["lib_path"]:
                parts.append(
                    f"<p style='font-family:{mono()}'>{esc(t('config.libpath', path=view['lib_path']))}</p>"
                )
            for issue in view["issues"]:
                colour = STATUS_COLOURS.get(str(issue.get("severity")), STATUS_COLOURS["warning"])
                parts.append(
                    f"<p style='border-left:4px solid {colour}; padding-left:6px'>"
                    f"<span style='font-family:{mono()}'>{esc(issue.get('line'))}: "
                    f"{esc(issue.get('line_text') or '')}</span><br>"
                    f"{esc(facade.issue_words(issue, lang))}</p>"
                )
        parts.append(findings_html(view["findings"], lang))
        if view["path"] and not view["findings"] and not view["wants_cpu"]:
            parts.append(f"<p style='color:{STATUS_COLOURS['ok']}'>{esc(t('config.ok'))}</p>")
        self.view.setHtml("".join(parts))
        if self.doctor.running != "diagnose":
            self.status.setText(verdict_line(document, lang))
        yield
