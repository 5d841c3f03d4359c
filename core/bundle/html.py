"""report.html: the report as one self-contained page that opens offline in any browser.

No script, no external resource (a Content-Security-Policy forbids loading any), inline CSS,
and the utilization graph as inline SVG drawn from samples.csv. Everything quoted is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from fallback_doctor.core.bundle.html_graph import graph_html
from fallback_doctor.core.evidence_text import evidence_words, record_words
from fallback_doctor.core.evidence_words import evidence_value
from fallback_doctor.core.measures import gpu_summary, ms_text, one_run, runs_text
from fallback_doctor.core.pages import elsewhere_note, layer_line, stack_layers, verdict_words
from fallback_doctor.core.remedy import remedy_lines
from fallback_doctor.core.report import finding_text, process_lines
from fallback_doctor.core.texts import has_label, label

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
    document: dict[str, Any],
    *,
    lang: str = "en",
    samples_csv: str | None = None,
    environment_record: dict[str, Any] | None = None,
    redacted: bool = True,
) -> str:
    """The self-contained page for one report document (already redacted: it is quoted as is)."""
    labels = _labels(lang)
    verdict = str(document.get("verdict", ""))
    verdict_text = verdict_words(document, lang)
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{_e(lang)}"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(labels['title'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(labels['title'])}</h1>",
        f'<p class="meta">{_e(labels["bundle"])} · {_e(labels["created"])}: {_e(document.get("created"))}'
        f" · {_e(labels['tool'])}: {_e(document.get('tool_version'))}</p>",
    ]
    parts.extend(f'<p class="meta">{_e(line.strip())}</p>' for line in process_lines(document, lang))
    if not redacted:
        parts.append(f'<p class="warn">{_e(labels["redaction_off"])}</p>')
    else:
        parts.append(f'<p class="meta">{_e(labels["redaction_on"])}</p>')
    parts.append(
        f'<p class="verdict v-{_e(verdict)}">{_e(labels["verdict"])}: {_e(verdict_text)}</p>'  # code: a class
    )
    findings = [f for f in document.get("findings") or [] if isinstance(f, dict)]
    parts.append(f"<h2>{_e(labels['stack'])}</h2>")
    parts.append(_stack(document, lang))
    comparison = _comparison(document, labels, lang)
    if comparison:
        parts.append(f"<h2>{_e(labels['comparison'])}</h2>{comparison}")
    graph = graph_html(document, samples_csv, lang)
    if graph:
        parts.append(f"<h2>{_e(labels['graph'])}</h2>{_replayed(document, lang)}{graph}")
    parts.append(f"<h2>{_e(labels['findings'])}</h2>")
    if not findings:
        parts.append(f"<p>{_e(labels['none'])}</p>")
    from fallback_doctor.core.steps import application_python

    python = application_python(document)
    for number, finding in enumerate(findings, start=1):
        parts.append(_finding(number, finding, lang, labels, python))
    if environment_record:
        parts.append(f"<h2>{_e(labels['environment'])}</h2>{_table(environment_record)}")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _stack(document: dict[str, Any], lang: str) -> str:
    """The five layers bottom-up with their states: the wizard's stack page, from the same function."""
    items = []
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
    note = elsewhere_note(document, lang)  # a log from elsewhere: this machine was not inspected
    said_first = f'<p class="meta">{_e(note)}</p>' if note else ""
    return said_first + '<ul class="stack">' + "".join(items) + "</ul>"


