"""``fallback-doctor explain-log``: diagnose logs from their text alone.

``explain-log [--json] [--lang en|ko] FILE [FILE ...]`` (``-`` reads standard input). With
``--json``: one JSON object per file per line (JSON Lines), each with ``file`` and ``causes``
(``{cause, layer, confidence, evidence}``, the most likely first). Exit 0 when it ran, whatever
it found; 2 when a file could not be read (the others are still processed).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from fallback_doctor.core.door import (
    DEFAULT_BUDGET,
    LANGUAGES,
    NAMED,
    NO_FAILURE,
    NOT_SAID,
    SEVERAL_OPEN,
    LogDiagnosis,
    LogReadError,
    LogText,
    cause_words,
    explain_texts,
    has_label,
    has_startup,
    label,
    read_log,
    separator,
)

_NAMES = (
    "file",
    "read",
    "lines",
    "of",
    "most_likely",
    "confidence",
    "layer",
    "why",
    "fix",
    "evidence",
    "others",
    "hidden",
    "scope_latest",
    "scope_whole",
    "nothing",
    "told_apart",
    "skipped",
    "scanned",
    "candidates",
)


def _labels(lang: str) -> dict[str, str]:
    """explain-log's words in ``lang`` (resources/texts/labels/explain_log.json)."""
    return {name: label(f"explain_log.{name}", lang) for name in _NAMES}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``explain-log`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "explain-log",
        help="diagnose ONNX Runtime GPU fallbacks from log files (text only)",
        description="Read the end of each log (any size, rotated, UTF-8/UTF-16/CP949, docker, "
        "journalctl) and rank the likely causes of a GPU-to-CPU fallback.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="log file, directory or - for stdin")
    parser.add_argument("--json", action="store_true", help="one JSON object per file per line")
    parser.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the text output")
    parser.add_argument(
        "--budget",
        type=int,
        default=DEFAULT_BUDGET,
        help="bytes read from the end of each log (default 8 MiB)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Diagnose each file; print text or JSON Lines; 0 when all were read, 2 otherwise."""
    status = 0
    out: TextIO = sys.stdout
    for name in args.files:
        try:
            texts = read_log(name, args.budget, stop_when=has_startup)
        except (LogReadError, OSError) as error:
            print(f"fallback-doctor explain-log: {error}", file=sys.stderr)
            status = 2
            continue
        diagnosis = explain_texts(texts)
        if args.json:
            record = _json_record(name, texts, diagnosis, args.lang)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(render_text(name, texts, diagnosis, args.lang))
        out.flush()
    return status


def _json_record(
    name: str, texts: list[LogText], diagnosis: LogDiagnosis, lang: str = "en"
) -> dict[str, object]:
    record: dict[str, Any] = {"file": name}
    record.update(diagnosis.to_dict())
    for cause in record["causes"]:  # the keys' words in --lang, beside the keys
        cause["told_apart"] = separator(cause["cause"], lang)
    for signal in record["hidden_signal"]:
        signal["said"] = _said(signal["says"], lang)
    record["read"] = [
        {
            "file": text.source,
            "encoding": text.encoding,
            "form": text.form,
            "size": text.size,
            "bytes_skipped": text.skipped,
            "lines": len(text.lines),
            "note": text.note,
        }
        for text in texts
    ]
    return record


def render_text(name: str, texts: list[LogText], diagnosis: LogDiagnosis, lang: str) -> str:
    """The report for people: the most likely cause first, with its explanation and fix."""
    labels = _labels(lang)
    lines: list[str] = []
    read = ", ".join(_what_was_read(text, labels) for text in texts)
    scope = labels["scope_latest"] if diagnosis.scope == "latest start-up" else labels["scope_whole"]
    lines.append(f"{labels['file']}: {name} — {labels['read']}: {read}; {scope}")
    lines.append("")
    answer = label(f"explain_log.outcome.{diagnosis.outcome}", lang)
    lines.append(f"{label('explain_log.outcome.label', lang)}: {answer}")
    if diagnosis.outcome == NOT_SAID:
        lines.extend(f"    {command}" for command in label("explain_log.outcome.commands", lang).splitlines())
    if diagnosis.outcome in (NOT_SAID, NO_FAILURE):
        lines.extend(_hidden_lines(diagnosis, labels, lang))
        lines.append("")
        return "\n".join(lines) + "\n"
    top = diagnosis.top
    texts_for = {part: cause_words(top.cause, part, lang) for part in ("title", "explanation", "fix")}
    lines.append("")
    heading = labels["most_likely"] if diagnosis.outcome == NAMED else labels["candidates"]
    lines.append(
        f"{heading}: {texts_for['title'] or top.cause} "
        f"[{top.cause}; {labels['layer']} {top.layer}; {labels['confidence']} {top.confidence:.2f}]"
    )
    if top.cause == "unknown":
        lines.append(f"  {labels['nothing']}")
    if texts_for.get("explanation"):
        lines.append(f"  {labels['why']}: {texts_for['explanation']}")
    if texts_for.get("fix"):
        lines.append(f"  {labels['fix']}: {texts_for['fix']}")
    if top.evidence:
        lines.append(f"  {labels['evidence']}:")
        for quote in top.evidence:
            lines.append(f"    {quote.where()}: {_shorten(quote.text)}")
    if diagnosis.outcome == SEVERAL_OPEN and separator(top.cause, lang):
        lines.append(f"  {labels['told_apart']}: {separator(top.cause, lang)}")
    others = diagnosis.causes[1:4]
    if others:
        lines.append("")
        lines.append(f"{labels['others']}:")
        for candidate in others:
            title = cause_words(candidate.cause, "title", lang, candidate.cause)
            lines.append(
                f"  - {title} [{candidate.cause}; {labels['confidence']} {candidate.confidence:.2f}]"
            )
            settle = separator(candidate.cause, lang)
            if settle:
                lines.append(f"    {labels['told_apart']}: {settle}")
    lines.extend(_hidden_lines(diagnosis, labels, lang))
    lines.append("")
    return "\n".join(lines) + "\n"


def _hidden_lines(diagnosis: LogDiagnosis, labels: dict[str, str], lang: str) -> list[str]:
    """Why the failure's own message may be missing, with the lines that show it."""
    lines: list[str] = []
    for signal in diagnosis.hidden:
        lines.append("")
        lines.append(f"{labels['hidden']}: {_said(signal.says, lang)}")
        for quote in signal.evidence[:3]:
            lines.append(f"    {quote.where()}: {_shorten(quote.text)}")
    return lines


def _said(key: str, lang: str) -> str:
    """A hidden signal's note (a label key) in ``lang``."""
    return label(key, lang) if key and has_label(key) else ""


def _what_was_read(text: LogText, labels: dict[str, str]) -> str:
    if text.form == "skipped":
        return f"{text.source} ({labels['skipped']}: {text.note})"
    words = f"{text.source} ({text.encoding}, {len(text.lines)} {labels['lines']}"
    if text.form == "scanned":
        words += f", {labels['scanned']}: {text.size:,} B"
    elif not text.complete:
        words += f", {text.size - text.skipped:,} {labels['of']} {text.size:,} B"
    if text.note and text.form != "scanned":
        words += f"; {text.note}"
    return words + ")"


def _shorten(text: str, limit: int = 300) -> str:
    """A long line's head and its end: the decisive words of a loader error are at the end
    (``…with error: libcublasLt.so.12: cannot open shared object file``)."""
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + " … " + text[-(limit - head - 3) :]


def main(argv: list[str] | None = None) -> int:
    """Run ``explain-log`` on its own (``python -m fallback_doctor.cli.explain_log``)."""
    parser = argparse.ArgumentParser(prog="fallback-doctor")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_parser(subparsers)
    arguments = parser.parse_args(["explain-log", *(sys.argv[1:] if argv is None else argv)])
    return int(arguments.handler(arguments))


if __name__ == "__main__":
    sys.exit(main())
