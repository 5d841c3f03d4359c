"""Opening a bundle made elsewhere: an untrusted zip, read into memory within limits.

Refused, each with a message naming the member: path traversal (``..``), absolute paths and
drive letters, backslashes, links and other non-regular entries (zip external attributes),
directory entries, encrypted members, unknown compression, duplicate names (also differing only
in case), entries whose data overlap (overlapping-entry zip bombs), zip bombs by size (each member
and the total, declared and actually inflated) and by compression ratio, too many members,
malformed JSON, unknown schema versions. Nothing is ever extracted to disk: members are read
into memory, so nothing can be written outside a private directory. By hand: ``unzip -l FILE``,
``unzip -t FILE``.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from fallback_doctor.core.bundle.manifest import (
    KNOWN_REPORT_VERSIONS,
    MANIFEST_NAME,
    REPORT_NAME,
    REPORT_SCHEMA,
    SAMPLES_NAME,
    ManifestError,
    UnsafeNameError,
    check_member_name,
    sha256_of,
    validate_manifest,
)
from fallback_doctor.core.platform.files import NotARegularFileError, open_regular_file

MiB = 1024 * 1024


@dataclass(frozen=True)
class OpenLimits:
    """How much of an untrusted zip is read at most."""

    max_file: int = 512 * MiB
    max_members: int = 512
    max_member: int = 64 * MiB
    max_total: int = 256 * MiB
    max_ratio: float = 200.0
    """Uncompressed / compressed size above which a member (larger than ``ratio_floor``) is a bomb."""
    ratio_floor: int = 64 * 1024


class BundleRefusedError(ValueError):
    """The file is not a bundle this tool will open; ``member`` names the member at fault."""

    def __init__(self, message: str, member: str | None = None, reason: str = "refused") -> None:
        """``reason``: "not_a_bundle", "unsafe", "bomb", "corrupt", "malformed", "version"."""
        super().__init__(message)
        self.member = member
        self.reason = reason


@dataclass(frozen=True)
class OpenedBundle:
    """A bundle read into memory: its manifest, its report document and every member's bytes."""

    path: Path
    manifest: dict[str, Any]
    document: dict[str, Any]
    members: dict[str, bytes]
    integrity_problems: tuple[str, ...] = field(default=())
    """Members whose size or sha256 differ from the manifest, or that it does not list."""

    def text(self, name: str) -> str:
        """A member as text (members are UTF-8; undecodable bytes show as �)."""
        return self.members[name].decode("utf-8", errors="replace")

    @property
    def samples_csv(self) -> str | None:
        """samples.csv, where the bundle has one (the graph is replayed from it)."""
        return self.text(SAMPLES_NAME) if SAMPLES_NAME in self.members else None

    @property
    def redacted(self) -> bool:
        """Whether the bundle says it was redacted."""
        redaction = self.manifest.get("redaction")
        return bool(isinstance(redaction, dict) and redaction.get("enabled"))

    def origin(self) -> str:
        """One line saying this is a bundle from another machine, when made, by which version."""
        return (
            f"Bundle {self.path.name}: made {self.manifest.get('created')} by fallback-doctor "
            f"{self.manifest.get('tool_version')}, "
            + ("redacted" if self.redacted else "NOT redacted")
            + " (diagnosed on another machine)"
        )


_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"


def _check_entry(info: zipfile.ZipInfo, limits: OpenLimits) -> None:
    name = info.filename
    if name.endswith("/") or info.is_dir():
        raise BundleRefusedError(
            f"member {name!r}: a directory entry (a bundle holds only files)", name, "unsafe"
        )
    try:
        check_member_name(name)
    except UnsafeNameError as error:
        raise BundleRefusedError(str(error), name, "unsafe") from None
    if info.flag_bits & 0x1:
        raise BundleRefusedError(f"member {name!r}: encrypted", name, "unsafe")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise BundleRefusedError(
            f"member {name!r}: unsupported compression method {info.compress_type}", name, "unsafe"
        )
    mode = info.external_attr >> 16
    if info.create_system == 3 or mode:
        if stat.S_ISLNK(mode):
            raise BundleRefusedError(f"member {name!r}: a symbolic link", name, "unsafe")
        if mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            raise BundleRefusedError(
                f"member {name!r}: not a regular file (mode {oct(mode)})", name, "unsafe"
            )
    if info.file_size > limits.max_member:
        raise BundleRefusedError(
            f"member {name!r}: {info.file_size} bytes uncompressed, "
            f"more than the {limits.max_member} allowed",
            name,
            "bomb",
        )
    if info.file_size > limits.ratio_floor and info.file_size > limits.max_ratio * max(1, info.compress_size):
        raise BundleRefusedError(
            f"member {name!r}: compression ratio {info.file_size / max(1, info.compress_size):.0f}:1 "
            f"(a zip bomb?)",
            name,
            "bomb",
        )


