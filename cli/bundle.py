"""``fallback-doctor bundle show|verify FILE``, and the ``diagnose --bundle FILE.zip`` export.

``bundle show FILE [--lang en|ko] [--json]`` prints the report of a bundle made on another
machine (exit 0, or 2 when the file is refused). ``bundle verify FILE`` checks every member
against the manifest (exit 0 good, 1 a member differs — named —, 2 not a bundle or refused).

``diagnose … --bundle FILE.zip [--force] [--dry-run] [--no-redact]`` calls
:func:`export_from_cli` with the report document.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fallback_doctor.cli.output import text_options, write_error, write_json, write_text
from fallback_doctor.core.door import LANGUAGES

if TYPE_CHECKING:
    from fallback_doctor.core.door import ExtraMember

# The bundle machinery is imported where it is used: `diagnose` registers this module's options
# on every run, and importing redaction, export and opening costs tens of milliseconds.

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_REFUSED = 2


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bundle show`` and ``bundle verify`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "bundle",
        help="show or verify a diagnostic bundle (made with diagnose --bundle)",
        description="Open a diagnostic bundle made on another machine: print its report, or check "
        "every file in it against its manifest. The zip is treated as untrusted and never extracted.",
    )
    actions = parser.add_subparsers(dest="bundle_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the bundle's report (exit 0, or 2 when refused)")
    show.add_argument("file", metavar="FILE")
    show.add_argument("--lang", choices=LANGUAGES, default=None, help="language of the text report")
    show.add_argument("--json", action="store_true", help="print the report document as JSON")
    show.add_argument("--verbose", "-v", action="store_true", help="every finding's detail and evidence")
    show.set_defaults(handler=run)
    verify = actions.add_parser(
        "verify", help="check every file against the manifest (0 good, 1 mismatch, 2 refused)"
    )
    verify.add_argument("file", metavar="FILE")
    verify.set_defaults(handler=run)


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--bundle FILE.zip [--force] [--dry-run] [--no-redact]`` options of ``diagnose``."""
    parser.add_argument(
        "--bundle", metavar="FILE.zip", help="also write a diagnostic bundle (redacted) to FILE.zip"
    )
    parser.add_argument("--force", action="store_true", help="with --bundle: replace FILE.zip if it exists")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="with --bundle: list the files and every redaction, write nothing",
    )
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="with --bundle: do NOT redact secrets and identities (stated in the manifest)",
    )
    parser.add_argument(
        "--redact-more",
        action="append",
        default=[],
        metavar="TEXT",
        help="with --bundle: also mask TEXT wherever it appears (repeatable)",
    )
    parser.add_argument(
        "--fleet-host",
        metavar="NAME",
        help="with --bundle: the inventory name of this host (the Ansible playbook gives it); the "
        "manifest records its sha256, so the fleet summary can tell the bundle is this host's",
    )


def run(args: argparse.Namespace) -> int:
    """``bundle show`` / ``bundle verify``."""
    if args.bundle_command == "verify":
        return _verify(args.file)
    return _show(args.file, args.lang, args.json, verbose=args.verbose)


def _show(path: str, lang: str | None, as_json: bool, *, verbose: bool = False) -> int:
    from fallback_doctor.core.door import BundleRefusedError, open_bundle, render_text

    try:
        opened = open_bundle(path)
    except BundleRefusedError as error:
        write_error(f"fallback-doctor bundle show: refused: {error}")
        return EXIT_REFUSED
    if as_json:
        if write_json(opened.document):
            return EXIT_REFUSED
    else:
        from fallback_doctor.cli.common import default_language

        write_error(opened.origin())
        for problem in opened.integrity_problems:
            write_error(f"warning: {problem}")
        lang = lang or default_language()
        write_text(render_text(opened.document, lang, verbose=verbose, **text_options()))
    return EXIT_OK


def _verify(path: str) -> int:
    from fallback_doctor.core.door import BundleRefusedError, verify_bundle

    try:
        result = verify_bundle(path)
    except BundleRefusedError as error:
        write_error(f"fallback-doctor bundle verify: refused: {error}")
        return EXIT_REFUSED
    if result.ok:
        print(f"{path}: OK, {result.checked} files match the manifest")
        return EXIT_OK
    write_error(f"{path}: MISMATCH")
    for problem in result.problems:
        write_error(f"  {problem}")
    return EXIT_MISMATCH


def export_from_cli(
    document: dict[str, Any], args: argparse.Namespace, extras: Sequence[ExtraMember] | None = None
) -> int:
    """``diagnose --bundle FILE.zip``: preview (``--dry-run``) or write the bundle; 0 done, 2 failed.

    ``extras``: members besides the report (probe output, samples.csv …); by default the
    configuration and logs the document names are read now. Messages go to standard error
    (the listing of ``--dry-run`` to standard output unless ``--json`` is printing there).
    """
    from fallback_doctor.core.door import (
        BundleExistsError,
        BundleOptions,
        OutputIsTargetFileError,
        extras_from_document,
        prepare_bundle,
        render_preview,
        write_bundle,
    )

    destination = getattr(args, "bundle", None)
    if not destination:
        return EXIT_OK
    if extras is None:
        extras = extras_from_document(document)
    options = BundleOptions(
        redact=not getattr(args, "no_redact", False),
        redact_more=tuple(getattr(args, "redact_more", None) or ()),
        lang=getattr(args, "lang", None) or "en",
        fleet_host=getattr(args, "fleet_host", None),
    )
    preview = prepare_bundle(document, extras, options)
    if getattr(args, "dry_run", False):
        out = sys.stderr if getattr(args, "json", False) else sys.stdout
        write_text(render_preview(preview), out)
        return EXIT_OK
    try:
        result = write_bundle(preview, destination, force=getattr(args, "force", False))
    except BundleExistsError as error:
        print(f"fallback-doctor: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except OutputIsTargetFileError as error:
        print(f"fallback-doctor: refused: {error.strerror}", file=sys.stderr)
        return EXIT_REFUSED
    except OSError as error:
        print(f"fallback-doctor: the bundle could not be written: {error}", file=sys.stderr)
        return EXIT_REFUSED
    from fallback_doctor.cli.common import default_language
    from fallback_doctor.core.door import label

    lang = getattr(args, "lang", None) or default_language()
    count = sum(preview.redaction_counts().values())
    key = "bundle.redactions." + ("off" if not options.redact else "one" if count == 1 else "many")
    said = label(key, lang, count=count)
    print(label("bundle.written", lang, path=result.path, size=result.size, redactions=said), file=sys.stderr)
    if result.mapping_path is not None:
        print(
            f"fallback-doctor: pseudonym mapping kept on this machine: {result.mapping_path}", file=sys.stderr
        )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bundle`` on its own (``python -m fallback_doctor.cli.bundle show FILE``)."""
    parser = argparse.ArgumentParser(prog="fallback-doctor")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_parser(subparsers)
    arguments = parser.parse_args(["bundle", *(sys.argv[1:] if argv is None else argv)])
    return int(arguments.handler(arguments))


if __name__ == "__main__":
    sys.exit(main())
