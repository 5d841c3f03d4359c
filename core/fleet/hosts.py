"""One row per host of a fleet folder: its verified bundle, or why there is none.

A fleet folder is what the Ansible playbook (packaging/ansible/) fetches: ``<stem>.zip`` (the
bundle ``diagnose --bundle --fleet-host HOST`` wrote there) and ``<stem>.status.json`` (how the run
went: diagnosed, unreachable, tool_failed), ``<stem>`` being :func:`file_stem` of the inventory
name. A folder of bundles collected by hand works too (no status files: the host is the file
name). Every bundle is opened with core/bundle/safe_open.py, the way ``fallback-doctor bundle
verify`` does; one that is refused or altered becomes a row saying why.

Every file is one row, never merged with another: identity is never guessed from a name. A row
is the host that sent it: the status file's name, the host it names, the bundle it names and the
host the bundle's manifest records (its sha256) must agree, or the row says they do not
(``identity`` "mismatch", and a bundle's verdict is not shown for another host). Status files are
read through core/platform/files.py (no FIFO, device or endless file; at most ``MAX_STATUS`` bytes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fallback_doctor.core.bundle.manifest import FLEET_HOST_KEY, fleet_host_digest
from fallback_doctor.core.bundle.safe_open import BundleRefusedError, open_bundle
from fallback_doctor.core.document.view import view_of
from fallback_doctor.core.fleet import fields
from fallback_doctor.core.fleet.fields import FirstCause, StackCombo
from fallback_doctor.core.platform.files import read_regular_file

STATUS_SCHEMA = "gpu-fallback-doctor/fleet-host"
STATUS_SUFFIX = ".status.json"
STATES = ("diagnosed", "unreachable", "tool_failed", "refused")
"""diagnosed: a verified bundle; unreachable: Ansible could not reach the host; tool_failed: the
tool ran and left no bundle (or exited with a usage error); refused: the bundle failed verification
or is not this host's."""

MAX_STATUS = 256 * 1024
MAX_MESSAGE = 2000
"""A status message keeps its last 2,000 characters (the playbook's cut of the tool's stderr)."""
MAX_HOST_SHOWN = 300
"""A longer host name is shown cut (its files, in ``files``, tell rows apart)."""
MAX_NAME_BYTES = 255
"""The longest file name (NAME_MAX on Linux file systems)."""
STEM_CHARS = 100
_PLAIN = re.compile(rf"[A-Za-z0-9_@+\-][A-Za-z0-9._@+\-]{{0,{STEM_CHARS - 1}}}")
_OTHER = re.compile(r"[^A-Za-z0-9._@+\-]")
IDENTITIES = ("confirmed", "unrecorded", "mismatch")
"""confirmed: the bundle's manifest records this host; unrecorded: it records none (made by
hand, or by an older version); mismatch: a name disagrees (the message says which)."""


@dataclass(frozen=True)
class HostRow:
    """One host of the fleet, diagnosed or not."""

    host: str
    state: str
    verdict: str | None = None
    first_cause: FirstCause | None = None
    stack: StackCombo | None = None
    bundle: str | None = None
    """The bundle's path (absolute), where there is one that verified."""
    message: str | None = None
    """Why the host is not diagnosed (unreachable, the tool's error, the refusal), or a note."""
    rc: int | None = None
    target: str | None = None
    quick: bool = False
    gpus: tuple[str, ...] = ()
    sees_gpu: bool | None = None
    """Whether the tool saw an NVIDIA GPU there (None: not diagnosed, or not recorded)."""
    created: str | None = None
    identity: str | None = None
    """One of IDENTITIES for a row with a bundle or a disagreeing name; None otherwise."""
    files: tuple[str, ...] = ()
    """The files of the fleet folder this row was read from."""

    @property
    def category(self) -> str:
        """The verdict for a diagnosed host, else its state (the summary's "by verdict" key)."""
        return self.verdict if self.state == "diagnosed" and self.verdict else self.state


def file_stem(host: str) -> str:
    """The stem of a host's files (``<stem>.zip``, ``<stem>.status.json``): the playbook's rule.

    A plain name (letters, digits, ``._@+-``, not starting with a dot, at most 100 characters)
    is its own stem; any other gets the cleaned, cut name plus ``~`` and the first 16 hex digits
    of its sha256, so that ``dup a`` and ``dup_a`` stay two hosts and a 300-character name fits
    in a file name. ``~`` never appears in a plain name: stems of different names differ.
    """
    if _PLAIN.fullmatch(host):
        return host
    cleaned = _OTHER.sub("_", host[:STEM_CHARS]).lstrip(".")
    return f"{cleaned}~{fleet_host_digest(host)[:16]}"


def _read_status(path: Path) -> dict[str, object]:
    """A status file as a mapping; {"state": "tool_failed", …} saying why when it is unreadable."""
    try:
        raw = read_regular_file(path, MAX_STATUS + 1)
        if len(raw) > MAX_STATUS:
            raise ValueError(f"larger than {MAX_STATUS} bytes")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("schema") != STATUS_SCHEMA:
            raise ValueError(f"not a {STATUS_SCHEMA} document")
    except RecursionError:
        return {"state": "tool_failed", "message": f"{path.name}: unreadable status file (nested too deep)"}
    except (OSError, ValueError) as error:
        return {"state": "tool_failed", "message": f"{path.name}: unreadable status file ({error})"}
    return data


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _identity(recorded: object, host: str | None, stem: str) -> str:
    """Whether the manifest's record names ``host`` (or, for a loose bundle, the host of ``stem``)."""
    if not isinstance(recorded, str) or not recorded:
        return "unrecorded"
    if host is not None:
        return "confirmed" if recorded == fleet_host_digest(host) else "mismatch"
    _prefix, tilde, digest = stem.rpartition("~")
    if tilde and re.fullmatch(r"[0-9a-f]{16}", digest):
        return "confirmed" if recorded.startswith(digest) else "mismatch"
    return "confirmed" if recorded == fleet_host_digest(stem) else "mismatch"


