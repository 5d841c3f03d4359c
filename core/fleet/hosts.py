"""One row per host of a fleet folder: its verified bundle, or why there is none.

A fleet folder is what the Ansible playbook (packaging/ansible/) fetches: ``<host>.zip`` (the
bundle ``diagnose --bundle`` wrote there) and ``<host>.status.json`` (how the run went: diagnosed,
unreachable, tool_failed). A folder of bundles collected by hand works too (no status files: the
host is the file name). Every bundle is opened with core/bundle/safe_open.py, the way
``fallback-doctor bundle verify`` does; one that is refused or altered becomes a row saying why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fallback_doctor.core.bundle.safe_open import BundleRefusedError, open_bundle
from fallback_doctor.core.fleet import fields
from fallback_doctor.core.fleet.fields import FirstCause, StackCombo

STATUS_SCHEMA = "gpu-fallback-doctor/fleet-host"
STATUS_SUFFIX = ".status.json"
STATES = ("diagnosed", "unreachable", "tool_failed", "refused")
"""diagnosed: a verified bundle; unreachable: Ansible could not reach the host; tool_failed: the
tool ran and left no bundle (or exited with a usage error); refused: the bundle failed verification."""

MAX_STATUS = 256 * 1024
_HOST = re.compile(r"[^A-Za-z0-9._@+\-]")


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

    @property
    def category(self) -> str:
        """The verdict for a diagnosed host, else its state (the summary's "by verdict" key)."""
        return self.verdict if self.state == "diagnosed" and self.verdict else self.state


def clean_host(name: str) -> str:
    """A host name safe to print and to use as a file stem (what the playbook writes)."""
    return _HOST.sub("_", name)[:200] or "host"


def _read_status(path: Path) -> dict[str, Any]:
    """A status file as a mapping; {"state": "tool_failed", …} saying why when it is unreadable."""
    try:
        raw = path.read_bytes()[: MAX_STATUS + 1]
        if len(raw) > MAX_STATUS:
            raise ValueError(f"larger than {MAX_STATUS} bytes")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("schema") != STATUS_SCHEMA:
            raise ValueError(f"not a {STATUS_SCHEMA} document")
    except (OSError, ValueError, UnicodeDecodeError) as error:
        return {"state": "tool_failed", "message": f"{path.name}: unreadable status file ({error})"}
    return data


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def row_from_bundle(host: str, path: Path, status: dict[str, Any] | None = None) -> HostRow:
    """The row of a host whose bundle exists: verified and read, or refused with the reason."""
    rc = _int((status or {}).get("rc"))
    try:
        opened = open_bundle(path)
    except BundleRefusedError as error:
        return HostRow(host, "refused", bundle=None, message=f"{path.name}: {error}", rc=rc)
    if opened.integrity_problems:
        problems = "; ".join(opened.integrity_problems[:3])
        return HostRow(
            host, "refused", message=f"{path.name}: does not match its manifest: {problems}", rc=rc
        )
    document = opened.document
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
    )


def _row_from_status(host: str, status: dict[str, Any], folder: Path) -> HostRow:
    state = status.get("state")
    message = status.get("message") if isinstance(status.get("message"), str) else None
    rc = _int(status.get("rc"))
    bundle_name = status.get("bundle")
    if isinstance(bundle_name, str) and bundle_name and "/" not in bundle_name and "\\" not in bundle_name:
        candidate = folder / bundle_name
        if candidate.is_file():
            return row_from_bundle(host, candidate, status)
    if state == "unreachable":
        return HostRow(host, "unreachable", message=message or "unreachable", rc=rc)
    if state == "diagnosed":
        message = "the status says diagnosed, but no bundle was fetched"
    return HostRow(host, "tool_failed", message=message or "the tool left no bundle", rc=rc)


def read_fleet(folder: str | Path) -> list[HostRow]:
    """Every host of a fleet folder, sorted by name: status files first, then loose bundles.

    Raises NotADirectoryError / FileNotFoundError when ``folder`` is not a folder.
    """
    base = Path(folder)
    if not base.is_dir():
        raise NotADirectoryError(f"{base}: not a folder")
    rows: dict[str, HostRow] = {}
    claimed: set[str] = set()
    for path in sorted(base.glob("*" + STATUS_SUFFIX)):
        status = _read_status(path)
        raw_host = status.get("host")
        host = clean_host(raw_host if isinstance(raw_host, str) else path.name[: -len(STATUS_SUFFIX)])
        rows[host] = _row_from_status(host, status, base)
        bundle = status.get("bundle")
        if isinstance(bundle, str):
            claimed.add(bundle)
    for path in sorted(base.glob("*.zip")):
        if path.name in claimed:
            continue
        host = clean_host(path.stem)
        if host not in rows:
            rows[host] = row_from_bundle(host, path)
    return [rows[name] for name in sorted(rows)]
