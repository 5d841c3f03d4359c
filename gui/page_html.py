"""The wizard's own rich text for findings and verdicts; every value from the document is escaped.

The words come from core (the facade): the verdict by its code from the catalog, never the
document's own ``verdict_text``, so a crafted bundle cannot put a banner of its own on a page.
"""

from __future__ import annotations

from typing import Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from fallback_doctor.gui.page_base import STATUS_COLOURS, STATUS_SIGNS, esc, mono

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


def verdict_line(document: dict[str, Any], lang: str) -> str:
    """The verdict in words (plain text), from the catalog by the verdict's code."""
    return str(facade.verdict_words(document, lang))


def verdict_html(document: dict[str, Any], lang: str) -> str:
    """The diagnosis page's verdict banner, coloured by the verdict's code."""
    verdict = str(document.get("verdict"))
    colour = VERDICT_COLOURS.get(verdict, STATUS_COLOURS["unknown"])
    line = f"<p style='font-size:large; color:{colour}'><b>{esc(verdict_line(document, lang))}</b></p>"
    summary = facade.gpu_summary(document)
    if summary["ran"]:
        key = "gpu.verdict.gpu_verified" if summary["gpu_verified"] else "gpu.verdict.fallback"
        line += f"<p>{esc(t('gpu.name'))}: {esc(t(key))}</p>"
    return line


def findings_html(findings: list[dict[str, Any]], lang: str, evidence: bool = False) -> str:
    """Findings as blocks: severity, title, detail, fix (and the evidence)."""
    if not findings:
        return ""
    parts = [f"<p><b>{esc(t('stack.findings'))}</b></p>"]
    for finding in findings:
        words = facade.finding_words(finding, lang)
        severity = str(finding.get("severity"))
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


def evidence_html(finding: dict[str, Any]) -> str:
    """A finding's evidence as a table (the first 16 items)."""
    items = finding.get("evidence") or []
    if not items:
        return ""
    lang = language()  # the evidence is said by ids (core/evidence_text.py), shown in the window's language
    rows = "".join(
        f"<tr><td>{esc(shown[0])}</td>"
        f"<td style='font-family:{mono()}'>{esc(shown[1])}"
        + (f" <i>({esc(shown[2])}{':' + esc(e.get('line')) if e.get('line') else ''})</i>" * bool(shown[2]))
        + "</td></tr>"
        for e in items[:16]
        for shown in (facade.evidence_words(e, lang),)
    )
    return f"<p><b>{esc(t('diag.evidence'))}</b></p><table cellpadding='2'>{rows}</table>"


def finding_detail_html(finding: dict[str, Any], lang: str) -> str:
    """One finding in full: cause, fix, commands, how to verify, evidence, its codes."""
    words = facade.finding_words(finding, lang)
    remediation = finding.get("remediation") or {}
    severity = str(finding.get("severity"))
    colour = STATUS_COLOURS.get(severity, STATUS_COLOURS["info"])
    parts = [
        f"<h3 style='color:{colour}'>{STATUS_SIGNS.get(severity, '')} {esc(words['title'])}</h3>",
        f"<p><b>{esc(t('diag.cause'))}</b><br>{esc(words['detail'])}</p>",
    ]
    if words["fix"]:
        parts.append(f"<p><b>{esc(t('diag.fix'))}</b><br>{esc(words['fix'])}</p>")
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
        parts.append(
            f"<p><b>{esc(t('diag.verify'))}</b><br>"
            f"<span style='font-family:{mono()}'>{esc(words['verify'])}</span></p>"
        )
    parts.append(evidence_html(finding))
    parts.append(
        f"<p style='color:gray'><small>{esc(finding.get('layer'))} / {esc(finding.get('cause'))} / "
        f"{esc(finding.get('id'))}</small></p>"
    )
    return "".join(parts)