def row_from_bundle(
    host: str, path: Path, status: dict[str, Any] | None = None, *, sender: str | None = None
) -> HostRow:
    """The row of a host whose bundle exists: verified and read, or refused with the reason.

    ``sender``: the host the status file names (its bundle must record that host); None for a
    bundle without a status file (its record must agree with its file name).
    """
    rc = _int((status or {}).get("rc"))
    files = (path.name,)
    try:
        opened = open_bundle(path)
    except BundleRefusedError as error:
        return HostRow(host, "refused", message=f"{path.name}: {error}", rc=rc, files=files)
    if opened.integrity_problems:
        problems = "; ".join(opened.integrity_problems[:3])
        message = f"{path.name}: does not match its manifest: {problems}"
        return HostRow(host, "refused", message=message, rc=rc, files=files)
    identity = _identity(opened.manifest.get(FLEET_HOST_KEY), sender, path.stem)
    if identity == "mismatch":
        message = f"{path.name}: made for another host than {host} (its manifest records another name)"
        return HostRow(host, "refused", message=message, rc=rc, identity=identity, files=files)
    document = view_of(opened.document)  # read once, by every field below
    return HostRow(
        host=host,
        state="diagnosed",
        verdict=fields.verdict(document),
        first_cause=fields.first_cause(document),
        stack=fields.stack_combo(document),
        bundle=str(path.resolve()),
        rc=rc,
        target=fields.target_kind(document),
        quick=fields.quick(document),
        gpus=fields.gpu_names(document),
        sees_gpu=fields.sees_a_gpu(document),
        created=fields.created(document),
        identity=identity,
        files=files,
    )


def _bundle_name_problem(name: str, host: str) -> tuple[str, str | None] | None:
    """Why a status file's ``bundle`` is not this host's bundle file, with the identity it
    implies ("mismatch" for another host's file name); None when it is the host's own."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES or not name.endswith(".zip") or any(c in name for c in "/\\\0"):
        return f"the status file's bundle is not a bundle name ({size} bytes)", None
    own = file_stem(host) + ".zip"
    if name != own:
        return f"the status file names {name}, which is not this host's bundle ({own})", "mismatch"
    return None


def _cut(text: str | None, keep: int, tail: bool = False) -> str | None:
    """``text`` of at most ``keep`` characters (its start, or its end), marked where cut."""
    if text is None or len(text) <= keep:
        return text
    return "… " + text[-keep:] if tail else text[:keep] + " …"


def _row_from_status(host: str, status: dict[str, Any], folder: Path) -> HostRow:
    state = status.get("state")
    message = _cut(
        status.get("message") if isinstance(status.get("message"), str) else None, MAX_MESSAGE, True
    )
    rc = _int(status.get("rc"))
    bundle_name = status.get("bundle")
    if isinstance(bundle_name, str) and bundle_name:
        problem = _bundle_name_problem(bundle_name, host)
        if problem is not None:
            words, identity = problem
            return HostRow(
                host, "refused" if identity else "tool_failed", message=words, rc=rc, identity=identity
            )
        candidate = folder / bundle_name
        if candidate.is_file():
            return row_from_bundle(host, candidate, status, sender=host)
    if state == "unreachable":
        return HostRow(host, "unreachable", message=message or "unreachable", rc=rc)
    if state == "diagnosed":
        message = "the status says diagnosed, but no bundle was fetched"
    return HostRow(host, "tool_failed", message=message or "the tool left no bundle", rc=rc)


def _status_row(path: Path, folder: Path) -> HostRow:
    """The row of one status file; its name must be the host's :func:`file_stem`, or it says not.

    A row whose names disagree shows no verdict: the bundle may be another host's.
    """
    stem = path.name[: -len(STATUS_SUFFIX)]
    status = _read_status(path)
    named = status.get("host")
    host = named if isinstance(named, str) and named else stem
    try:
        row = _row_from_status(host, status, folder)
    except OSError as error:  # a name the file system refuses
        row = HostRow(host, "tool_failed", message=f"{path.name}: {error.strerror or error}")
    files = (path.name, *row.files)
    if host is named and file_stem(host) != stem:
        shown_host = _cut(host, MAX_HOST_SHOWN)
        note = f"{path.name} names host {shown_host}, whose status file is {file_stem(host)}{STATUS_SUFFIX}"
        message = "; ".join(filter(None, (note, row.message)))
        state = "refused" if row.state == "diagnosed" else row.state
        row = HostRow(host, state, message=message, rc=row.rc, identity="mismatch", files=files)
    shown = _cut(host, MAX_HOST_SHOWN) or host
    return replace(row, host=shown, message=_cut(row.message, 2 * MAX_MESSAGE), files=files)


def read_fleet(folder: str | Path) -> list[HostRow]:
    """Every host of a fleet folder, sorted by name: status files first, then loose bundles.

    One row per status file and per bundle no status file took: nothing is merged or dropped.
    Raises NotADirectoryError / FileNotFoundError when ``folder`` is not a folder.
    """
    base = Path(folder)
    if not base.is_dir():
        raise NotADirectoryError(f"{base}: not a folder")
    rows = [_status_row(path, base) for path in sorted(base.glob("*" + STATUS_SUFFIX))]
    taken = {row.files[1] for row in rows if len(row.files) > 1}
    for path in sorted(base.glob("*.zip")):
        if path.name not in taken:
            rows.append(row_from_bundle(path.stem, path))
    return sorted(rows, key=lambda row: (row.host, row.files))
