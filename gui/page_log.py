"""Page 2, the log: the decisive lines by role, the causes they point to."""

from __future__ import annotations

from typing import Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import has, language, t
from fallback_doctor.gui.log_viewer import LogViewer, log_text
from fallback_doctor.gui.page_base import (
    ROLE_COLOURS,
    DoctorWizard,
    Page,
    StepPage,
    browser,
    esc,
    label_or,
    mono,
    tint,
)
from fallback_doctor.gui.page_html import (
    findings_html,
    verdict_line,
)
from PySide6.QtCore import QUrl, Slot


class LogPage(StepPage):
    """2. Read the log."""

    page_id = Page.LOG
    key = "log"
    step = "diagnose"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.view = browser(self)
        self.view.anchorClicked.connect(self._on_anchor)
        self.body.addWidget(self.view, 1)
        self.quotes: list[dict[str, Any]] = []
        """The quoted lines shown, in order: a line number's link names its index."""
        self.viewer: LogViewer | None = None

    def _line_link(self, index: int, quote: dict[str, Any]) -> str:
        """The quoted line's number, a link that opens the log there ("Open log")."""
        line = quote.get("line")
        if not line or not quote.get("file"):
            return esc(line or "")
        return f"<a href='quote:{index}' title='{esc(t('log.open.tip'))}'>{esc(line)}</a>"

    @Slot(QUrl)
    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == "quote" and url.path().isdigit():
            self.open_quote(int(url.path()))

    def open_quote(self, index: int) -> LogViewer | None:
        """The log of quoted line ``index``, read-only, at that line (a file here, or the pasted text)."""
        if not 0 <= index < len(self.quotes):
            return None
        quote = self.quotes[index]
        source, line = str(quote.get("file") or ""), int(quote.get("line") or 1)
        text, why = log_text(source, self.doctor.target.get("log_text"), elsewhere=self.doctor.bundle_mode)
        self.viewer = LogViewer(source, line, text, why, self)
        self.viewer.show()
        return self.viewer

    def draw(self) -> None:
        """The decisive lines, highlighted by role, and the causes they point to."""
        document = self.doctor.report
        self.view.setAccessibleName(t("log.name"))
        if document is None:
            self.view.setHtml("")
            return
        view = facade.log_view(document)
        lang = language()
        parts: list[str] = []
        if not view["collected"]:
            parts.append(f"<p>{esc(t('log.none'))}</p>")
        else:
            files = ", ".join(facade.source_name(s, lang) for s in view["sources"]) or "-"
            parts.append(f"<p>{esc(t('log.sources', files=files, lines=view['examined']))}</p>")
            if not view["lines"]:
                parts.append(f"<p>{esc(t('log.no_lines'))}</p>")
            else:
                rows = []
                self.quotes = list(view["lines"])
                for index, quote in enumerate(self.quotes):
                    role = str(quote.get("role") or "context")
                    colour = ROLE_COLOURS.get(role, "#757575")
                    label = label_or(f"log.role.{role}", role)
                    rows.append(
                        f"<tr><td style='color:{colour}; white-space:nowrap'><b>{esc(label)}</b></td>"
                        f"<td style='white-space:nowrap'>{self._line_link(index, quote)}</td>"
                        f"<td style='font-family:{mono()}; background:{tint(colour)}'>{esc(quote.get('text'))}</td></tr>"  # noqa: E501
                    )
                parts.append(
                    "<table cellspacing='0' cellpadding='3' width='100%'>" + "".join(rows) + "</table>"
                )
            parts.extend(f"<p>{esc(cause_words(cause))}</p>" for cause in view["causes"][:3])
            for hidden in view["hidden"]:
                parts.append(f"<p><i>{esc(hidden_words(hidden, lang))}</i></p>")
        parts.append(findings_html(view["findings"], lang))
        self.view.setHtml("".join(parts))
        if self.doctor.running != "diagnose":
            self.status.setText(verdict_line(document, lang))


def hidden_words(hidden: dict[str, Any], lang: str) -> str:
    """A hidden signal's note: its label key in the catalogue's words (a document of a previous
    version holds the words per language)."""
    says = hidden.get("says")
    if isinstance(says, dict):
        return str(says.get(lang) or says.get("en") or "")
    return t(str(says)) if says and has(str(says)) else ""


def cause_words(cause: dict[str, Any]) -> str:
    """A likely cause from the log in the catalogue's words, never its code ("cuda_major_mismatch
    (confidence 60%)" was shown); a cause the log does not name says so, with no "0%"."""
    code, confidence = str(cause.get("cause") or "unknown"), float(cause.get("confidence") or 0)
    if code == "unknown" or not confidence or not has(f"cause.{code}"):
        return t("log.cause_none")
    return t("log.cause", cause=t(f"cause.{code}"), confidence=confidence)
