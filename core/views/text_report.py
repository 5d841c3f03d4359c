"""The text report: the document as a terminal shows it (what `diagnose` prints), pure.

Renderers take the serialisable document, never live core objects, so the CLI, the
wizard and a bundle opened on another machine all show the same thing.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.document.remedy import remedy_terminal
from fallback_doctor.core.document.view import (
    Document,
    Evidence,
    Remediation,
    Report,
    evidence_words,
    finding_words,
    view_of,
)
from fallback_doctor.core.document.view import Finding as ViewFinding
from fallback_doctor.core.language.evidence_text import said_text
from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.core.model.result import TRIED_LABEL

if TYPE_CHECKING:
    pass


def _verdict_words(verdict: str, lang: str) -> str:
    return label(f"verdict.{verdict}", lang) if has_label(f"verdict.{verdict}") else verdict


def finding_text(finding: ViewFinding | Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail and fix in ``lang``, falling back to English (core/document/view.py's
    words)."""
    return finding_words(finding, lang)


SUMMARY_FULL_CAUSES = 3
"""How many causes the one-screen summary shows with their fixes (the rest: one line each)."""


def render_text(
    document: Document,
    lang: str = "en",
    width: int = 100,
    *,
    verbose: bool = False,
    wrap_prose: bool = False,
) -> str:
    """The report for people: the verdict first, then the ranked causes with their fixes.

    By default one screen (like ``systemctl status``): the verdict, what was diagnosed, the test
    inference, the first causes with fix, commands and how to verify, the rest one line each.
    ``verbose`` adds every finding's detail and evidence, and its fix as the script that pastes.
    Details and fixes wrap at ``width``; ``wrap_prose`` (a terminal, whose width is known) wraps
    every other line of prose too, where a pipe gets them whole, one line each, for grep.
    """
    report = view_of(document)
    labels = {key: label(f"report.{key}", lang) for key in _REPORT_LABELS}
    verdict = report.verdict
    prose = width if wrap_prose else None
    lines = _wrap(f"{labels['verdict']}: {_verdict_words(verdict, lang)}", prose, "", "  ")  # code: --json
    for line in [*_machine_line(report, lang), *process_lines(report, lang)]:
        lines.extend(_wrap(line, prose, "", "  "))
    lines.append("")
    for line in inference_lines(report, lang):
        lines.extend(_wrap(line, prose, "", "  ") if line else [""])
    findings = list(report.findings)
    if not findings:
        lines.append(labels["none"])
    elif verbose:
        lines.append(labels["findings"] + ":")
        from fallback_doctor.core.document.script import finding_script
        from fallback_doctor.core.flow.steps import application_python

        for number, finding in enumerate(findings, start=1):
            lines.extend(_finding_lines(number, finding, lang, (width, prose), labels, verbose=True))
            script = finding_script(finding, lang, application_python(report.raw))
            if script:  # what "Copy the fix" copies and remediation.script holds (core/document/script.py)
                lines.append(f"   {label('script.title', lang)}:")
                lines.extend(f"     {line}".rstrip() for line in script.splitlines())
    else:
        lines.extend(_summary_lines(findings, lang, (width, prose), labels))
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int | None, first: str, rest: str, *, break_words: bool = False) -> list[str]:
    """Prose wrapped at ``width`` (the terminal's; None: one line). A code span (`` `ldd … | grep
    x` ``) and a word longer than a line are never broken, so that what is quoted copies whole."""
    if width is None:
        return [first + text]
    spans = re.sub(r"`[^`]*`|“[^”]*”", lambda code: code.group(0).replace(" ", "\0"), text)
    wrapped = textwrap.wrap(
        spans,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=break_words,
        break_on_hyphens=False,
    )
    return [line.replace("\0", " ") for line in wrapped] or [first.rstrip()]


