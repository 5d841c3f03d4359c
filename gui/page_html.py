"""The wizard's own rich text for findings and verdicts; every value from the document is escaped.

The words come from core (the facade): the verdict by its code from the catalog, never the
document's own ``verdict_text``, so a crafted bundle cannot put a banner of its own on a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.page_base import STATUS_COLOURS, STATUS_SIGNS, esc, mono

if TYPE_CHECKING:
    from fallback_doctor.core.facade import Finding, Report

COMMAND_STYLE = "white-space:pre-wrap; margin:4px 0; "
"""A command or code block: its spaces and lines kept, wrapped at the pane's edge (anywhere in a long
path), never cut; the text and the copy stay whole (report.html wraps them the same way)."""

VERDICT_COLOURS = {
    "gpu_verified": STATUS_COLOURS["ok"],
    "no_problem_found": STATUS_COLOURS["ok"],
    "gpu_at_risk": STATUS_COLOURS["warning"],
    "cpu_by_configuration": STATUS_COLOURS["info"],
    "gpu_unusable": STATUS_COLOURS["error"],
}


def verdict_line(document: Report | Mapping[str, object], lang: str) -> str:
    """The verdict in words (plain text), from the catalog by the verdict's code."""
    return facade.verdict_words(document, lang)


def verdict_html(document: Report | Mapping[str, object], lang: str) -> str:
    """The diagnosis page's verdict banner, coloured by the verdict's code."""
    report = facade.view_of(document)
    colour = VERDICT_COLOURS.get(report.verdict, STATUS_COLOURS["unknown"])
    line = f"<p style='font-size:large; color:{colour}'><b>{esc(verdict_line(report, lang))}</b></p>"
    summary = facade.gpu_summary(report)
    if summary["ran"]:
        key = "gpu.verdict.gpu_verified" if summary["gpu_verified"] else "gpu.verdict.fallback"
        line += f"<p>{esc(t('gpu.name'))}: {esc(t(key))}</p>"
    return line


def _finding(finding: Finding | Mapping[str, object]) -> Finding:
    """A finding of a page's view (read from its JSON where a page hands that over)."""
    return finding if not isinstance(finding, Mapping) else facade.finding_of(finding)


def findings_html(
    findings: Sequence[Finding | Mapping[str, object]], lang: str, evidence: bool = False
) -> str:
    """Findings as blocks: severity, title, detail, fix (and the evidence)."""
    if not findings:
        return ""
    parts = [f"<p><b>{esc(t('stack.findings'))}</b></p>"]
    for finding in map(_finding, findings):
        words = facade.finding_words(finding, lang)
        severity = finding.severity
        colour = STATUS_COLOURS.get(severity, STATUS_COLOURS["info"])
        parts.append(
            f"<div style='border-left:4px solid {colour}; padding-left:6px; margin-bottom:8px'>"
            f"<p><b style='color:{colour}'>{STATUS_SIGNS.get(severity, '')} {esc(t('severity.' + severity))}"
            f"</b> <b>{esc(words['title'])}</b></p><p>{esc(words['detail'])}</p>"
            + (f"<p><b>{esc(t('diag.fix'))}:</b> {esc(words['fix'])}</p>" if words["fix"] else "")
            + (evidence_html(finding) if evidence else "")
            + "</div>"
        )
    return "".join(parts)


def evidence_html(finding: Finding | Mapping[str, object]) -> str:
    """A finding's evidence as a table (the first 16 items)."""
    items = _finding(finding).evidence
    if not items:
        return ""
    lang = (
        language()
    )  # the evidence is said by ids (core/language/evidence_text.py), shown in the window's language
    rows = "".join(_evidence_row(item.line, facade.evidence_words(item, lang)) for item in items[:16])
    return f"<p><b>{esc(t('diag.evidence'))}</b></p><table cellpadding='2'>{rows}</table>"


def _evidence_row(line: int | None, words: tuple[str, str, str | None]) -> str:
    """One evidence item as a table row: label, value, and where it was read (file:line)."""
    name, value, source = words
    where = f" <i>({esc(source)}{':' + esc(line) if line else ''})</i>" if source else ""
    return f"<tr><td>{esc(name)}</td><td style='font-family:{mono()}'>{esc(value)}{where}</td></tr>"


def with_code(text: str) -> str:
    """Prose with its `code spans` set as code (monospace, without the backticks a person would
    otherwise read: "`ls -l …` lists …"); everything escaped."""
    pieces = str(text).split("`")
    if len(pieces) % 2 == 0:  # an unpaired backtick: the text as it is
        return esc(text)
    return "".join(
        f"<span style='font-family:{mono()}'>{esc(piece)}</span>" if odd else esc(piece)
        for odd, piece in ((i % 2 == 1, piece) for i, piece in enumerate(pieces))
    )


def finding_detail_html(finding: Finding | Mapping[str, object], lang: str) -> str:
    """One finding in full: cause, fix, commands, how to verify, evidence, its codes."""
    finding = _finding(finding)
    words = facade.finding_words(finding, lang)
    remediation = finding.remediation.raw
    severity = finding.severity
    colour = STATUS_COLOURS.get(severity, STATUS_COLOURS["info"])
    parts = [
        f"<h3 style='color:{colour}'>{STATUS_SIGNS.get(severity, '')} {esc(words['title'])}</h3>",
        f"<p><b>{esc(t('diag.cause'))}</b><br>{with_code(words['detail'])}</p>",
    ]
    if words["fix"]:
        parts.append(f"<p><b>{esc(t('diag.fix'))}</b><br>{with_code(words['fix'])}</p>")
    steps = facade.remedy_lines(remediation, lang)
    if steps:
        parts.append(f"<p><b>{esc(t('diag.commands'))}</b></p>")  # comments in the window's language
        for style, text in steps:  # commands and code in monospace, code never with "$"
            if style == "text":
                parts.append(f"<p>{esc(text)}</p>")
            else:
                prefix = "$ " if style == "command" else ""
                parts.append(f"<p style='{COMMAND_STYLE}font-family:{mono()}'>{esc(prefix + text)}</p>")
    if words.get("verify"):  # in the window's language, as the text report and report.html say it
        parts.append(f"<p><b>{esc(t('diag.verify'))}</b><br>{with_code(words['verify'])}</p>")
    parts.append(evidence_html(finding))
    parts.append(
        # The codes a technician quotes to support: set as code, as commands are.
        f"<p style='color:gray; font-family:{mono()}'><small>{esc(finding.layer)} / {esc(finding.cause)} / "
        f"{esc(finding.id)}</small></p>"
    )
    return "".join(parts)
