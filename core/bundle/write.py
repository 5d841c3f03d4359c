"""Step 2 of an export: the zip, written atomically, never over an existing file unless asked.

The zip is built in memory (the bundle is bounded), written to a temporary file beside the
destination, and moved into place only when complete. The pseudonym mapping is saved on this
machine (never in the bundle). By hand: ``unzip -l FILE.zip``; ``sha256sum`` against the manifest.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.bundle.manifest import (
    FLEET_HOST_KEY,
    MANIFEST_NAME,
    ManifestInfo,
    MemberEntry,
    build_manifest,
    fleet_host_digest,
    safe_member_name,
    said_cut,
    sha256_of,
)
from fallback_doctor.core.bundle.protected import OutputIsTargetFileError, refusal
from fallback_doctor.core.redaction.pseudonyms import save_mapping
from fallback_doctor.core.redaction.redact import MARKER

if TYPE_CHECKING:
    from fallback_doctor.core.bundle.preview import BundlePreview


@dataclass(frozen=True)
class ExportResult:
    """A written bundle: where, its manifest, and where the pseudonym mapping was kept."""

    path: Path
    manifest: dict[str, Any]
    mapping_path: Path | None
    size: int


class BundleExistsError(FileExistsError):
    """The destination exists and ``force`` was not given."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8(text: str) -> bytes:
    """``text`` as valid UTF-8: a lone surrogate (from a hostile bareun.json) becomes its escape ``\\udXXX``.

    In a JSON member it stands inside a string, where the escape means the same character.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text).encode("utf-8")


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
    from fallback_doctor.core.flow.diagnosis import TOOL_VERSION

    entries: list[MemberEntry] = []
    payloads: list[tuple[str, bytes]] = []
    for member in preview.included():
        data = utf8(member.redacted)
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
    redaction: dict[str, object]
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
        said_cut(member.name, "bundle.cut.by_person")
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
        extra={"report_schema_version": preview.document.get("schema_version"), **_fleet_host(preview)},
    )
    manifest = build_manifest(info, entries)
    stamp = _zip_time(preview.created)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, data in [
            (MANIFEST_NAME, utf8(json.dumps(manifest, ensure_ascii=False, indent=2))),
            *payloads,
        ]:
            info_entry = zipfile.ZipInfo(name, date_time=stamp)
            info_entry.compress_type = zipfile.ZIP_DEFLATED
            info_entry.external_attr = (0o100644 & 0xFFFF) << 16
            info_entry.create_system = 3
            archive.writestr(info_entry, data)
    return buffer.getvalue(), manifest


def _fleet_host(preview: BundlePreview) -> dict[str, str]:
    """The manifest's fleet-host record: the sha256 of the inventory name, when one was given."""
    name = preview.options.fleet_host
    return {FLEET_HOST_KEY: fleet_host_digest(name)} if name is not None else {}


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
    existing file is untouched), :class:`OutputIsTargetFileError` when it is one of the target's
    files or inside one of its folders (even with ``force``), OSError when it cannot be written
    (no partial file is left).
    """
    target = Path(destination)
    refused = refusal(target, preview.protected)
    if refused is not None:  # --force or not: the tool changes none of the target's files
        raise OutputIsTargetFileError(errno.EPERM, refused)
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