def _machine_line(report: Report, lang: str) -> list[str]:
    platform = report.part("platform")
    machine = ", ".join(
        str(part)
        for part in (platform.get("os_name") or platform.get("system"), platform.get("machine"))
        if part
    )
    target = report.target
    what = " ".join(str(target.get(key)) for key in ("kind", "python", "bareun_root") if target.get(key))
    if not machine and not what:
        return []
    if not machine:
        from fallback_doctor.core.views.pages_log_stack import inspected_elsewhere

        machine = label("summary.elsewhere", lang) if inspected_elsewhere(report) else "?"
    return [
        label(
            "summary.machine",
            lang,
            machine=machine,
            target=what or "?",
            created=report.created,
        )
    ]


def process_lines(document: Document, lang: str) -> list[str]:
    """Which process, interpreter and environment the report describes (``--pid``), in ``lang``."""
    target = view_of(document).target
    if not target.get("pid") or not target.get("environment"):
        return []
    pid = str(target["pid"])
    how = str(target.get("python_found_by") or "")
    found_by = label(f"summary.found_by.{how}", lang) if how else ""
    python = (
        label("summary.process.python", lang, python=target["python"], how=found_by)
        if target.get("python") and how
        else label("summary.process.native", lang, executable=target.get("executable") or "?")
    )
    environment = label(
        f"summary.environment.{target['environment']}",
        lang,
        pid=pid,
        error=target.get("environment_error") or "",
    )
    return [
        label("summary.process", lang, pid=pid, command=target.get("process") or "?"),
        "  " + python,
        "  " + environment,
        *(["  " + label("summary.process.cwd", lang, cwd=target["cwd"])] if target.get("cwd") else []),
    ]


def _summary_lines(
    findings: list[ViewFinding], lang: str, widths: tuple[int, int | None], labels: dict[str, str]
) -> list[str]:
    from fallback_doctor.core.judgement.judge import can_be_first

    prose = widths[1]
    causes = [
        finding
        for finding in findings
        if can_be_first(finding.id, finding.cause, finding.severity, finding.role)
    ]
    # The document's order (core/judgement/judge.py ranked it): the causes lead, the context follows them.
    full = (causes or findings)[:SUMMARY_FULL_CAUSES]
    rest = [finding for finding in findings if not any(finding is shown for shown in full)]
    lines = [label("summary.causes" if causes else "summary.no_cause", lang)]
    for number, finding in enumerate(full, start=1):
        lines.extend(_finding_lines(number, finding, lang, widths, labels, verbose=False))
    if rest:
        lines.extend(["", label("summary.also", lang, count=len(rest))])
        for finding in rest:
            title = finding_text(finding, lang)["title"]
            tag = _severity_tag(finding.severity, lang)
            lines.extend(_wrap(f"  - [{tag}] {title}", prose, "", "    "))
    lines.extend(["", *_wrap(label("summary.more", lang), prose, "", "  ")])
    return lines


def _severity_tag(severity: str, lang: str) -> str:
    """ERROR, WARNING, INFO in English (what scripts grep); the catalog's word in another language."""
    if lang != "en" and has_label(f"severity.{severity}"):
        return label(f"severity.{severity}", lang)
    return str(severity).upper()


def _finding_lines(
    number: int,
    finding: ViewFinding,
    lang: str,
    widths: tuple[int, int | None],
    labels: dict[str, str],
    *,
    verbose: bool,
) -> list[str]:
    width, prose = widths
    text = finding_text(finding, lang)
    where = f"{finding.layer} / {finding.cause} / {finding.id}" if verbose else finding.id
    heading = f"{number}. [{_severity_tag(finding.severity, lang)}] {text['title']}  ({where})"
    lines = ["", *_wrap(heading, prose, "", "   ")]
    if verbose:
        lines.extend(_wrap(text["detail"], width, "   ", "   ", break_words=True))  # a quoted command whole
        lines.extend(_evidence_lines(finding.evidence, labels, lang))
    if text["fix"]:
        lines.extend(_wrap(text["fix"], width, f"   {labels['fix']}: ", "        ", break_words=True))
    shown, other_options = _options_shown(finding.remediation, verbose)
    lines.extend(remedy_terminal(shown, lang, "     "))
    if other_options:
        key = "remedy.more_options.one" if other_options == 1 else "remedy.more_options.many"
        lines.append("     " + label(key, lang, count=other_options))
    for item in finding.evidence:
        if item.label == TRIED_LABEL and not verbose:  # --verbose lists it with the evidence
            lines.extend(
                _wrap(evidence_words(item, lang).value, width, f"   {labels['tried']}: ", "        ")
            )
    if text["verify"]:
        lines.extend(_wrap(f"{labels['verify']}: {text['verify']}", prose, "   ", "        "))
    return lines