def _check_layout(stream: BinaryIO, infos: list[zipfile.ZipInfo], file_size: int) -> None:
    """Each entry's local header is where the directory says, names agree, and no data overlap."""
    spans: list[tuple[int, int, str]] = []
    for info in infos:
        name = info.filename
        if info.header_offset < 0 or info.header_offset + _LOCAL_HEADER.size > file_size:
            raise BundleRefusedError(
                f"member {name!r}: its local header lies outside the file", name, "corrupt"
            )
        stream.seek(info.header_offset)
        header = stream.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size:
            raise BundleRefusedError(f"member {name!r}: truncated local header", name, "corrupt")
        fields = _LOCAL_HEADER.unpack(header)
        if fields[0] != _LOCAL_SIGNATURE:
            raise BundleRefusedError(
                f"member {name!r}: no local header where the directory points", name, "corrupt"
            )
        name_length, extra_length = fields[9], fields[10]
        local_name = stream.read(name_length)
        decoded = local_name.decode("utf-8" if info.flag_bits & 0x800 else "cp437", errors="replace")
        if decoded != name:
            raise BundleRefusedError(
                f"member {name!r}: the local header names it {decoded!r} (a disguised entry)", name, "unsafe"
            )
        start = info.header_offset
        end = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length + info.compress_size
        if end > file_size:
            raise BundleRefusedError(
                f"member {name!r}: its data runs past the end of the file", name, "corrupt"
            )
        spans.append((start, end, name))
    spans.sort()
    for (_s1, end1, name1), (start2, _e2, name2) in itertools.pairwise(spans):
        if start2 < end1:
            raise BundleRefusedError(
                f"members {name1!r} and {name2!r} share their data (an overlapping-entry zip bomb)",
                name2,
                "bomb",
            )


def read_members(path: str | Path, limits: OpenLimits | None = None) -> dict[str, bytes]:
    """Every member's bytes, after every safety check; raises :class:`BundleRefusedError` saying why."""
    limits = limits or OpenLimits()
    path = Path(path)
    try:
        # The one guarded opening (core/platform/files.py): a FIFO is never waited on, and the
        # checks below are made on the descriptor read, not on a name that could change.
        opened = open_regular_file(path)
    except NotARegularFileError:
        raise BundleRefusedError(f"{path}: not a regular file", None, "not_a_bundle") from None
    except OSError as error:
        raise BundleRefusedError(f"{path}: {error.strerror or error}", None, "not_a_bundle") from None
    size = os.fstat(opened.fileno()).st_size
    if size > limits.max_file:
        opened.close()
        raise BundleRefusedError(
            f"{path}: {size} bytes, more than the {limits.max_file} a bundle may have", None, "bomb"
        )
    try:
        with opened as stream:
            try:
                archive = zipfile.ZipFile(stream)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as error:
                # NotImplementedError: a central directory entry claims a zip version or feature
                # (multi-disk) that zipfile refuses while reading the directory itself.
                raise BundleRefusedError(f"{path}: not a zip file ({error})", None, "not_a_bundle") from None
            with archive:
                return _read_archive(archive, stream, size, limits)
    except OSError as error:
        raise BundleRefusedError(f"{path}: cannot be read ({error})", None, "not_a_bundle") from None


def _read_archive(
    archive: zipfile.ZipFile, stream: BinaryIO, size: int, limits: OpenLimits
) -> dict[str, bytes]:
    infos = archive.infolist()
    if len(infos) > limits.max_members:
        raise BundleRefusedError(
            f"{len(infos)} members, more than the {limits.max_members} allowed", None, "bomb"
        )
    seen: dict[str, str] = {}
    declared_total = 0
    for info in infos:
        _check_entry(info, limits)
        folded = info.filename.casefold()
        if folded in seen:
            raise BundleRefusedError(
                f"member {info.filename!r} appears twice"
                + (
                    "" if seen[folded] == info.filename else f" (as {seen[folded]!r}, differing only in case)"
                ),
                info.filename,
                "unsafe",
            )
        seen[folded] = info.filename
        declared_total += info.file_size
    if declared_total > limits.max_total:
        raise BundleRefusedError(
            f"{declared_total} bytes uncompressed in all, more than the {limits.max_total} allowed",
            None,
            "bomb",
        )
    _check_layout(stream, infos, size)
    members: dict[str, bytes] = {}
    total = 0
    for info in infos:
        name = info.filename
        try:
            with archive.open(info) as member:
                data = member.read(min(limits.max_member, info.file_size) + 1)
        except zipfile.BadZipFile as error:
            raise BundleRefusedError(f"member {name!r} is corrupt ({error})", name, "corrupt") from None
        except (OSError, ValueError, EOFError, NotImplementedError, RuntimeError, zlib.error) as error:
            raise BundleRefusedError(f"member {name!r} cannot be read ({error})", name, "corrupt") from None
        if len(data) > info.file_size or len(data) > limits.max_member:
            raise BundleRefusedError(
                f"member {name!r} inflates to more than it declares (a zip bomb?)", name, "bomb"
            )
        total += len(data)
        if total > limits.max_total:
            raise BundleRefusedError(f"more than {limits.max_total} bytes uncompressed in all", name, "bomb")
        members[name] = data
    return members


