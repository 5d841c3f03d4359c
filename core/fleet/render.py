"""The fleet summary document as text for a terminal and as one self-contained HTML page.

Both render ``summary_document`` (core/fleet/summary.py) only. The page has no script and loads
nothing (a Content-Security-Policy forbids it); every value from a bundle or a status file is
escaped: its control characters, newlines, bidirectional overrides and lone surrogates are shown
as escapes (core/views/escape.py, the rule every front end follows), and on the page as HTML too.
Words come from resources/texts/labels/fleet.json (English and Korean).
"""

from __future__ import annotations

import html
from typing import Any

from fallback_doctor.core.fleet.fields import cause_words
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.views.escape import visible_line


def shown(value: object) -> Any:
    """The summary document with every string (keys too) shown on one line, escapes visible."""
    if isinstance(value, str):
        return visible_line(value)
    if isinstance(value, dict):
        return {shown(key): shown(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown(item) for item in value]
    return value


def _category(key: str, lang: str) -> str:
    try:
        return label(f"fleet.category.{key}", lang)
    except KeyError:
        return key


def count(number: int, lang: str) -> str:
    """``1 host``, ``14 hosts`` (``호스트 14대``)."""
    return label("fleet.count.one" if number == 1 else "fleet.count.many", lang, count=number)


def _hosts(hosts: list[str], limit: int = 12) -> str:
    shown = ", ".join(hosts[:limit])
    return shown + (f", … (+{len(hosts) - limit})" if len(hosts) > limit else "")


def _host_line(host: dict[str, Any], lang: str) -> list[str]:
    line = f"  {host['host']}: {_category(host['category'], lang)}"
    cause = host.get("first_cause")
    if cause:
        line += f" — {cause_words(cause, lang)[0]}  ({cause['cause']} / {cause['finding']})"
    lines = [line]
    if host.get("message"):
        lines.append(f"      {host['message']}")
    if host.get("stack"):
        lines.append(f"      {host['stack']['label']}")
    if host.get("open_in_wizard"):
        lines.append(f"      $ {host['open_in_wizard']}")
    return lines


def render_text(document: dict[str, Any], lang: str = "en") -> str:
    """The summary for a terminal: totals, by verdict, by first cause, combinations, every host."""
    document = shown(document)
    lines = [
        label("fleet.heading.summary", lang),
        label(
            "fleet.heading.summary.line",
            lang,
            total=document["hosts_total"],
            healthy=document["hosts_healthy"],
            folder=document["folder"],
        ),
        "",
        label("fleet.heading.verdicts", lang) + ":",
    ]
    for key, hosts in document["by_verdict"].items():
        lines.append(f"  {len(hosts):3}  {_category(key, lang)}: {_hosts(hosts)}")
    without = document.get("hosts_without_gpu") or []
    if without:
        lines.append(f"  {len(without):3}  {label('fleet.heading.no_gpu', lang)}: {_hosts(without)}")
    lines += ["", label("fleet.heading.causes", lang) + ":"]
    if not document["by_first_cause"]:
        lines.append("  " + label("fleet.heading.none", lang))
    for group in document["by_first_cause"]:
        lines.append(
            "  "
            + label(
                "fleet.heading.causes.line",
                lang,
                hosts=count(group["count"], lang),
                title=cause_words(group, lang)[0],
            )
        )
        lines.append(f"      {group['cause']} / {group['finding']}: {_hosts(group['hosts'])}")
        if cause_words(group, lang)[1]:
            lines.append(f"      → {cause_words(group, lang)[1]}")
    lines += ["", label("fleet.heading.combos", lang) + ":"]
    for combo in document["stack_combinations"]:
        status = label(f"fleet.combo.{combo['status']}", lang)
        lines.append(
            "  "
            + label(
                "fleet.heading.combos.line",
                lang,
                hosts=count(combo["count"], lang),
                label=combo["label"],
                status=status,
            )
        )
        lines.append(f"      {_hosts(combo['hosts'])}")
    lines += ["", label("fleet.heading.hosts", lang) + ":"]
    for host in document["hosts"]:
        lines.extend(_host_line(host, lang))
    return "\n".join(lines) + "\n"


def _e(value: object) -> str:
    return html.escape(visible_line("" if value is None else str(value)), quote=True)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}.c-gpu_unusable,.s-broken{background:#fde2e2}.c-gpu_at_risk,.s-mixed{background:#fff3cd}
.c-unreachable,.c-tool_failed,.c-refused{background:#eee}.c-gpu_verified,.s-works{background:#dff3e1}
code{font:12px ui-monospace,monospace;background:#f6f6f6;padding:0 .2em;word-break:break-all}
.meta{color:#555}
"""


def _table(headers: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for index, row in enumerate(rows):
        css = f' class="{_e(classes[index])}"' if classes else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def render_html(document: dict[str, Any], lang: str = "en") -> str:
    """The summary as one page that opens offline; each host row names the wizard command."""
    title = label("fleet.heading.summary", lang)
    detail = label(
        "fleet.heading.summary.line",
        lang,
        total=document["hosts_total"],
        healthy=document["hosts_healthy"],
        folder=document["folder"],
    )
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{_e(lang)}"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f'<h1>{_e(title)}</h1><p class="meta">{_e(detail)} · {_e(document["created"])}</p>',
        f"<h2>{_e(label('fleet.heading.verdicts', lang))}</h2>",
    ]
    verdicts = document["by_verdict"]
    parts.append(
        _table(
            ["", "#", label("fleet.heading.hosts", lang)],
            [[_e(_category(k, lang)), str(len(v)), _e(", ".join(v))] for k, v in verdicts.items()],
            [f"c-{key}" for key in verdicts],
        )
    )
    without = document.get("hosts_without_gpu") or []
    if without:
        parts.append(
            f"<p>{len(without)} {_e(label('fleet.heading.no_gpu', lang))}: {_e(', '.join(without))}</p>"
        )
    parts.append(f"<h2>{_e(label('fleet.heading.causes', lang))}</h2>")
    groups = document["by_first_cause"]
    if not groups:
        parts.append(f"<p>{_e(label('fleet.heading.none', lang))}</p>")
    else:
        parts.append(
            _table(
                ["#", "cause", "", "fix", label("fleet.heading.hosts", lang)],
                [
                    [
                        str(g["count"]),
                        f"<code>{_e(g['cause'])}</code><br><code>{_e(g['finding'])}</code>",
                        _e(cause_words(g, lang)[0]),
                        _e(cause_words(g, lang)[1]),
                        _e(", ".join(g["hosts"])),
                    ]
                    for g in groups
                ],
            )
        )
    parts.append(_combos_html(document, lang))
    parts.append(_hosts_html(document, lang))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _hosts_html(document: dict[str, Any], lang: str) -> str:
    rows = []
    for host in document["hosts"]:
        cause = host.get("first_cause")
        wizard = host.get("open_in_wizard")
        rows.append(
            [
                _e(host["host"]),
                _e(_category(host["category"], lang)),
                _e(cause_words(cause, lang)[0]) if cause else _e(host.get("message") or ""),
                _e((host.get("stack") or {}).get("label", "")),
                f"<code>{_e(wizard)}</code>" if wizard else "",
            ]
        )
    heading = label("fleet.heading.hosts", lang)
    hint = label("fleet.heading.hosts.line", lang, command="fallback-doctor gui --bundle FILE.zip")
    table = _table(
        [heading, "", "", "", "wizard"], rows, [f"c-{host['category']}" for host in document["hosts"]]
    )
    return f'<h2>{_e(heading)}</h2><p class="meta">{_e(hint)}</p>{table}'


def _combos_html(document: dict[str, Any], lang: str) -> str:
    combos = document["stack_combinations"]
    table = _table(
        ["#", "ONNX Runtime", "CUDA", "cuDNN", "driver", "", label("fleet.heading.hosts", lang)],
        [
            [
                str(c["count"]),
                _e(c["onnxruntime"] or "—"),
                _e(c["cuda"] or "—"),
                _e(c["cudnn"] or "—"),
                _e(c["driver"] or "—"),
                _e(label(f"fleet.combo.{c['status']}", lang)),
                _e(", ".join(c["hosts"])),
            ]
            for c in combos
        ],
        [f"s-{c['status']}" for c in combos],
    )
    return f"<h2>{_e(label('fleet.heading.combos', lang))}</h2>{table}"
