"""Export: the report and what was read, redacted, into one zip written atomically.

Two steps, so people see what will leave the machine before it does:

1. :func:`prepare_bundle` (document, extra members given as data, options) -> :class:`BundlePreview`:
   every member's original text and its redacted text, each redaction's span (in the original)
   and kind, what was cut to stay within the bounds. Nothing is written. The wizard shows it;
   ``--dry-run`` prints :func:`render_preview`. Per-member include/exclude and "redact more"
   are options: call :func:`prepare_bundle` again with them (it is cheap).
2. :func:`write_bundle` (preview, destination, force) -> :class:`ExportResult`: the zip is written
   to a temporary file beside the destination and moved into place only when complete; an
   existing file is never replaced unless ``force``. The pseudonym mapping is saved on this
   machine (never in the bundle).

A bundle holds manifest.json, report.json, report.html, environment.json, samples.csv (when
given), the configuration as read (config/…), log excerpts and tails (logs/…) and probe output
(probe/…). By hand: ``unzip -l FILE.zip`` lists it, ``sha256sum`` checks it against the manifest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fallback_doctor.core.bundle.content import to_text
from fallback_doctor.core.bundle.html import render_html
from fallback_doctor.core.bundle.manifest import (
    ENVIRONMENT_NAME,
    HTML_NAME,
    MANIFEST_NAME,
    REPORT_NAME,
    SAMPLES_NAME,
    Cut,
    check_member_name,
    safe_member_name,
    said_cut,
)
from fallback_doctor.core.bundle.preview import (
    REQUIRED_MEMBERS,
    BundleOptions,
    BundlePreview,
    ExtraMember,
    Limits,
    MemberPreview,
)
from fallback_doctor.core.bundle.protected import target_paths
from fallback_doctor.core.bundle.record import environment_record, samples_in_document
from fallback_doctor.core.bundle.sources import read_source
from fallback_doctor.core.bundle.write import ExportResult, write_bundle
from fallback_doctor.core.redaction.json_spans import place, pretty
from fallback_doctor.core.redaction.pseudonyms import Pseudonyms
from fallback_doctor.core.redaction.redact import Redactor
from fallback_doctor.core.redaction.redaction import Redaction

# --------------------------------------------------------------------------------------------
# Step 1: the preview


@dataclass
class _Candidate:
    name: str
    kind: str
    source: str | None
    form: str
    original_size: int
    cut: int
    text: str | None = None
    json_value: Any = None


@dataclass
class _Redacted:
    """The members as they will be, and what later members are made from."""

    members: list[MemberPreview] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    samples: str | None = None


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def prepare_bundle(
    document: dict[str, Any],
    extras: Sequence[ExtraMember] = (),
    options: BundleOptions | None = None,
    pseudonyms: Pseudonyms | None = None,
) -> BundlePreview:
    """Everything an export would write, redacted (unless ``options.redact`` is False); writes nothing."""
    options = options or BundleOptions()
    created = options.created or _now()
    candidates, cuts = _candidates(document, extras, options.limits)
    cuts.extend(_bound_candidates(candidates, options.limits.total))
    redactor = Redactor(
        pseudonyms,
        extra_literals=options.redact_more,
        users=options.users,
        hosts=options.hosts,
        use_local_identity=options.use_local_identity,
    )
    if options.redact:
        for candidate in candidates:
            if candidate.json_value is not None:
                redactor.learn_json(candidate.json_value)
            elif candidate.text is not None:
                redactor.learn(candidate.text)
            if candidate.source:
                redactor.learn(candidate.source)
    result = _Redacted(document=document)
    final_names: set[str] = {REPORT_NAME, ENVIRONMENT_NAME, HTML_NAME, MANIFEST_NAME, SAMPLES_NAME}
    for candidate in candidates:
        result.members.append(_member(candidate, redactor, options, final_names, result))
    _add_derived(result, options)
    members, total_cuts = _bound_total(result.members, options.limits.total)
    cuts = _merged_cuts([*cuts, *total_cuts])
    read_here = [extra.source for extra in extras if extra.kind in ("config", "log") and extra.source]
    protected = target_paths(document, read_here)
    return BundlePreview(
        tuple(members), options, created, result.document, redactor.pseudonyms, tuple(cuts), protected
    )


def _candidates(
    document: dict[str, Any], extras: Sequence[ExtraMember], limits: Limits
) -> tuple[list[_Candidate], list[Cut]]:
    """The report, the environment record and each extra decoded to text within its bound."""
    candidates: list[_Candidate] = [
        _Candidate(REPORT_NAME, "report", None, "json", 0, 0, json_value=document),
        _Candidate(
            ENVIRONMENT_NAME, "environment", None, "json", 0, 0, json_value=environment_record(document)
        ),
    ]
    cuts: list[Cut] = []
    used_names = {REPORT_NAME, ENVIRONMENT_NAME, HTML_NAME, MANIFEST_NAME}
    for extra in extras:
        kind = extra.kind if extra.kind in ("config", "log", "probe", "samples") else "other"
        name = SAMPLES_NAME if kind == "samples" else _member_name(extra.name, kind)
        if name.endswith(".gz") and isinstance(extra.data, bytes) and extra.data.startswith(b"\x1f\x8b"):
            name = name[:-3]
        name = _unique(name, used_names)
        used_names.add(name)
        if extra.refused is not None:
            cuts.append(
                said_cut(name, "bundle.cut.not_taken", source=extra.source or extra.name, why=extra.refused)
            )
            continue
        try:
            decoded = to_text(extra.data, limits.for_kind(kind), tail=(kind == "log"))
        except (ValueError, OSError, EOFError) as error:
            cuts.append(said_cut(name, "bundle.cut.unreadable", error=str(error)))
            continue
        if decoded.cut:
            key = "bundle.cut.log_end" if kind == "log" else "bundle.cut.start"
            kept = decoded.original_size - decoded.cut
            cuts.append(said_cut(name, key, decoded.original_size, kept, bound=limits.for_kind(kind)))
        candidates.append(
            _Candidate(
                name, kind, extra.source, decoded.form, decoded.original_size, decoded.cut, text=decoded.text
            )
        )
    return candidates, cuts


def _member(
    candidate: _Candidate,
    redactor: Redactor,
    options: BundleOptions,
    final_names: set[str],
    result: _Redacted,
) -> MemberPreview:
    """One member as it will be written (its redacted text and its spans in the original)."""
    name = candidate.name
    if options.redact and candidate.json_value is None and candidate.kind != "samples":
        # A file name can name a person or a host too ("alice-server.log").
        renamed = _member_name(redactor.redact(name).text, candidate.kind)
        name = renamed if renamed == name else _unique(renamed, final_names)
    final_names.add(name)
    included = not ({candidate.name, name} & options.exclude) or name in REQUIRED_MEMBERS
    source = candidate.source
    spans: list[Redaction] = []
    if candidate.json_value is not None:
        original, offsets = pretty(candidate.json_value)
        value = candidate.json_value
        if options.redact:
            value, found = redactor.redact_json(candidate.json_value)
            spans = place(found, offsets)
        redacted = json.dumps(value, ensure_ascii=False, indent=2)
        if candidate.name == REPORT_NAME:
            result.document = value
        elif candidate.name == ENVIRONMENT_NAME:
            result.environment = value
    else:
        original = redacted = candidate.text or ""
        if options.redact:
            redacted_text = redactor.redact(original)
            redacted, spans = redacted_text.text, list(redacted_text.redactions)
            if source:
                source = redactor.redact(source).text
        if candidate.kind == "samples" and included:
            result.samples = redacted
    return MemberPreview(
        name=name,
        kind=candidate.kind,
        original=original,
        redacted=redacted,
        redactions=tuple(spans),
        included=included,
        source=source,
        form=candidate.form,
        original_size=candidate.original_size or len(original.encode("utf-8", "surrogatepass")),
        cut=candidate.cut,
    )


def _derived(name: str, kind: str, text: str, included: bool) -> MemberPreview:
    size = len(text.encode("utf-8", "surrogatepass"))
    return MemberPreview(name, kind, text, text, (), included, None, "utf-8", size, 0, True)


def _add_derived(result: _Redacted, options: BundleOptions) -> None:
    """samples.csv from the document's series (when not given), and report.html from the redacted report."""
    if not result.samples:
        result.samples = samples_in_document(result.document)
        if result.samples:
            included = SAMPLES_NAME not in options.exclude
            result.members.append(_derived(SAMPLES_NAME, "samples", result.samples, included))
    html_text = render_html(
        result.document,
        lang=options.lang,
        samples_csv=result.samples,
        environment_record=result.environment or None,
        redacted=options.redact,
    )
    result.members.insert(1, _derived(HTML_NAME, "html", html_text, HTML_NAME not in options.exclude))


