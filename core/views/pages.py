"""What each wizard page shows, computed from the report document alone (Qt-free, pure).

Every function takes the serialisable document (what ``diagnose --json`` prints; the wizard's
document after its steps has the same shape, docs/report-schema.md) and returns plain data, so a
bundle opened on another machine shows exactly the same pages. The order of the findings is the
document's (core/judgement/judge.py ranked them); nothing here re-orders or re-judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from fallback_doctor.core.document.view import Document, as_dict, as_list, finding_of, view_of
from fallback_doctor.core.document.view import Finding as ViewFinding
from fallback_doctor.core.document.view import finding_words as _finding_words
from fallback_doctor.core.language.texts import has_label, label, load_texts, render_text
from fallback_doctor.core.views.measures import (
    cpu_view,
    gpu_headline,
    gpu_summary,
    latency_rows,
    ms_text,
    no_inference_words,
    session_rows,
    strategy_lines,
)
from fallback_doctor.core.views.pages_log_stack import elsewhere_note
from fallback_doctor.core.views.pages_python import python_settings, settings_findings
from fallback_doctor.core.views.pages_stack import (
    STACK_LAYERS,
    fact_rows,
    layer_line,
    layer_parts,
    library_rows,
    stack_layers,
)

__all__ = [
    "STACK_LAYERS",
    "all_findings",
    "check_again_step",
    "config_view",
    "cpu_view",
    "elsewhere_note",
    "fact_rows",
    "finding_words",
    "first_cause",
    "fix_script",
    "gpu_headline",
    "gpu_summary",
    "issue_words",
    "latency_rows",
    "layer_line",
    "layer_parts",
    "library_rows",
    "log_view",
    "ms_text",
    "no_inference_words",
    "session_rows",
    "stack_layers",
    "strategy_lines",
    "verdict_words",
]


class ConfigView(TypedDict):
    """The configuration page (:func:`config_view`): the file, the provider setting, the issues and
    the findings (the document's own objects), the marks per line."""

    text: str | None
    key_lines: dict[str, int]
    marks: dict[int, str]
    path: Any
    kind: Any
    provider: Any
    provider_raw: Any
    provider_line: Any
    wants_cpu: bool
    lib_path: Any
    paths: dict[str, Any]
    issues: list[dict[str, Any]]
    highlight: dict[int, str]
    findings: list[Mapping[str, Any]]
    settings: list[dict[str, Any]]


class LogView(TypedDict):
    """The log page (:func:`log_view`): the quoted lines in file order, the causes, the findings."""

    collected: bool
    sources: list[Any]
    lines: list[dict[str, Any]]
    causes: list[dict[str, Any]]
    hidden: list[dict[str, Any]]
    unreadable: list[Any]
    examined: Any
    findings: list[Mapping[str, Any]]


def all_findings(document: Document) -> list[Mapping[str, Any]]:
    """The document's findings as it holds them (the static ones and the test inference's), in the
    document's ranking; the view's :class:`Finding` is the typed reading of each."""
    return [f.raw for f in view_of(document).findings]


def config_view(document: Document) -> ConfigView:
    """The configuration page: the file, the provider setting, the issues with their lines, the findings."""
    report = view_of(document)
    target = report.part("target")
    setting = as_dict(target.get("provider_setting"))
    issues = [as_dict(i) for i in as_list(target.get("config_issues"))]
    about = [f for f in report.findings if f.layer == "config" or f.id.startswith(("config.", "target."))]
    highlight: dict[int, str] = {}
    if setting.get("line"):
        highlight[int(setting["line"])] = "provider"
    for issue in issues:
        if issue.get("line"):
            highlight.setdefault(int(issue["line"]), str(issue.get("severity") or "warning"))
    key_lines = {
        str(key): int(line)
        for key, line in as_dict(target.get("config_key_lines")).items()
        if isinstance(line, int) and not isinstance(line, bool) and line > 0
    }
    marks: dict[int, str] = {}
    """line -> the worst severity of an issue or a finding pointing at it."""
    order = {"error": 0, "warning": 1, "info": 2}

    def mark(line: Any, severity: Any) -> None:
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            return
        severity = str(severity or "warning")
        if line not in marks or order.get(severity, 3) < order.get(marks[line], 3):
            marks[line] = severity

    for issue in issues:
        mark(issue.get("line"), issue.get("severity"))
    config_path = target.get("config_path")
    for finding in about:
        for evidence in finding.evidence:
            if evidence.line and (not config_path or evidence.source == config_path):
                mark(evidence.line, finding.severity)
    text = target.get("config_text")
    every = [f.raw for f in report.findings]
    findings = [f.raw for f in about]
    settings = python_settings(report, every)
    findings += [f for f in settings_findings(settings, every) if f not in findings]
    return {
        "text": text if isinstance(text, str) else None,
        "key_lines": key_lines,
        "marks": marks,
        "path": target.get("config_path"),
        "kind": target.get("kind"),
        "provider": target.get("requested_provider"),
        "provider_raw": setting.get("raw"),
        "provider_line": setting.get("line"),
        "wants_cpu": target.get("requested_provider") == "cpu",
        "lib_path": target.get("lib_path"),
        "paths": as_dict(target.get("paths")),
        "issues": issues,
        "highlight": highlight,
        "findings": findings,
        "settings": settings,
    }


def log_view(document: Document) -> LogView:
    """The log page: the quoted lines (cause, fallback, context, start-up), in file order, and the causes."""
    report = view_of(document)
    log = report.part("log")
    quotes: dict[tuple[str, int | None, str], dict[str, Any]] = {}

    def add(quote: Any) -> None:
        quote = as_dict(quote)
        if quote.get("text") is None:
            return
        key = (str(quote.get("file") or ""), quote.get("line"), str(quote.get("text")))
        if key not in quotes or quote.get("role") == "cause":
            quotes[key] = quote

    add(log.get("startup"))
    causes = [as_dict(c) for c in as_list(log.get("causes"))]
    for cause in causes:
        for quote in as_list(cause.get("evidence")):
            add(quote)
    for quote in as_list(log.get("fallback")):
        add(quote)
    for hidden in as_list(log.get("hidden_signal")):
        for quote in as_list(as_dict(hidden).get("evidence")):
            add(quote)
    lines = sorted(quotes.values(), key=lambda q: (str(q.get("file") or ""), q.get("line") or 0))
    findings = [f.raw for f in report.findings if f.id.startswith("log.")]
    return {
        "collected": bool(log),
        "sources": as_list(log.get("sources")),
        "lines": lines,
        "causes": causes,
        "hidden": [as_dict(h) for h in as_list(log.get("hidden_signal"))],
        "unreadable": as_list(log.get("unreadable")),
        "examined": log.get("lines_examined", 0),
        "findings": findings,
    }


def issue_words(issue: Mapping[str, Any], lang: str) -> str:
    """A configuration issue's sentence in ``lang``: the catalog's text of the issue's declared finding
    (core/judgement/checks/config.py)
    with the issue's parameters, else the English message the reader wrote."""
    from fallback_doctor.core.judgement.checks.config import config_issue_finding

    finding_id = config_issue_finding(str(issue.get("code") or ""))
    if finding_id and finding_id in load_texts():
        params = {str(k): v for k, v in as_dict(issue.get("params")).items()}
        words = render_text(finding_id, lang, params)
        return words.get("detail") or words.get("title") or str(issue.get("message") or "")
    return str(issue.get("message") or "")


def check_again_step(finding: ViewFinding | Mapping[str, Any]) -> str:
    """What "check again" re-runs for a finding: "gpu" (the GPU retry) or "diagnose" (the static checks)."""
    finding = finding if isinstance(finding, ViewFinding) else finding_of(finding)
    return "gpu" if finding.id.startswith("inference.") or finding.layer == "probe" else "diagnose"


def finding_words(finding: ViewFinding | Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail, fix and verify line in ``lang`` (English where the language is missing)."""
    return _finding_words(finding, lang)


def fix_script(document: Document, finding: ViewFinding | Mapping[str, Any], lang: str) -> str:
    """What "Copy the fix" copies: the finding's fix as the document's script (core/document/script.py)."""
    from fallback_doctor.core.document.script import finding_script
    from fallback_doctor.core.flow.steps import application_python

    return finding_script(finding, lang, application_python(view_of(document).raw))


def first_cause(document: Document) -> dict[str, Any] | None:
    """The one answer shown first ("Why" on the GPU page, the diagnosis page's first row): core's
    (core/judgement/judge.py), the same as the text report, report.html, the fleet summary and ``check``."""
    from fallback_doctor.core.judgement.judge import document_first_cause

    return document_first_cause(view_of(document).raw)


def verdict_words(document: Document, lang: str) -> str:
    """The verdict in words, from the catalog by the verdict's code (never the document's own text)."""
    verdict = view_of(document).verdict
    return label(f"verdict.{verdict}", lang) if has_label(f"verdict.{verdict}") else verdict
