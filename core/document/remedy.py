"""A remedy's typed steps as lines a person reads: commands as commands, code as code.

Works on the report document's ``remediation`` (plain JSON), so the text report, report.html and
the wizard show a bundle's findings the same way as a fresh diagnosis. Each line is
``(style, text)``: "command" (a shell line, shown with ``$``), "code" (statements, shown as code
and never with ``$``), "text" (a config edit, a manual step, a heading).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.language.texts import commented_line, label, words_text
from fallback_doctor.core.model.result import step_from_dict, step_shell

Line = tuple[str, str]


def remedy_lines(remediation: Mapping[str, Any] | None, lang: str = "en") -> list[Line]:
    """Every step of the remediation as styled lines (its ``commands`` when it has no steps)."""
    if not isinstance(remediation, Mapping):
        return []
    steps = [step for step in remediation.get("steps") or [] if isinstance(step, Mapping)]
    if not steps:
        return [("command", line) for line in commands_in(remediation, lang)]
    lines: list[Line] = []
    option = 1
    for data in steps:
        number = int(data.get("option") or 1)
        if number != option:
            option = number
            lines.append(("text", label("remedy.option", lang, option=number)))
        lines.extend(_step_lines(data, lang))
    return lines


def commands_in(remediation: Mapping[str, Any], lang: str) -> list[str]:
    """The remediation's ``commands`` with each comment in ``lang`` where the document gives its
    words (``comments``, by position); a command without them as written."""
    given = remediation.get("comments")
    comments = list(given) if isinstance(given, list) else []
    commands = [str(command) for command in remediation.get("commands") or []]
    comments += [None] * (len(commands) - len(comments))
    return [commented_line(line, comment, lang) for line, comment in zip(commands, comments, strict=False)]


def step_words(data: Mapping[str, Any], part: str, lang: str) -> str:
    """A step's ``text`` (manual) or ``where`` (code) in ``lang``: from its catalogue words
    (``words``, ``where_words``) where the document has them, else as written."""
    words = data.get("words" if part == "text" else "where_words")
    return words_text(words, lang) if isinstance(words, dict) else str(data.get(part) or "")


def _step_lines(data: Mapping[str, Any], lang: str) -> list[Line]:
    kind = data.get("kind")
    if kind == "code":
        where = step_words(data, "where", lang)
        head = label("remedy.code", lang, language=str(data.get("language") or "python"), where=where)
        return [("text", head), ("code", str(data.get("code") or ""))]
    if kind == "config":
        value = json.dumps(data.get("value"), ensure_ascii=False)
        text = label("remedy.config", lang, file=data.get("file"), pointer=data.get("pointer"), value=value)
        return [("text", text)]
    if kind == "manual":
        return [("text", step_words(data, "text", lang))]
    step = step_from_dict(dict(data))
    shell = step_shell(step) or ""
    if kind == "environment":
        scope = data.get("scope")
        if scope == "systemd":
            unit = str(data.get("unit") or "the-service")
            lines = [("text", label("remedy.environment.systemd", lang, unit=unit))]
            variables = dict(data.get("variables") or {})
            return lines + [("code", f'Environment="{k}={v}"') for k, v in variables.items()]
        if scope == "container":
            return [
                ("text", label("remedy.environment.container", lang)),
                ("command", shell),
            ]
        return [("command", shell)]
    runs_on = str(data.get("where") or "")
    if runs_on in ("host", "container_host"):
        return [("command", f"{shell}  # {label(f'remedy.where.{runs_on}', lang)}")]
    return [("command", shell)]


def remedy_terminal(remediation: Mapping[str, Any] | None, lang: str, indent: str) -> list[str]:
    """The lines for a terminal, each under ``indent``: commands after ``$``, code indented further
    (never with ``$``), text as it is: the text report and ``test-inference`` print the same."""
    out: list[str] = []
    for style, text in remedy_lines(remediation, lang):
        prefix = "$ " if style == "command" else ("    " if style == "code" else "")
        out.extend(f"{indent}{prefix}{part}" for part in text.splitlines() or [""])
    return out


def remedy_plain(remediation: Mapping[str, Any] | None, lang: str = "en") -> list[str]:
    """The lines as plain text (the wizard's copy button): commands with no ``$``, code as is."""
    return [text for _, text in remedy_lines(remediation, lang)]
