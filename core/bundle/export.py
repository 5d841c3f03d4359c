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

import contextlib
import csv
import io
import json
import os
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
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
    ManifestInfo,
    MemberEntry,
    build_manifest,
    check_member_name,
    safe_member_name,
    sha256_of,
)
from fallback_doctor.core.bundle.pseudonyms import Pseudonyms, save_mapping
from fallback_doctor.core.bundle.redact import MARKER, Redaction, Redactor

MiB = 1024 * 1024

REQUIRED_MEMBERS = (REPORT_NAME,)
"""Members that cannot be left out (a bundle without its report cannot be opened)."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what goes into a bundle (UTF-8 bytes, before compression)."""

    log: int = 2 * MiB
    config: int = 1 * MiB
    probe: int = 1 * MiB
    samples: int = 8 * MiB
    other: int = 2 * MiB
    total: int = 32 * MiB

    def for_kind(self, kind: str) -> int:
        """The bound of one member of ``kind``."""
        return (
            int(getattr(self, kind, self.other))
            if kind in ("log", "config", "probe", "samples")
            else self.other
        )


@dataclass(frozen=True)
class ExtraMember:
    """Something read on this machine that goes into the bundle besides the report.

    ``name`` is its path in the bundle ("config/bareun.yml", "logs/server.log.gz",
    "probe/as_is.stderr.txt", "samples.csv"); ``data`` the bytes as read (gzip, UTF-16 … are
    decoded) or text; ``kind`` "config", "log", "probe", "samples" or "other" (logs keep their
    end when cut, the others their start); ``source`` where it was read from.
    """

    name: str
    data: bytes | str
    kind: str = "other"
    source: str | None = None


@dataclass(frozen=True)
class BundleOptions:
    """Choices for one export."""

    redact: bool = True
    """False only when asked deliberately (``--no-redact``); the manifest says so."""
    exclude: frozenset[str] = frozenset()
    """Members to leave out (by name in the bundle); report.json cannot be left out."""
    redact_more: tuple[str, ...] = ()
    """Extra literal strings to mask wherever they appear."""
    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    """Identities known beforehand (this machine's own user and host name are always added)."""
    use_local_identity: bool = True
    lang: str = "en"
    """Language of report.html."""
    limits: Limits = field(default_factory=Limits)
    created: str | None = None
    """Creation time (ISO 8601, UTC); now when None."""


@dataclass(frozen=True)
class MemberPreview:
    """One member as it would be written: original and redacted text, each redaction's span."""

    name: str
    kind: str
    original: str
    """The text as read (for JSON members: pretty-printed), what the spans refer to."""
    redacted: str
    """What goes into the zip."""
    redactions: tuple[Redaction, ...]
    """Spans refer to ``original``."""
    included: bool = True
    source: str | None = None
    form: str = "utf-8"
    original_size: int = 0
    cut: int = 0
    """Bytes left out to stay within the bound."""
    derived: bool = False
    """Made from other members (report.html): it has no redactions of its own."""


@dataclass(frozen=True)
class BundlePreview:
    """Everything an export would write, for people to check first. Nothing is written yet."""

    members: tuple[MemberPreview, ...]
    options: BundleOptions
    created: str
    document: dict[str, Any]
    """The report document as it will be in the bundle (redacted)."""
    pseudonyms: Pseudonyms
    cuts: tuple[Cut, ...] = ()

    def member(self, name: str) -> MemberPreview:
        """The member called ``name``."""
        for member in self.members:
            if member.name == name:
                return member
        raise KeyError(name)

    def included(self) -> list[MemberPreview]:
        """The members that will be written."""
        return [member for member in self.members if member.included]

    def redaction_counts(self) -> dict[str, int]:
        """How many redactions of each kind, over the included members."""
        counts: Counter[str] = Counter()
        for member in self.included():
            counts.update(redaction.kind for redaction in member.redactions)
        return dict(sorted(counts.items()))


@dataclass(frozen=True)
class ExportResult:
    """A written bundle: where, its manifest, and where the pseudonym mapping was kept."""

    path: Path
    manifest: dict[str, Any]
    mapping_path: Path | None
    size: int


class BundleExistsError(FileExistsError):
    """The destination exists and ``force`` was not given."""


# --------------------------------------------------------------------------------------------
# Pretty JSON with the offset of every leaf, so redactions in JSON members get real spans.


