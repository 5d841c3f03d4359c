"""``fallback-doctor fleet-summary DIR``: the picture of a fleet from a folder of bundles.

DIR is what the Ansible playbook (packaging/ansible/) fetched: ``<host>.zip`` and
``<host>.status.json`` per host; a folder of bundles collected by hand works too. Every bundle is
verified (core/bundle/safe_open.py) and a bad one is a row saying why. Prints the text summary
(``--json``: the JSON document); ``--html FILE`` writes the page; ``--save`` writes
``fleet-summary.txt``, ``.json`` and ``.html`` into DIR. What came from the hosts is shown, never
obeyed (cli/output.py): escapes visible in the text, the JSON whole and valid. Exit 0 every host
healthy, 1 some host is not (or unreachable), 2 DIR is not a folder or a file could not be written
(each one that could be is written all the same).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
from pathlib import Path

from fallback_doctor.cli.common import UsageError, default_language
from fallback_doctor.cli.output import json_text, write_error, write_text
from fallback_doctor.core.door import LANGUAGES

SAVED_NAMES = ("fleet-summary.txt", "fleet-summary.json", "fleet-summary.html")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fleet-summary`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "fleet-summary",
        help="summarise a folder of bundles from many hosts (hosts by verdict, by first cause)",
        description="Read a folder of diagnostic bundles (one per host, e.g. fetched by the Ansible "
        "playbook) and print the fleet's picture: hosts by verdict, hosts grouped by the same first "
        "cause, the ONNX Runtime / CUDA / cuDNN / driver combinations seen and which of them work.",
    )
    parser.add_argument("folder", metavar="DIR")
    parser.add_argument("--json", action="store_true", help="print the JSON summary instead of text")
    parser.add_argument("--html", metavar="FILE", help="also write the summary as one HTML page")
    parser.add_argument(
        "--save", action="store_true", help="write fleet-summary.txt, .json and .html into DIR"
    )
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="language of the text and page")
    parser.set_defaults(handler=run)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_all(outputs: list[tuple[Path, str]]) -> bool:
    """Write each file (atomically); a file that cannot be written is said, the others written."""
    written = True
    for path, content in outputs:
        try:
            write_atomically(path, content)
        except OSError as error:
            written = False
            why = "it is a folder" if path.is_dir() else (error.strerror or str(error))
            write_error(f"fallback-doctor: {path}: not written: {why}")
    return written


def run(args: argparse.Namespace) -> int:
    """Read the folder, summarise, print and write what was asked."""
    from fallback_doctor.core.door import exit_code, read_fleet, render_html, summary_document
    from fallback_doctor.core.door import render_fleet_text as render_text

    folder = Path(args.folder)
    try:
        rows = read_fleet(folder)
    except OSError as error:
        raise UsageError(str(error)) from None
    lang = args.lang or default_language()
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    document = summary_document(rows, created, str(folder.resolve()))
    as_json = json_text(document) + "\n"
    text = render_text(document, lang)
    write_text(as_json if args.json else text)
    outputs: list[tuple[Path, str]] = []
    if args.html:
        outputs.append((Path(args.html), render_html(document, lang)))
    if args.save:
        saved = (text, as_json, render_html(document, lang))
        outputs += [(folder / name, content) for name, content in zip(SAVED_NAMES, saved, strict=True)]
    written = _write_all(outputs)
    if args.save and written:
        write_error(f"fallback-doctor: summary written to {folder / SAVED_NAMES[0]} (.json, .html)")
    if not rows:
        write_error(f"fallback-doctor: no bundle or host status in {folder}")
    return exit_code(rows) if written else 2