def _member_name(name: str, kind: str) -> str:
    folder = {"config": "config", "log": "logs", "probe": "probe"}.get(kind, "files")
    cleaned = safe_member_name(name)
    if "/" not in cleaned:
        cleaned = f"{folder}/{cleaned}"
    try:
        return check_member_name(cleaned)
    except ValueError:
        return f"{folder}/member"


def _unique(name: str, used: set[str]) -> str:
    if name not in used:
        return name
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    number = 2
    while True:
        candidate = f"{stem}-{number}.{suffix}" if suffix else f"{stem}-{number}"
        if candidate not in used:
            return candidate
        number += 1


def _merged_cuts(cuts: list[Cut]) -> list[Cut]:
    """One cut per member and reason: shortened before redaction and again after it is one cut."""
    merged: dict[tuple[str, str], Cut] = {}
    for cut in cuts:
        earlier = merged.get((cut.member, cut.why))
        merged[(cut.member, cut.why)] = cut if earlier is None else replace(earlier, kept_size=cut.kept_size)
    return list(merged.values())


def _shortened(text: str, keep: int, kind: str) -> tuple[str, int]:
    """``text`` within ``keep`` UTF-8 bytes (a log's end, other files' start) and its size then."""
    kept = to_text(text, keep, tail=kind == "log").text
    return kept, len(kept.encode("utf-8", "surrogatepass"))


