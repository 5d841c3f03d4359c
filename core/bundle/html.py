"""report.html: the report as one self-contained page that opens offline in any browser.

No script, no external resource (a Content-Security-Policy forbids loading any), inline CSS,
and the utilization graph as inline SVG drawn from samples.csv. Everything quoted is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.bundle.html_graph import graph_html
from fallback_doctor.core.document.remedy import remedy_lines
from fallback_doctor.core.document.view import (
    Document,
    Finding,
    Report,
    Session,
    Strategy,
    as_dict,
    evidence_words,
    finding_words,
    session_of,
    strategy_of,
    view_of,
)
from fallback_doctor.core.language.evidence_text import record_words, said_text
from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.core.views.measures import ms_text, one_run, runs_text
from fallback_doctor.core.views.pages import (
    elsewhere_note,
    fact_rows,
    layer_line,
    library_rows,
    stack_layers,
    verdict_words,
)
from fallback_doctor.core.views.text_report import process_lines

_LABEL_KEYS = (
    "title",
    "verdict",
    "stack",
    "findings",
    "none",
    "evidence",
    "fix",
    "verify",
    "environment",
    "comparison",
    "graph",
    "bundle",
    "created",
    "tool",
    "redaction_on",
    "redaction_off",
    "ok",
    "run",
    "p50",
    "providers",
    "verdict_col",
)
"""Words of the page, from the catalog (resources/texts/labels/report.json, "html.<key>")."""


def _labels(lang: str) -> dict[str, str]:
    return {key: label(f"html.{key}", lang) for key in _LABEL_KEYS}


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Malgun Gothic","Noto Sans KR",sans-serif;margin:2em auto;
max-width:60em;padding:0 1em;color:#1d1d1f;line-height:1.45}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.verdict{padding:.8em 1em;border-radius:6px;font-weight:600}
.v-gpu_verified,.v-no_problem_found{background:#e3f5e6}.v-gpu_at_risk{background:#fff4d6}
.v-gpu_unusable{background:#fde2e1}.v-cpu_by_configuration{background:#e6eefc}
.stack{display:flex;flex-wrap:wrap;gap:.3em;padding:0;list-style:none}
.stack li{padding:.3em .7em;border-radius:4px;background:#e3f5e6;font-size:.9em}
.stack li.error{background:#f8c9c6}.stack li.warning{background:#ffe7a8}.stack li.info{background:#e6eefc}
.layer{margin:.4em 0}.layer summary{cursor:pointer}.absent{color:#b3261e}
.finding{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:.8em 0}
.sev{font-size:.8em;font-weight:700;text-transform:uppercase;padding:.1em .5em;border-radius:3px}
.sev.error{background:#f8c9c6}.sev.warning{background:#ffe7a8}.sev.info{background:#e6eefc}
.meta{color:#666;font-size:.85em}pre,code{font-family:ui-monospace,Consolas,monospace;font-size:.85em}
pre{background:#f5f5f7;padding:.5em;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;font-size:.9em}
.warn{background:#fde2e1;padding:.5em 1em;border-radius:6px}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_html(
    document: Document,
    *,
    lang: str = "en",
    samples_csv: str | None = None,
    environment_record: dict[str, Any] | None = None,
    redacted: bool = True,
) -> str:
    """The self-contained page for one report document (already redacted: it is quoted as is)."""
    report = view_of(document)
    labels = _labels(lang)
    verdict = report.verdict
    verdict_text = verdict_words(report, lang)
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{_e(lang)}"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(labels['title'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(labels['title'])}</h1>",
        f'<p class="meta">{_e(labels["bundle"])} · {_e(labels["created"])}: {_e(report.raw.get("created"))}'
        f" · {_e(labels['tool'])}: {_e(report.raw.get('tool_version'))}</p>",
    ]
    parts.extend(f'<p class="meta">{_e(line.strip())}</p>' for line in process_lines(report, lang))
    if not redacted:
        parts.append(f'<p class="warn">{_e(labels["redaction_off"])}</p>')
    else:
        parts.append(f'<p class="meta">{_e(labels["redaction_on"])}</p>')
    parts.append(
        f'<p class="verdict v-{_e(verdict)}">{_e(labels["verdict"])}: {_e(verdict_text)}</p>'  # code: a class
    )
    findings = report.findings
    parts.append(f"<h2>{_e(labels['stack'])}</h2>")
    parts.append(_stack(report, lang))
    comparison = _comparison(report, labels, lang)
    if comparison:
        parts.append(f"<h2>{_e(labels['comparison'])}</h2>{comparison}")
    graph = graph_html(report, samples_csv, lang)
    if graph:
        parts.append(f"<h2>{_e(labels['graph'])}</h2>{_replayed(report, lang)}{graph}")
    parts.append(f"<h2>{_e(labels['findings'])}</h2>")
    if not findings:
        parts.append(f"<p>{_e(labels['none'])}</p>")
    from fallback_doctor.core.flow.steps import application_python

    python = application_python(report.raw)
    for number, finding in enumerate(findings, start=1):
        parts.append(_finding(number, finding, lang, labels, python))
    if environment_record:
        parts.append(f"<h2>{_e(labels['environment'])}</h2>{_table(environment_record)}")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _stack(document: Report, lang: str) -> str:
    """The five layers bottom-up with their states, then each layer's libraries and facts: the
    wizard's stack page, from the same functions (a field the page shows, this page shows too)."""
    items, details = [], []
    for layer in stack_layers(document):
        status = str(layer["status"])
        name = label(f"layer.{layer['layer']}", lang)
        words = label(f"status.{status}", lang)
        css = status if status in ("error", "warning", "info") else "ok"
        said = layer_line(layer, lang)
        items.append(
            f'<li class="{_e(css)}" title="{_e(words)}">{_e(name)}: {_e(words)}'
            + (f' <span class="meta">{_e(said)}</span>' if said else "")
            + "</li>"
        )
        details.append(_layer_rows(layer, f"{name}: {words}", lang))
    note = elsewhere_note(document, lang)  # a log from elsewhere: this machine was not inspected
    said_first = f'<p class="meta">{_e(note)}</p>' if note else ""
    return said_first + '<ul class="stack">' + "".join(items) + "</ul>" + "".join(details)