def _options_shown(remediation: Remediation, verbose: bool) -> tuple[Mapping[str, Any], int]:
    """The remediation as the summary shows it: its first option only (one screen), and how many
    other options ``--verbose`` adds; every option when verbose."""
    steps = remediation.steps
    options = {int(step.get("option") or 1) for step in steps}
    if verbose or len(options) < 2:
        return remediation.raw, 0
    first = min(options)
    kept = [step for step in steps if int(step.get("option") or 1) == first]
    return {**remediation.raw, "steps": kept}, len(options) - 1


def _evidence_lines(evidence: Sequence[Evidence], labels: dict[str, str], lang: str = "en") -> list[str]:
    if not evidence:
        return []
    lines = [f"   {labels['evidence']}:"]
    for item in evidence[:12]:
        words = evidence_words(item, lang)
        where = ""
        if item.source and item.source != item.value:  # "log: X (X)" says X once
            where = f" ({words.source}" + (f":{item.line}" if item.line else "") + ")"
        lines.append(f"     - {words.label}: {words.value}{where}")
    if len(evidence) > 12:
        lines.append(f"     … {len(evidence) - 12} more in --json")
    return lines


_REPORT_LABELS = ("verdict", "fix", "run", "verify", "none", "findings", "evidence", "tried")


def _run_verdict_words(verdict: Any, lang: str) -> str:
    """The GPU retry's verdict in the catalog's words in every language (its code is --json's)."""
    if not verdict:
        return "-"
    if has_label(f"run_verdict.{verdict}"):
        return label(f"run_verdict.{verdict}", lang)
    return str(verdict)


def inference_lines(document: Document, lang: str) -> list[str]:
    """The test inference in two lines: the CPU baseline and the GPU retry as is ([] when none ran)."""
    from fallback_doctor.core.readers.inference.model_words import placement_words
    from fallback_doctor.core.views.measures import gpu_summary, ms_text, no_inference_words

    report = view_of(document)
    summary = gpu_summary(report)
    if not summary["baseline_ran"] and not summary["ran"]:
        nothing_to_run = no_inference_words(report, lang)
        if nothing_to_run:
            return [nothing_to_run, ""]
        skipped = report.inference.skipped
        why = said_text(report.inference.raw.get("skipped_words"), skipped, lang)
        return [label("report.inference.skipped", lang, why=why), ""] if skipped else []
    lines = _model_lines(report.raw, lang)
    lines.append(label("report.inference.cpu", lang, p50=ms_text(summary["cpu_p50"], lang)))
    if summary["ran"]:
        lines.append(
            label(
                "report.inference.gpu_one" if summary["gpu_one_run"] else "report.inference.gpu",
                lang,
                verdict=_run_verdict_words(summary["verdict"], lang),
                p50=ms_text(summary["gpu_p50"], lang),
                ms=ms_text(summary["gpu_p50"], lang),  # one run: its time, not a median
                providers=", ".join(summary["gpu_providers"]) or "-",
            )
        )
        placed = placement_words(summary["gpu_nodes"], lang)
        if placed:
            lines.append(label("report.inference.placement", lang, placement=placed))
    return [*lines, ""]


def _model_lines(document: Mapping[str, Any], lang: str) -> list[str]:
    """The test model's name and each dynamic dimension's value with its source ([] before a step ran)."""
    from fallback_doctor.core.readers.inference.model_words import model_line

    line = model_line(document, lang)
    return line.splitlines()


__all__ = [
    "finding_text",
    "inference_lines",
    "render_text",
]