def _pretty(value: Any) -> tuple[str, dict[str, tuple[int, int]]]:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` and path -> (start, end) of each leaf token."""
    out: list[str] = []
    offsets: dict[str, tuple[int, int]] = {}
    length = 0

    def emit(text: str) -> None:
        nonlocal length
        out.append(text)
        length += len(text)

    def walk(item: Any, path: str, indent: int) -> None:
        if isinstance(item, dict) and item:
            emit("{")
            for number, (key, child) in enumerate(item.items()):
                emit(("," if number else "") + "\n" + "  " * (indent + 1))
                child_path = f"{path}.{key}" if path else str(key)
                token = json.dumps(str(key), ensure_ascii=False)
                offsets[child_path + "#key"] = (length, length + len(token))
                emit(token + ": ")
                walk(child, child_path, indent + 1)
            emit("\n" + "  " * indent + "}")
        elif isinstance(item, list) and item:
            emit("[")
            for number, child in enumerate(item):
                emit(("," if number else "") + "\n" + "  " * (indent + 1))
                walk(child, f"{path}[{number}]", indent + 1)
            emit("\n" + "  " * indent + "]")
        else:
            token = json.dumps(item, ensure_ascii=False)
            offsets[path] = (length, length + len(token))
            emit(token)

    walk(value, "", 0)
    return "".join(out), offsets


def _place(
    redactions: Iterable[Redaction], original: Any, offsets: dict[str, tuple[int, int]]
) -> list[Redaction]:
    """Redactions found inside JSON strings, with spans in the pretty-printed original."""
    placed: list[Redaction] = []
    for redaction in redactions:
        token = offsets.get(redaction.where)
        if token is None:
            continue
        start, end = token
        leaf = _leaf(original, redaction.where)
        if isinstance(leaf, str) and redaction.end > redaction.start:
            inner_start = start + 1 + len(json.dumps(leaf[: redaction.start], ensure_ascii=False)) - 2
            inner_end = start + 1 + len(json.dumps(leaf[: redaction.end], ensure_ascii=False)) - 2
            start, end = inner_start, inner_end
        placed.append(replace(redaction, start=start, end=end))
    placed.sort(key=lambda r: (r.start, r.end))
    return placed


def _leaf(value: Any, path: str) -> Any:
    """The value at ``path`` ("a.b[2].c", "a.b#key" gives the key itself), None when absent."""
    if path.endswith("#key"):
        return path[:-4].rsplit(".", 1)[-1]
    current = value
    for part in _split_path(path):
        if isinstance(part, int):
            if not isinstance(current, list) or part >= len(current):
                return None
            current = current[part]
        else:
            if not isinstance(current, dict) or part not in current:
                return None
            current = current[part]
    return current


def _split_path(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in path.split(".") if path else []:
        name, _, rest = piece.partition("[")
        if name:
            parts.append(name)
        while rest:
            number, _, rest = rest.partition("]")
            parts.append(int(number))
            rest = rest[1:] if rest.startswith("[") else rest
    return parts


# --------------------------------------------------------------------------------------------
# The environment record and samples


def environment_record(document: dict[str, Any]) -> dict[str, Any]:
    """OS, GPU model, driver, CUDA and cuDNN as found, ONNX Runtime and its CUDA build, container, Python.

    Taken from the report's environment (the compatibility guide's advice: record each
    separately). By hand: `nvidia-smi`, `cat /etc/os-release`, `pip show onnxruntime-gpu`.
    """
    env = document.get("environment") if isinstance(document.get("environment"), dict) else {}
    assert isinstance(env, dict)

    def part(name: str) -> dict[str, Any]:
        value = env.get(name)
        return value if isinstance(value, dict) else {}

    platform, driver, device = part("platform"), part("driver"), part("device")
    python, ort, torch, libraries = part("python"), part("onnxruntime"), part("torch"), part("libraries")
    found: dict[str, list[str]] = {"cudart": [], "cublas": [], "cudnn": [], "nvinfer": []}
    for library in libraries.get("inventory") or []:
        if not isinstance(library, dict):
            continue
        name = str(library.get("name") or "")
        for family in found:
            if name.startswith("lib" + family) or name.startswith(family):
                found[family].append(f"{name} ({library.get('version') or '?'}) at {library.get('path')}")
    cuda_driver = driver.get("cuda_driver_version")
    return {
        "os": {
            "name": platform.get("os_name"),
            "system": platform.get("system"),
            "release": platform.get("release"),
            "machine": platform.get("machine"),
        },
        "gpus": [
            {
                "index": gpu.get("index"),
                "name": gpu.get("name"),
                "compute_capability": gpu.get("compute_capability"),
                "memory_total_mib": gpu.get("memory_total_mib"),
                "uuid": gpu.get("uuid"),
            }
            for gpu in driver.get("gpus") or []
            if isinstance(gpu, dict)
        ],
        "driver": {
            "version": driver.get("driver_version") or driver.get("kernel_module_version"),
            "cuda_supported": (
                f"{cuda_driver // 1000}.{(cuda_driver % 1000) // 10}"
                if isinstance(cuda_driver, int)
                else None
            ),
            "nvml_status": driver.get("nvml_status"),
        },
        "cuda_found": found["cudart"] + found["cublas"],
        "cudnn_found": found["cudnn"],
        "tensorrt_found": found["nvinfer"],
        "onnxruntime": {
            "version": ort.get("version"),
            "package": ort.get("build_package_name"),
            "cuda_build": ort.get("cuda_build_version"),
            "providers_in_build": ort.get("providers_in_build"),
            "requires_cuda_major": ort.get("required_cuda_major"),
            "requires_cudnn_major": ort.get("required_cudnn_major"),
        },
        "torch": {"version": torch.get("version"), "cuda": torch.get("cuda_version")} if torch else None,
        "container": {
            "kind": device.get("container"),
            "wsl": device.get("wsl"),
            "nvidia_visible_devices": device.get("nvidia_visible_devices"),
        },
        "python": {"version": python.get("version"), "executable": python.get("executable")},
    }


def samples_csv_from_rows(rows: Sequence[dict[str, Any]], fields: Sequence[str] | None = None) -> str:
    """samples.csv from sample dicts (``GpuSample.to_dict()``); empty cells where a value is None."""
    if fields is None:
        from fallback_doctor.core.sampling.sample import SAMPLE_FIELDS

        fields = SAMPLE_FIELDS
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: ("" if row.get(key) is None else row.get(key)) for key in fields})
    return buffer.getvalue()


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
    limits = options.limits
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
        try:
            decoded = to_text(extra.data, limits.for_kind(kind), tail=(kind == "log"))
        except (ValueError, OSError, EOFError) as error:
            cuts.append(Cut(name, f"left out: could not be read ({error})"))
            continue
        if decoded.cut:
            why = "only the end of the log is kept" if kind == "log" else "only the start is kept"
            cuts.append(
                Cut(
                    name,
                    f"{why} (bound {limits.for_kind(kind)} bytes)",
                    decoded.original_size,
                    decoded.original_size - decoded.cut,
                )
            )
        candidates.append(
            _Candidate(
                name, kind, extra.source, decoded.form, decoded.original_size, decoded.cut, text=decoded.text
            )
        )

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

    members: list[MemberPreview] = []
    redacted_document: dict[str, Any] = document
    redacted_environment: dict[str, Any] = {}
    samples_text: str | None = None
    final_names: set[str] = {REPORT_NAME, ENVIRONMENT_NAME, HTML_NAME, MANIFEST_NAME, SAMPLES_NAME}
    for candidate in candidates:
        name = candidate.name
        if options.redact and candidate.json_value is None and candidate.kind != "samples":
            # A file name can name a person or a host too ("alice-server.log").
            renamed = _member_name(redactor.redact(name).text, candidate.kind)
            name = renamed if renamed == name else _unique(renamed, final_names)
        final_names.add(name)
        included = not ({candidate.name, name} & options.exclude) or name in REQUIRED_MEMBERS
        source = candidate.source
        if candidate.json_value is not None:
            original, offsets = _pretty(candidate.json_value)
            if options.redact:
                value, found = redactor.redact_json(candidate.json_value)
                spans = _place(found, candidate.json_value, offsets)
            else:
                value, spans = candidate.json_value, []
            redacted = json.dumps(value, ensure_ascii=False, indent=2)
            if candidate.name == REPORT_NAME:
                redacted_document = value
            elif candidate.name == ENVIRONMENT_NAME:
                redacted_environment = value
        else:
            original = candidate.text or ""
            if options.redact:
                result = redactor.redact(original)
                redacted, spans = result.text, list(result.redactions)
                if source:
                    source = redactor.redact(source).text
            else:
                redacted, spans = original, []
            if candidate.kind == "samples" and included:
                samples_text = redacted
        members.append(
            MemberPreview(
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
        )
    if not samples_text:
        samples_text = _samples_in_document(redacted_document)
        if samples_text:
            members.append(
                MemberPreview(
                    SAMPLES_NAME,
                    "samples",
                    samples_text,
                    samples_text,
                    (),
                    SAMPLES_NAME not in options.exclude,
                    None,
                    "utf-8",
                    len(samples_text),
                    0,
                    True,
                )
            )
    html_text = render_html(
        redacted_document,
        lang=options.lang,
        samples_csv=samples_text,
        environment_record=redacted_environment or None,
        redacted=options.redact,
    )
    members.insert(
        1,
        MemberPreview(
            HTML_NAME,
            "html",
            html_text,
            html_text,
            (),
            HTML_NAME not in options.exclude,
            None,
            "utf-8",
            len(html_text.encode("utf-8")),
            0,
            True,
        ),
    )
    members, total_cuts = _bound_total(members, limits.total)
    cuts.extend(total_cuts)
    return BundlePreview(
        tuple(members), options, created, redacted_document, redactor.pseudonyms, tuple(cuts)
    )


def _samples_in_document(document: dict[str, Any]) -> str | None:
    """samples.csv from a sample list the document carries (``samples`` or a probe's ``series``)."""
    candidates: list[Any] = [document.get("samples")]
    for key in ("probe", "inference", "sampling"):
        value = document.get(key)
        if isinstance(value, dict):
            candidates.extend(
                [
                    value.get("samples"),
                    (value.get("series") or {}).get("samples")
                    if isinstance(value.get("series"), dict)
                    else None,
                ]
            )
    for candidate in candidates:
        if isinstance(candidate, list) and candidate and all(isinstance(row, dict) for row in candidate):
            return samples_csv_from_rows(candidate)
    return None


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
        encoded = member.redacted.encode("utf-8", "surrogatepass")
        kept = encoded[len(encoded) - keep :] if member.kind == "log" else encoded[:keep]
        text = kept.decode("utf-8", errors="ignore")
        if keep == 0:
            members[index] = replace(member, included=False)
            cuts.append(Cut(member.name, "left out: the bundle's total size bound was reached", old, 0))
        else:
            members[index] = replace(member, redacted=text)
            cuts.append(
                Cut(
                    member.name,
                    f"shortened: the bundle's total size bound ({total} bytes) was reached",
                    old,
                    len(kept),
                )
            )
        current -= old - size(members[index])
    return members, cuts


def render_preview(preview: BundlePreview) -> str:
    """What ``--dry-run`` prints: every file, then every redaction (kind, file, masked preview)."""
    lines = [
        "Bundle preview (nothing written):",
        "  redaction: "
        + ("on" if preview.options.redact else "OFF (--no-redact): secrets may leave this machine"),
        "",
        "Files:",
    ]
    for member in preview.members:
        state = "" if member.included else "  (left out)"
        size = len(member.redacted.encode("utf-8", "surrogatepass"))
        detail = f", read as {member.form}" if member.form not in ("utf-8", "json") else ""
        redactions = f", {len(member.redactions)} redaction(s)" if member.redactions else ""
        lines.append(f"  {member.name}  {size} bytes{detail}{redactions}{state}")
    lines.append("  manifest.json")
    if preview.cuts:
        lines.append("")
        lines.append("Cut to stay within bounds:")
        for cut in preview.cuts:
            lines.append(f"  {cut.member}: {cut.why}")
    lines.append("")
    total = sum(len(member.redactions) for member in preview.included())
    lines.append(f"Redactions ({total}):")
    for member in preview.included():
        for redaction in member.redactions:
            where = f" at {redaction.where}" if redaction.where else f" at {redaction.start}-{redaction.end}"
            lines.append(
                f"  {redaction.kind:<20} {member.name}{where}: {redaction.preview} -> {redaction.replacement}"
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Step 2: writing


def _zip_time(created: str) -> tuple[int, int, int, int, int, int]:
    try:
        moment = datetime.fromisoformat(created)
    except ValueError:
        moment = datetime.now(UTC)
    moment = max(moment, datetime(1980, 1, 1, tzinfo=moment.tzinfo))
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def build_bundle_bytes(
    preview: BundlePreview, mapping_name: str | None = None
) -> tuple[bytes, dict[str, Any]]:
    """The zip's bytes and its manifest (in memory; the bundle is bounded)."""
    from fallback_doctor.core.diagnosis import TOOL_VERSION

    entries: list[MemberEntry] = []
    payloads: list[tuple[str, bytes]] = []
    for member in preview.included():
        data = member.redacted.encode("utf-8", "surrogatepass")
        payloads.append((member.name, data))
        entries.append(
            MemberEntry(
                member.name,
                len(data),
                sha256_of(data),
                member.kind,
                member.source,
                member.form,
                len(member.redactions),
            )
        )
    counts = preview.redaction_counts()
    redaction: dict[str, Any]
    if preview.options.redact:
        redaction = {
            "enabled": True,
            "counts": counts,
            "marker": MARKER,
            "pseudonyms": "identities are replaced by pseudonyms (host-1, user-1, ip-1 …); the mapping "
            "stays on the machine the bundle was made on",
            "mapping_file": mapping_name,
            "extra_literals": len(preview.options.redact_more),
        }
    else:
        redaction = {
            "enabled": False,
            "note": "redaction was turned off deliberately (--no-redact): this bundle may contain secrets, "
            "user and host names, and addresses as they were on the machine",
        }
    excluded = tuple(
        Cut(member.name, "left out by the person who made the bundle")
        for member in preview.members
        if not member.included and not any(cut.member == member.name for cut in preview.cuts)
    )
    target = preview.document.get("target") if isinstance(preview.document.get("target"), dict) else {}
    environment = preview.document.get("environment")
    target_facts = environment.get("target") if isinstance(environment, dict) else None
    info = ManifestInfo(
        tool_version=TOOL_VERSION,
        created=preview.created,
        target={**(target or {}), "facts": target_facts} if target_facts else dict(target or {}),
        redaction=redaction,
        cut=preview.cuts,
        excluded=excluded,
        report_created=preview.document.get("created"),
        extra={"report_schema_version": preview.document.get("schema_version")},
    )
    manifest = build_manifest(info, entries)
    stamp = _zip_time(preview.created)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, data in [
            (MANIFEST_NAME, json.dumps(manifest, ensure_ascii=False, indent=2).encode("utf-8")),
            *payloads,
        ]:
            info_entry = zipfile.ZipInfo(name, date_time=stamp)
            info_entry.compress_type = zipfile.ZIP_DEFLATED
            info_entry.external_attr = (0o100644 & 0xFFFF) << 16
            info_entry.create_system = 3
            archive.writestr(info_entry, data)
    return buffer.getvalue(), manifest


def write_bundle(
    preview: BundlePreview,
    destination: str | os.PathLike[str],
    *,
    force: bool = False,
    keep_mapping: bool = True,
    mapping_directory: Path | None = None,
) -> ExportResult:
    """Write the bundle atomically: a temporary file beside ``destination``, moved into place when complete.

    Raises :class:`BundleExistsError` when ``destination`` exists and ``force`` is False (the
    existing file is untouched), OSError when it cannot be written (no partial file is left).
    """
    target = Path(destination)
    if target.exists() and not force:
        raise BundleExistsError(f"{target} already exists (use --force to replace it)")
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a directory")
    mapping_name: str | None = None
    if preview.options.redact and keep_mapping and preview.pseudonyms.count():
        stamp = preview.created.replace(":", "").replace("-", "").replace("+0000", "Z")
        mapping_name = f"{stamp}-{safe_member_name(target.stem)}"
    data, manifest = build_bundle_bytes(preview, mapping_name + ".json" if mapping_name else None)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, 0o644)
        if force:
            os.replace(temp, target)
        else:
            _place_without_replacing(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    mapping_path = None
    if mapping_name:
        mapping_path = save_mapping(preview.pseudonyms, mapping_name, mapping_directory)
    return ExportResult(target, manifest, mapping_path, len(data))


def _place_without_replacing(temp: Path, target: Path) -> None:
    """Move ``temp`` to ``target`` only if nothing is there (a hard link fails when it exists)."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise BundleExistsError(f"{target} already exists (use --force to replace it)") from None
    except OSError:
        # No hard links here (some network and FAT file systems): check, then rename.
        if target.exists():
            raise BundleExistsError(f"{target} already exists (use --force to replace it)") from None
        os.replace(temp, target)
        return
    with contextlib.suppress(OSError):
        temp.unlink()


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
        data = _read_bounded(config_path, limits.config, tail=False)
        if data is not None:
            extras.append(ExtraMember(Path(config_path).name, data, "config", config_path))
    log_paths: list[str] = [p for p in (target.get("log_paths") or []) if isinstance(p, str)]
    log_paths += [p for p in (log.get("sources") or []) if isinstance(p, str) and p not in log_paths]
    for path in log_paths[:8]:
        data = _read_bounded(path, limits.log, tail=True)
        if data is not None:
            extras.append(ExtraMember(Path(path).name, data, "log", path))
    return extras


def _read_bounded(path: str, limit: int, tail: bool) -> bytes | None:
    try:
        with open(path, "rb") as stream:
            if path.endswith(".gz"):
                return stream.read(64 * MiB)
            if tail:
                stream.seek(0, os.SEEK_END)
                size = stream.tell()
                stream.seek(max(0, size - limit))
            return stream.read(limit)
    except OSError:
        return None
