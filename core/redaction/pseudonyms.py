"""Consistent pseudonyms for identities (host-1, user-1, ip-1, gpu-uuid-1 …) and where the mapping is kept.

The same value gets the same pseudonym in every member of a bundle, so the report still reads
("host-1 cannot reach …" in the log and in the report are the same machine). The mapping from
pseudonym back to the real value stays on the technician's machine (the platformdirs user data
directory, file mode 0600); it is never written into a bundle.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tempfile
from pathlib import Path

KINDS: tuple[str, ...] = ("host", "user", "ip", "mac", "gpu-uuid", "uuid", "serial", "email")
"""Identity kinds, each with its own counter: host-1, user-1, ip-1, mac-1, gpu-uuid-1, …"""

PSEUDONYM_RE = re.compile(r"^(?:host|user|ip|mac|gpu-uuid|uuid|serial|email)-\d+$")

APP_NAME = "gpu-fallback-doctor"


def is_pseudonym(value: str) -> bool:
    """Whether ``value`` is already a pseudonym (so redacting it again changes nothing)."""
    return PSEUDONYM_RE.match(value) is not None


def normalise(kind: str, value: str) -> str:
    """The form two spellings of one identity share (host names ignore case, IPv6 is compressed …)."""
    if kind in ("host", "email", "mac", "gpu-uuid", "uuid"):
        value = value.lower()
        if kind == "mac":
            value = value.replace("-", ":")
        return value
    if kind == "ip":
        if ":" not in value:
            return value
        try:
            return ipaddress.ip_address(value.split("%", 1)[0]).compressed
        except ValueError:
            return value.lower()
    return value


class Pseudonyms:
    """A mapping kind -> real value -> pseudonym, assigning host-1, host-2 … in order of first sight."""

    def __init__(self, mapping: dict[str, dict[str, str]] | None = None) -> None:
        """Start empty, or continue ``mapping`` (as :meth:`to_json` wrote it)."""
        self._map: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
        self._spellings: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
        for kind, values in (mapping or {}).items():
            for value, pseudonym in values.items():
                self._map.setdefault(kind, {})[normalise(kind, value)] = pseudonym
                self._spellings.setdefault(kind, {})[value] = pseudonym

    def get(self, kind: str, value: str) -> str:
        """The pseudonym of ``value`` (assigned now when new); a pseudonym maps to itself."""
        if is_pseudonym(value):
            return value
        key = normalise(kind, value)
        table = self._map.setdefault(kind, {})
        pseudonym = table.get(key)
        if pseudonym is None:
            pseudonym = f"{kind}-{len(table) + 1}"
            table[key] = pseudonym
        self._spellings.setdefault(kind, {})[value] = pseudonym
        return pseudonym

    def known(self, kind: str) -> dict[str, str]:
        """Every spelling seen of ``kind`` -> its pseudonym (for the literal search in other members)."""
        return dict(self._spellings.get(kind, {}))

    def count(self) -> int:
        """How many distinct identities have a pseudonym."""
        return sum(len(table) for table in self._map.values())

    def to_json(self) -> dict[str, dict[str, str]]:
        """The mapping as plain JSON: kind -> real value (as first spelled) -> pseudonym."""
        return {kind: dict(values) for kind, values in self._spellings.items() if values}


def mapping_dir() -> Path:
    """Where the technician's mappings are kept (platformdirs user data dir, never in a bundle)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "bundle-mappings"


def save_mapping(pseudonyms: Pseudonyms, name: str, directory: Path | None = None) -> Path:
    """Write the mapping for one bundle as ``<directory>/<name>.json`` (mode 0600, atomically)."""
    folder = directory if directory is not None else mapping_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.json"
    handle, temp_name = tempfile.mkstemp(dir=folder, prefix=".mapping.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(
                {
                    "note": "pseudonym -> real value for one bundle; keep it on this machine",
                    **pseudonyms.to_json(),
                },
                stream,
                ensure_ascii=False,
                indent=2,
            )
        os.chmod(temp_name, 0o600)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return target