def _bound_candidates(candidates: list[_Candidate], total: int) -> list[Cut]:
    """Shorten the largest texts before they are redacted, so memory stays bounded by ``total``.

    The same rule as :func:`_bound_total` (the end of a log is kept, the start of other files),
    applied to the texts as read: redaction then never holds more than the bundle can carry.
    """
    cuts: list[Cut] = []
    sizes = {id(c): len(c.text.encode("utf-8", "surrogatepass")) for c in candidates if c.text is not None}
    current = sum(sizes.values())
    trimmable = [
        c for c in candidates if c.text is not None and c.kind in ("log", "other", "probe", "config")
    ]
    for candidate in sorted(trimmable, key=lambda c: -sizes[id(c)]):
        if current <= total or candidate.text is None:
            break
        old = sizes[id(candidate)]
        keep = max(0, old - (current - total))
        candidate.text, kept = _shortened(candidate.text, keep, candidate.kind)
        candidate.cut += old - kept
        key = "bundle.cut.total_shortened" if keep else "bundle.cut.total_emptied"
        cuts.append(said_cut(candidate.name, key, old, kept, total=total))
        current -= old - kept
    return cuts


def _bound_total(members: list[MemberPreview], total: int) -> tuple[list[MemberPreview], list[Cut]]:
    """Shorten the largest logs and other files until everything fits in ``total`` bytes."""
    cuts: list[Cut] = []

    def size(member: MemberPreview) -> int:
        return len(member.redacted.encode("utf-8", "surrogatepass")) if member.included else 0

    current = sum(size(member) for member in members)
    if current <= total:
        return members, cuts
    order = sorted(
        (index for index, member in enumerate(members) if member.kind in ("log", "other", "probe", "config")),
        key=lambda index: -size(members[index]),
    )
    for index in order:
        if current <= total:
            break
        member = members[index]
        excess = current - total
        old = size(member)
        keep = max(0, old - excess)
        text, kept = _shortened(member.redacted, keep, member.kind)
        if keep == 0:
            members[index] = replace(member, included=False)
            cuts.append(said_cut(member.name, "bundle.cut.total_left_out", old, 0))
        else:
            members[index] = replace(member, redacted=text)
            cuts.append(said_cut(member.name, "bundle.cut.total_shortened", old, kept, total=total))
        current -= old - size(members[index])
    return members, cuts


def export_bundle(
    document: dict[str, Any],
    destination: str | os.PathLike[str],
    extras: Sequence[ExtraMember] = (),
    options: BundleOptions | None = None,
    *,
    force: bool = False,
    mapping_directory: Path | None = None,
) -> ExportResult:
    """:func:`prepare_bundle` then :func:`write_bundle`."""
    preview = prepare_bundle(document, extras, options)
    return write_bundle(preview, destination, force=force, mapping_directory=mapping_directory)


# --------------------------------------------------------------------------------------------
# What a diagnosis read, as extra members


def extras_from_document(document: dict[str, Any], limits: Limits | None = None) -> list[ExtraMember]:
    """The target's configuration and logs named in the document, read now (bounded; logs by their end).

    Only the application's own files are taken (core/bundle/sources.py): a credential file, a
    log in a system folder, a symlink leaving the log folder, a FIFO, a device or a binary file
    comes back as an ExtraMember with ``refused`` saying why (the preview lists it), and no data.
    By hand: `cat CONFIG`, `tail -c 4M LOG`.
    """
    limits = limits or Limits()
    environment = document.get("environment") if isinstance(document.get("environment"), dict) else {}
    assert isinstance(environment, dict)
    target = environment.get("target") if isinstance(environment.get("target"), dict) else {}
    log = environment.get("log") if isinstance(environment.get("log"), dict) else {}
    assert isinstance(target, dict) and isinstance(log, dict)
    extras: list[ExtraMember] = []
    config_path = target.get("config_path")
    if isinstance(config_path, str):
        extras.append(_extra(config_path, "config", limits.config, tail=False))
    log_paths: list[str] = [p for p in (target.get("log_paths") or []) if isinstance(p, str)]
    log_paths += [p for p in (log.get("sources") or []) if isinstance(p, str) and p not in log_paths]
    for path in log_paths[:8]:
        if os.path.lexists(path):
            extras.append(_extra(path, "log", limits.log, tail=True))
    return [extra for extra in extras if extra.data or extra.refused]


def _extra(path: str, kind: str, limit: int, *, tail: bool) -> ExtraMember:
    read = read_source(path, limit, kind=kind, tail=tail)
    if read.data is None:
        return ExtraMember(Path(path).name, b"", kind, path, refused=read.refused or "could not be read")
    return ExtraMember(Path(path).name, read.data, kind, path)