def _layer_rows(layer: dict[str, Any], title: str, lang: str) -> str:
    """One layer's libraries and facts as the wizard's stack page lists them, folded (the findings
    come next: the first cause stays near the top of the page)."""
    libraries = "".join(
        f'<tr><td><code>{_e(name)}</code></td><td class="{"" if found else "absent"}"><code>{_e(where)}'
        "</code></td></tr>"
        for name, where, found in library_rows(layer, lang)
    )
    facts = "".join(
        f"<tr><td>{_e(words)}</td><td><code>{_e(value)}</code></td></tr>"
        for words, value in fact_rows(layer, lang)
    )
    if not libraries and not facts:
        return ""
    tables = "".join(
        f'<p class="meta">{_e(label(key, lang))}</p><table>{rows}</table>'
        for key, rows in (("stack.libraries", libraries), ("stack.facts", facts))
        if rows
    )
    return f'<details class="layer"><summary>{_e(title)}</summary>{tables}</details>'


def _finding(
    number: int, finding: Finding, lang: str, labels: dict[str, str], python: str | None = None
) -> str:
    text = finding_words(finding, lang)
    severity = finding.severity or "info"
    out = [
        '<div class="finding">',
        f'<p><span class="sev {_e(severity)}">{_e(severity)}</span> <b>{number}. {_e(text["title"])}</b></p>',
        f'<p class="meta">{_e(finding.layer)} / {_e(finding.cause)} / {_e(finding.id)}</p>',
        f"<p>{_e(text['detail'])}</p>",
    ]
    if finding.evidence:
        out.append(f"<p><b>{_e(labels['evidence'])}</b></p><ul>")
        for item in finding.evidence:
            words = evidence_words(item, lang)
            where = ""
            if words.source:
                where = f' <span class="meta">({_e(words.source)}'
                where += f":{_e(item.line)})</span>" if item.line else ")</span>"
            out.append(f"<li>{_e(words.label)}: <code>{_e(words.value)}</code>{where}</li>")
        out.append("</ul>")
    if text["fix"]:
        out.append(f"<p><b>{_e(labels['fix'])}:</b> {_e(text['fix'])}</p>")
    for style, step_text in remedy_lines(finding.remediation.raw, lang):
        if style == "command":
            out.append('<pre class="command">$ ' + _e(step_text) + "</pre>")
        elif style == "code":
            out.append('<pre class="code"><code>' + _e(step_text) + "</code></pre>")
        else:
            out.append("<p>" + _e(step_text) + "</p>")
    if text["verify"]:  # in the page's language, as the text report and the wizard say it
        out.append(f"<p><b>{_e(labels['verify'])}:</b> {_e(text['verify'])}</p>")
    from fallback_doctor.core.document.script import finding_script

    script = finding_script(finding, lang, python)
    if script:  # the same text as "Copy the fix" and remediation.script (core/document/script.py)
        out.append(
            f"<details><summary>{_e(label('script.title', lang))}</summary>"
            f'<pre class="script">{_e(script)}</pre></details>'
        )
    out.append("</div>")
    return "\n".join(out)