def _finding(
    number: int, finding: dict[str, Any], lang: str, labels: dict[str, str], python: str | None = None
) -> str:
    text = finding_text(finding, lang)
    severity = str(finding.get("severity", "info"))
    out = [
        '<div class="finding">',
        f'<p><span class="sev {_e(severity)}">{_e(severity)}</span> <b>{number}. {_e(text["title"])}</b></p>',
        f'<p class="meta">{_e(finding.get("layer"))} / {_e(finding.get("cause"))} / '
        f"{_e(finding.get('id'))}</p>",
        f"<p>{_e(text['detail'])}</p>",
    ]
    evidence = [item for item in finding.get("evidence") or [] if isinstance(item, dict)]
    if evidence:
        out.append(f"<p><b>{_e(labels['evidence'])}</b></p><ul>")
        for item in evidence:
            where = ""
            shown_label, shown, source = evidence_words(item, lang)
            if source:
                where = f' <span class="meta">({_e(source)}'
                where += f":{_e(item['line'])})</span>" if item.get("line") else ")</span>"
            out.append(f"<li>{_e(shown_label)}: <code>{_e(shown)}</code>{where}</li>")
        out.append("</ul>")
    remediation = finding.get("remediation") or {}
    if text["fix"]:
        out.append(f"<p><b>{_e(labels['fix'])}:</b> {_e(text['fix'])}</p>")
    for style, step_text in remedy_lines(remediation if isinstance(remediation, dict) else None, lang):
        if style == "command":
            out.append('<pre class="command">$ ' + _e(step_text) + "</pre>")
        elif style == "code":
            out.append('<pre class="code"><code>' + _e(step_text) + "</code></pre>")
        else:
            out.append("<p>" + _e(step_text) + "</p>")
    if text["verify"]:  # in the page's language, as the text report and the wizard say it
        out.append(f"<p><b>{_e(labels['verify'])}:</b> {_e(text['verify'])}</p>")
    from fallback_doctor.core.script import finding_script

    script = finding_script(finding, lang, python)
    if script:  # the same text as "Copy the fix" and remediation.script (core/script.py)
        out.append(
            f"<details><summary>{_e(label('script.title', lang))}</summary>"
            f'<pre class="script">{_e(script)}</pre></details>'
        )
    out.append("</div>")
    return "\n".join(out)


def _comparison(document: dict[str, Any], labels: dict[str, str], lang: str) -> str:
    """The CPU baseline and each GPU strategy: the same figures as the wizard's GPU page, results in words."""
    summary = gpu_summary(document)
    rows: list[tuple[str, str, str, Any]] = []
    cpu = summary["cpu"]
    if cpu:
        rows.append(
            ("CPU", label("run_verdict.cpu_baseline", lang), _p50(cpu, lang), cpu.get("active_providers"))
        )
    for strategy in summary["strategies"]:
        gpu = strategy.get("gpu") if isinstance(strategy.get("gpu"), dict) else {}
        rows.append(
            (
                f"GPU ({_strategy_words(str(strategy.get('name')), lang)})",
                _result(strategy, gpu or {}, lang),
                _p50(gpu or {}, lang),
                (gpu or {}).get("active_providers"),
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
        f"<td>{_e(', '.join(map(str, providers)) if isinstance(providers, list) else '')}</td></tr>"
        for name, verdict, p50, providers in rows
    )
    return f"<table>{head}{body}</table>"


def _result(strategy: dict[str, Any], gpu: dict[str, Any], lang: str) -> str:
    """A strategy's outcome in words: its verdict, how far ONNX Runtime got, or why it was skipped."""
    if strategy.get("skipped"):
        why = record_words(strategy.get("skipped_words"), strategy["skipped"], lang)
        return label("run_verdict.skipped", lang, why=why)
    words = []
    verdict = str(gpu.get("verdict") or "")
    if has_label(f"run_verdict.{verdict}"):
        words.append(label(f"run_verdict.{verdict}", lang))
    stage = str(strategy.get("stage") or "")
    if has_label(f"stage.{stage}") and verdict != "gpu_active":
        words.append(label(f"stage.{stage}", lang))
    return "; ".join(words) or verdict or stage or "—"


def _strategy_words(name: str, lang: str) -> str:
    """A GPU strategy's words ("as the application runs"), never its code ("as_is")."""
    return label(f"strategy.{name}", lang) if has_label(f"strategy.{name}") else name


def _p50(run: dict[str, Any], lang: str) -> str:
    if one_run(run):  # one cold run is shown as one run, never as a median
        return runs_text(run, lang)
    latency = run.get("latency")
    value = latency.get("p50_ms") if isinstance(latency, dict) else None
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


def _replayed(document: dict[str, Any], lang: str) -> str:
    """The line saying the GPU readings were replayed from a recording (as the wizard's graph says)."""
    series = (document.get("inference") or {}).get("series")
    if not isinstance(series, dict) or series.get("recorded_here", True):
        return ""
    what = series.get("provenance") or (series.get("gpu_status") or {}).get("reason") or "?"
    what = evidence_value(what, lang)
    return f'<p class="meta replayed">{_e(label("graph.replayed", lang, what=what))}</p>'
