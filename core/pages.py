"""What each wizard page shows, computed from the report document alone (Qt-free, pure).

Every function takes the serialisable document (what ``diagnose --json`` prints; the wizard's
document after its steps has the same shape, docs/report-schema.md) and returns plain data, so a
bundle opened on another machine shows exactly the same pages. The order of the findings is the
document's (core/judge.py ranked them); nothing here re-orders or re-judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.document_parts import all_findings, as_dict, as_list, environment
from fallback_doctor.core.measures import (
    cpu_view,
    gpu_headline,
    gpu_summary,
    latency_rows,
    ms_text,
    no_inference_words,
    session_rows,
    strategy_lines,
)
from fallback_doctor.core.pages_log_stack import elsewhere_note
from fallback_doctor.core.pages_python import python_settings, settings_findings
from fallback_doctor.core.pages_stack import (
    STACK_LAYERS,
    fact_rows,
    layer_line,
    layer_parts,
    stack_layers,
)
from fallback_doctor.core.report import finding_text
from fallback_doctor.core.texts import has_label, label, load_texts, render_text

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
    "log_view",
    "ms_text",
    "no_inference_words",
    "session_rows",
    "stack_layers",
    "strategy_lines",
    "verdict_words",
]


def config_view(document: dict[str, Any]) -> dict[str, Any]:
    """The configuration page: the file, the provider setting, the issues with their lines, the findings."""
    target = environment(document, "target")
    setting = as_dict(target.get("provider_setting"))
    issues = [as_dict(i) for i in as_list(target.get("config_issues"))]
    findings = [
        f
        for f in all_findings(document)
        if f.get("layer") == "config" or str(f.get("id", "")).startswith(("config.", "target."))
    ]
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
    for finding in findings:
        for evidence in as_list(finding.get("evidence")):
            evidence = as_dict(evidence)
            if evidence.get("line") and (not config_path or evidence.get("source") == config_path):
                mark(evidence.get("line"), finding.get("severity"))
    text = target.get("config_text")
    settings = python_settings(document, all_findings(document))
    findings += [f for f in settings_findings(settings, all_findings(document)) if f not in findings]
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


def log_view(document: dict[str, Any]) -> dict[str, Any]:
    """The log page: the quoted lines (cause, fallback, context, start-up), in file order, and the causes."""
    log = environment(document, "log")
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
    findings = [f for f in all_findings(document) if str(f.get("id", "")).startswith("log.")]
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
    (core/findings/config.py) with the issue's parameters, else the English message the reader wrote."""
    from fallback_doctor.core.findings.config import config_issue_finding

    finding_id = config_issue_finding(str(issue.get("code") or ""))
    if finding_id and finding_id in load_texts():
        params = {str(k): v for k, v in as_dict(issue.get("params")).items()}
        words = render_text(finding_id, lang, params)
        return words.get("detail") or words.get("title") or str(issue.get("message") or "")
    return str(issue.get("message") or "")


def check_again_step(finding: dict[str, Any]) -> str:
    """What "check again" re-runs for a finding: "gpu" (the GPU retry) or "diagnose" (the static checks)."""
    return (
        "gpu"
        if str(finding.get("id", "")).startswith("inference.") or finding.get("layer") == "probe"
        else "diagnose"
    )


def finding_words(finding: Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail, fix and verify line in ``lang`` (English where the language is missing)."""
    return finding_text(dict(finding), lang)


def fix_script(document: Mapping[str, Any], finding: Mapping[str, Any], lang: str) -> str:
    """What "Copy the fix" copies: the finding's fix as the document's script (core/script.py)."""
    from fallback_doctor.core.script import finding_script
    from fallback_doctor.core.steps import application_python

    return finding_script(finding, lang, application_python(document))


def first_cause(document: Mapping[str, Any]) -> dict[str, Any] | None:
    """The one answer shown first ("Why" on the GPU page, the diagnosis page's first row): core's
    (core/judge.py), the same as the text report, report.html, the fleet summary and ``check``."""
    from fallback_doctor.core.judge import document_first_cause

    return document_first_cause(document)


def verdict_words(document: Mapping[str, Any], lang: str) -> str:
    """The verdict in words, from the catalog by the verdict's code (never the document's own text)."""
    verdict = str(document.get("verdict") or "")
    return label(f"verdict.{verdict}", lang) if has_label(f"verdict.{verdict}") else verdict
