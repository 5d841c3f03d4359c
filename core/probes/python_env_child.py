"""List an interpreter's import path and installed distributions as one JSON object.

Run BY PATH by the application's own interpreter (``/app/venv/bin/python
python_env_child.py``), with the application's environment. It must work on
Python 3.8 and newer with the standard library only, and it never imports the
packages it lists (no onnxruntime, no torch): it reads metadata files as text.

By hand, the same facts: ``python -m site`` and ``python -m pip list -v``.
"""

from __future__ import annotations

import json
import os
import site
import sys
from typing import Any, Dict, Iterable, List, Optional, Tuple

SCHEMA = 1
_HEADER_LIMIT = 64 * 1024
"""Read at most this much of a METADATA file: Name and Version are in its first lines."""


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def _probe_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def import_path() -> List[str]:
    """sys.path as the application would have it: without this script's own folder."""
    own = os.path.normcase(_probe_dir())
    paths = list(sys.path)
    if paths and os.path.normcase(os.path.abspath(paths[0] or ".")) == own:
        paths = paths[1:]
    return paths


def site_dirs(paths: Iterable[str]) -> List[str]:
    """site.getsitepackages(), the user site, then every sys.path entry that is a directory."""
    found: List[str] = []
    getsite = getattr(site, "getsitepackages", None)
    if getsite is not None:
        try:
            found.extend(getsite())
        except Exception:  # noqa: BLE001 - an odd site.py must not stop the listing
            pass
    user = user_site()
    if user:
        found.append(user)
    found.extend(path for path in paths if path and _is_dir(path))
    unique: List[str] = []
    for path in found:
        if path not in unique and _is_dir(path):
            unique.append(path)
    return unique


def user_site() -> Optional[str]:
    """The user site-packages directory when it is enabled and exists, else None."""
    if not getattr(site, "ENABLE_USER_SITE", False):
        return None
    try:
        path: Optional[str] = site.getusersitepackages()
    except Exception:  # noqa: BLE001
        return None
    return path if path and _is_dir(path) else None


def parse_metadata_headers(text: str) -> Tuple[Optional[str], Optional[str]]:
    """Name and Version from the RFC 822 header block of METADATA / PKG-INFO text."""
    name: Optional[str] = None
    version: Optional[str] = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "name" and name is None:
            name = value.strip()
        elif key == "version" and version is None:
            version = value.strip()
    return name, version


def _read_head(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read(_HEADER_LIMIT).decode("utf-8", "replace")


def _entry(name: str, version: Optional[str], metadata_dir: str) -> Dict[str, str]:
    metadata_dir = os.path.abspath(metadata_dir)
    return {
        "name": name,
        "version": version or "",
        "location": os.path.dirname(metadata_dir),
        "metadata_dir": metadata_dir,
    }


def scan_distributions(paths: Iterable[str]) -> List[Dict[str, str]]:
    """Every .dist-info / .egg-info directory on ``paths`` (and an .egg's EGG-INFO), read by hand.

    What importlib.metadata.distributions(path=...) finds, without importing it (importing
    it pulls in the email package: half of this script's run time). Works on any Python 3.
    """
    found: List[Dict[str, str]] = []
    for base in paths:
        if not base or not _is_dir(base):
            continue
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        if base.lower().endswith(".egg") and "EGG-INFO" in names:
            egg_info = os.path.join(base, "EGG-INFO")
            try:
                name, version = parse_metadata_headers(_read_head(os.path.join(egg_info, "PKG-INFO")))
            except OSError:
                name = version = None
            if name:
                found.append(_entry(name, version, egg_info))
        for entry in names:
            if entry.endswith(".dist-info"):
                meta_file = "METADATA"
            elif entry.endswith(".egg-info"):
                meta_file = "PKG-INFO"
            else:
                continue
            folder = os.path.join(base, entry)
            target = os.path.join(folder, meta_file) if _is_dir(folder) else folder
            try:
                name, version = parse_metadata_headers(_read_head(target))
            except OSError:
                continue
            if name:
                found.append(_entry(name, version, folder))
    return found


def metadata_distributions(paths: Iterable[str]) -> List[Dict[str, str]]:
    """Every distribution importlib.metadata finds on ``paths`` (Python 3.8+)."""
    from importlib import metadata

    found: List[Dict[str, str]] = []
    for dist in metadata.distributions(path=list(paths)):
        folder = getattr(dist, "_path", None)
        name: Optional[str] = None
        version: Optional[str] = None
        text: Optional[str] = None
        try:
            text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
        except Exception:  # noqa: BLE001 - a broken dist must not hide the others
            text = None
        if text:
            name, version = parse_metadata_headers(text[:_HEADER_LIMIT])
        if not name:
            try:
                name, version = dist.metadata["Name"], dist.version
            except Exception:  # noqa: BLE001
                continue
        if not name:
            continue
        if folder is None:
            try:
                folder = os.path.join(str(dist.locate_file("")), name + ".dist-info")
            except Exception:  # noqa: BLE001
                continue
        found.append(_entry(name, version, str(folder)))
    return found


def distributions(paths: Iterable[str], use_metadata: bool = False) -> List[Dict[str, str]]:
    """Installed distributions in import-path order, each (name, folder) once.

    By hand by default; through importlib.metadata with ``use_metadata`` (the tests
    compare the two).
    """
    found = metadata_distributions(paths) if use_metadata else scan_distributions(paths)
    unique: List[Dict[str, str]] = []
    seen = set()
    for item in found:
        key = (item["name"].lower(), os.path.normcase(item["metadata_dir"]))
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def machine() -> str:
    """The interpreter's machine architecture (x86_64, aarch64, AMD64 …)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().machine)
    import platform

    return platform.machine()


def facts(use_metadata: bool = False) -> Dict[str, Any]:
    """The whole answer as a dict, ready for json.dumps."""
    paths = import_path()
    return {
        "schema": SCHEMA,
        "executable": sys.executable or "",
        "version": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "platform": sys.platform,
        "machine": machine(),
        "sys_path": paths,
        "site_packages": site_dirs(paths),
        "user_site": user_site(),
        "distributions": distributions(paths, use_metadata),
    }


def main() -> int:
    """Print the facts as one JSON line (``--importlib-metadata``: list packages through it)."""
    sys.stdout.write(json.dumps(facts(use_metadata="--importlib-metadata" in sys.argv[1:])))
    sys.stdout.write("\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