def parse_json_member(members: dict[str, bytes], name: str) -> object:
    """A member parsed as JSON; :class:`BundleRefusedError` naming it when missing or malformed."""
    if name not in members:
        raise BundleRefusedError(
            f"member {name!r} is missing: this is not a fallback-doctor bundle", name, "not_a_bundle"
        )
    try:
        text = members[name].decode("utf-8")
    except UnicodeDecodeError as error:
        raise BundleRefusedError(
            f"member {name!r}: not UTF-8 ({error.reason} at byte {error.start})", name, "malformed"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise BundleRefusedError(
            f"member {name!r}: malformed JSON ({error.msg} at line {error.lineno} column {error.colno})",
            name,
            "malformed",
        ) from None
    except (ValueError, RecursionError) as error:
        raise BundleRefusedError(
            f"member {name!r}: malformed JSON ({type(error).__name__})", name, "malformed"
        ) from None


def validate_report(document: object) -> dict[str, Any]:
    """The report document, checked against the published schema; else BundleRefusedError naming the field.

    Every renderer (bundle show, report.html, the wizard) can then show it without guessing.
    """
    name = REPORT_NAME
    if not isinstance(document, dict):
        raise BundleRefusedError(f"member {name!r}: not a JSON object", name, "malformed")
    if document.get("schema") != REPORT_SCHEMA:
        raise BundleRefusedError(
            f"member {name!r}: schema is {document.get('schema')!r}, not {REPORT_SCHEMA!r}", name, "malformed"
        )
    version = document.get("schema_version")
    if type(version) is not int or version not in KNOWN_REPORT_VERSIONS:  # 1.0, "1", true are not 1
        raise BundleRefusedError(
            f"member {name!r}: report schema_version {version!r} is unknown to this version "
            "of fallback-doctor "
            f"(it reads {', '.join(map(str, KNOWN_REPORT_VERSIONS))})",
            name,
            "version",
        )
    from fallback_doctor.core.document.schema import document_problems

    problems = document_problems(document, limit=1)
    if problems:
        raise BundleRefusedError(
            f"member {name!r} does not follow the report schema: {problems[0]}", name, "malformed"
        )
    return document


def integrity_problems(manifest: dict[str, Any], members: dict[str, bytes]) -> list[str]:
    """Members that differ from the manifest (size, sha256), are missing, or are not listed."""
    problems: list[str] = []
    listed: set[str] = set()
    for entry in manifest.get("members", []):
        name = entry["name"]
        listed.add(name)
        data = members.get(name)
        if data is None:
            problems.append(f"{name}: listed in the manifest but missing")
            continue
        if len(data) != entry["size"]:
            problems.append(f"{name}: {len(data)} bytes, the manifest says {entry['size']}")
        elif sha256_of(data) != entry["sha256"]:
            problems.append(f"{name}: sha256 differs from the manifest (the content was changed)")
    for name in members:
        if name != MANIFEST_NAME and name not in listed:
            problems.append(f"{name}: not listed in the manifest (added after export)")
    return problems


def _manifest(members: dict[str, bytes]) -> dict[str, Any]:
    try:
        return validate_manifest(parse_json_member(members, MANIFEST_NAME))
    except ManifestError as error:
        reason = "version" if "schema_version" in str(error) else "malformed"
        raise BundleRefusedError(str(error), MANIFEST_NAME, reason) from None


def open_bundle(path: str | Path, limits: OpenLimits | None = None) -> OpenedBundle:
    """Read a bundle safely into memory; :class:`BundleRefusedError` (naming the member) when refused."""
    members = read_members(path, limits)
    manifest = _manifest(members)
    document = validate_report(parse_json_member(members, REPORT_NAME))
    return OpenedBundle(Path(path), manifest, document, members, tuple(integrity_problems(manifest, members)))


@dataclass(frozen=True)
class VerifyResult:
    """Whether every member matches the manifest, and what does not."""

    ok: bool
    problems: tuple[str, ...]
    checked: int


def verify_bundle(path: str | Path, limits: OpenLimits | None = None) -> VerifyResult:
    """Check every member against the manifest's size and sha256 (`sha256sum` on each member, by hand).

    A member whose stored CRC fails is a mismatch too. Raises :class:`BundleRefusedError` when the
    file is not a bundle or is refused as unsafe.
    """
    try:
        members = read_members(path, limits)
    except BundleRefusedError as error:
        if error.reason == "corrupt" and error.member:
            return VerifyResult(False, (f"{error.member}: {error}",), 0)
        raise
    manifest = _manifest(members)
    problems = integrity_problems(manifest, members)
    if not problems:
        validate_report(parse_json_member(members, REPORT_NAME))
    return VerifyResult(not problems, tuple(problems), len(manifest.get("members", [])))