def _comparison(document: Report, labels: dict[str, str], lang: str) -> str:
    """The CPU baseline and each GPU strategy: the same figures as the wizard's GPU page, results in words."""
    part = document.inference
    rows: list[tuple[str, str, str, tuple[str, ...]]] = []
    if part.cpu.raw:
        rows.append(
            ("CPU", label("run_verdict.cpu_baseline", lang), _p50(part.cpu, lang), part.cpu.active_providers)
        )
    for strategy in part.strategies:
        name = f"GPU ({_strategy_words(strategy.name, lang)})"
        rows.append(
            (
                name,
                _result(strategy, strategy.gpu, lang),
                _p50(strategy.gpu, lang),
                strategy.gpu.active_providers,
            )
        )
    if not rows:
        return ""
    head = (
        f"<tr><th>{_e(labels['run'])}</th><th>{_e(labels['verdict_col'])}</th>"
        f"<th>{_e(labels['p50'])}</th><th>{_e(labels['providers'])}</th></tr>"
    )
    body = "".join(
        f"<tr><td>{_e(name)}</td><td>{_e(verdict)}</td><td>{_e(p50)}</td>"
        f"<td>{_e(', '.join(providers))}</td></tr>"
        for name, verdict, p50, providers in rows
    )
    return f"<table>{head}{body}</table>"


def _result(strategy: Strategy | Mapping[str, Any], gpu: Session | Mapping[str, Any], lang: str) -> str:
    """A strategy's outcome in words: its verdict, how far ONNX Runtime got, or why it was skipped."""
    strategy = strategy if isinstance(strategy, Strategy) else strategy_of(strategy)
    gpu = gpu if isinstance(gpu, Session) else session_of(gpu)
    if strategy.skipped:
        why = record_words(strategy.raw.get("skipped_words"), strategy.skipped, lang)
        return label("run_verdict.skipped", lang, why=why)
    words = []
    verdict = str(gpu.raw.get("verdict") or "")
    if has_label(f"run_verdict.{verdict}"):
        words.append(label(f"run_verdict.{verdict}", lang))
    stage = strategy.stage
    if has_label(f"stage.{stage}") and verdict != "gpu_active":
        words.append(label(f"stage.{stage}", lang))
    return "; ".join(words) or verdict or stage or "—"


def _strategy_words(name: str, lang: str) -> str:
    """A GPU strategy's words ("as the application runs"), never its code ("as_is")."""
    return label(f"strategy.{name}", lang) if has_label(f"strategy.{name}") else name


def _p50(run: Session, lang: str) -> str:
    if one_run(run):  # one cold run is shown as one run, never as a median
        return runs_text(run, lang)
    value = run.latency.get("p50_ms")
    return ms_text(value, lang) if isinstance(value, int | float) else "—"


def _table(record: dict[str, Any]) -> str:
    rows = []
    for key, value in record.items():
        if isinstance(value, dict):
            shown = ", ".join(f"{k}: {v}" for k, v in value.items() if v not in (None, "", [], {}))
        elif isinstance(value, list):
            shown = "; ".join(
                ", ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "", [], {}))
                if isinstance(item, dict)
                else str(item)
                for item in value
            )
        else:
            shown = "" if value is None else str(value)
        rows.append(f"<tr><th>{_e(key)}</th><td>{_e(shown)}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _replayed(document: Report, lang: str) -> str:
    """The line saying the GPU readings were replayed from a recording (as the wizard's graph says)."""
    series = document.inference.series
    if not series or series.get("recorded_here", True):
        return ""
    status = as_dict(series.get("gpu_status"))
    what = said_text(series.get("provenance_words"), series.get("provenance"), lang) or said_text(
        status.get("reason_words"), status.get("reason"), lang
    )
    what = what or "?"
    return f'<p class="meta replayed">{_e(label("graph.replayed", lang, what=what))}</p>'
