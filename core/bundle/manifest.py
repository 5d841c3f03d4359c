"""The bundle's manifest: what it holds, the sha256 and size of every member, what was cut and why.

Also the rules every member name follows (shared by export and by opening): relative, forward
slashes, no ``..``, no drive letters, no control characters.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.language.texts import label, words_text
from fallback_doctor.core.model.result import Words

MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.json"
HTML_NAME = "report.html"
ENVIRONMENT_NAME = "environment.json"
SAMPLES_NAME = "samples.csv"

BUNDLE_SCHEMA = "gpu-fallback-doctor/bundle"
BUNDLE_SCHEMA_VERSION = 1
KNOWN_BUNDLE_VERSIONS = (1,)
KNOWN_REPORT_VERSIONS = (2,)
"""Report documents this version reads (core/views/text_report.py SCHEMA_VERSION: 2, one place for the
inference)."""
REPORT_SCHEMA = "gpu-fallback-doctor/report"

MAX_NAME = 200
_NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-@ ]*$")


class UnsafeNameError(ValueError):
    """A member name that could point outside the bundle or clash on some file system."""


def check_member_name(name: str) -> str:
    """``name`` when it is a safe relative member name; raises :class:`UnsafeNameError` saying why."""
    if not name:
        raise UnsafeNameError("an empty member name")
    if len(name) > MAX_NAME:
        raise UnsafeNameError(f"member name longer than {MAX_NAME} characters: {name[:60]!r}…")
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise UnsafeNameError(f"member {name!r}: control characters in the name")
    if "\\" in name:
        raise UnsafeNameError(f"member {name!r}: a backslash in the name (a Windows path)")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UnsafeNameError(f"member {name!r}: an absolute path")
    parts = name.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafeNameError(f"member {name!r}: path traversal or an empty path part ({part!r})")
        if not _NAME_PART.match(part):
            raise UnsafeNameError(f"member {name!r}: unexpected characters in {part!r}")
    return name


def safe_member_name(name: str) -> str:
    """Make a safe member name out of anything (a file name read from a machine)."""
    parts = []
    for part in name.replace("\\", "/").split("/"):
        cleaned = re.sub(r"[^A-Za-z0-9._+\-@]", "_", part).lstrip("._-") or "_"
        if part not in ("", ".", ".."):
            parts.append(cleaned[:80])
    return "/".join(parts) or "member"


def sha256_of(data: bytes) -> str:
    """The hex sha256 of ``data`` (`sha256sum FILE`)."""
    return hashlib.sha256(data).hexdigest()


FLEET_HOST_KEY = "fleet_host_sha256"
"""The manifest's record of the fleet host a bundle was made for (``diagnose --fleet-host NAME``)."""


def fleet_host_digest(name: str) -> str:
    """The sha256 of a fleet host's inventory name (its UTF-8), as the manifest records it.

    The digest, not the name: a redacted bundle names no host, yet the fleet summary can tell
    whether a bundle is the one its host sent. By hand: ``printf %s NAME | sha256sum``.
    """
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class MemberEntry:
    """One member as the manifest lists it."""

    name: str
    size: int
    sha256: str
    kind: str
    """"report", "html", "environment", "config", "log", "probe", "samples", "other"."""
    source: str | None = None
    """Where its content was read from (redacted like the content)."""
    form: str = "utf-8"
    """How the content was stored where it was read ("gzip+utf-16-le" …); members are UTF-8."""
    redactions: int = 0


@dataclass(frozen=True)
class Cut:
    """Something left out or shortened, and why (``why`` in English, as the manifest keeps it;
    ``said``: the same as catalogue words, shown in the reader's language)."""

    member: str
    why: str
    original_size: int | None = None
    kept_size: int | None = None
    said: Words | None = field(default=None, compare=False)


def cut_words(cut: Cut, lang: str) -> str:
    """Why ``cut`` was made, in ``lang`` (its English where it was not said by key)."""
    return words_text(cut.said, lang) if cut.said is not None else cut.why


def said_cut(
    member: str, key: str, original: int | None = None, kept: int | None = None, **params: Any
) -> Cut:
    """A cut said by its catalogue key (``bundle.cut.*``): English for the manifest, words for a page."""
    return Cut(member, label(key, "en", **params), original, kept, Words(key, dict(params)))


@dataclass(frozen=True)
class ManifestInfo:
    """Everything of the manifest except the member list (filled in at export)."""

    tool_version: str
    created: str
    target: dict[str, Any]
    redaction: dict[str, Any]
    cut: tuple[Cut, ...] = ()
    excluded: tuple[Cut, ...] = ()
    report_created: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def build_manifest(info: ManifestInfo, members: list[MemberEntry]) -> dict[str, object]:
    """The manifest document (manifest.json)."""
    return {
        "schema": BUNDLE_SCHEMA,
        "schema_version": BUNDLE_SCHEMA_VERSION,
        "tool_version": info.tool_version,
        "created": info.created,
        "report_created": info.report_created,
        "target": info.target,
        "redaction": info.redaction,
        "members": [
            {
                "name": entry.name,
                "size": entry.size,
                "sha256": entry.sha256,
                "kind": entry.kind,
                "source": entry.source,
                "form": entry.form,
                "redactions": entry.redactions,
            }
            for entry in members
        ],
        "cut": [_cut_json(cut) for cut in info.cut],
        "excluded": [_cut_json(cut) for cut in info.excluded],
        **info.extra,
    }


def _cut_json(cut: Cut) -> dict[str, object]:
    return {
        "member": cut.member,
        "why": cut.why,
        "original_size": cut.original_size,
        "kept_size": cut.kept_size,
    }


class ManifestError(ValueError):
    """The manifest is not one this version can read; the message says what is wrong."""


def validate_manifest(manifest: object) -> dict[str, object]:
    """Check the manifest's shape and schema version; returns it, raises :class:`ManifestError`."""
    if not isinstance(manifest, dict):
        raise ManifestError(f"{MANIFEST_NAME}: not a JSON object")
    if manifest.get("schema") != BUNDLE_SCHEMA:
        raise ManifestError(f"{MANIFEST_NAME}: schema is {manifest.get('schema')!r}, not {BUNDLE_SCHEMA!r}")
    version = manifest.get("schema_version")
    if type(version) is not int or version not in KNOWN_BUNDLE_VERSIONS:  # 1.0, "1", true are not 1
        raise ManifestError(
            f"{MANIFEST_NAME}: schema_version {version!r} is not one this tool reads "
            f"({', '.join(map(str, KNOWN_BUNDLE_VERSIONS))}); a newer fallback-doctor may open it"
        )
    members = manifest.get("members")
    if not isinstance(members, list):
        raise ManifestError(f"{MANIFEST_NAME}: 'members' is not a list")
    seen: set[str] = set()
    for entry in members:
        if not isinstance(entry, dict):
            raise ManifestError(f"{MANIFEST_NAME}: a member entry is not an object")
        name = entry.get("name")
        if not isinstance(name, str):
            raise ManifestError(f"{MANIFEST_NAME}: a member entry without a name")
        try:
            check_member_name(name)
        except UnsafeNameError as error:
            raise ManifestError(f"{MANIFEST_NAME}: {error}") from None
        if name in seen:
            raise ManifestError(f"{MANIFEST_NAME}: member {name!r} is listed twice")
        seen.add(name)
        size, digest = entry.get("size"), entry.get("sha256")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ManifestError(f"{MANIFEST_NAME}: member {name!r} has no valid size")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ManifestError(f"{MANIFEST_NAME}: member {name!r} has no valid sha256")
    return manifest
