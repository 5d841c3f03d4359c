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
    """sys.path as the application would have it: without this script's own folder.

    Run with ``-I -S`` (as the tool runs it: issue 28), ``site`` did not run, so the path the
    application gets from it is rebuilt here without running anything of the environment
    (:func:`site_path`).
    """
    own = os.path.normcase(_probe_dir())
    paths = list(sys.path)
    if paths and os.path.normcase(os.path.abspath(paths[0] or ".")) == own:
        paths = paths[1:]
    if sys.flags.no_site:
        paths = _pythonpath() + paths + [path for path in site_path() if path not in paths]
    return paths


_PTH_LIMIT = 1024 * 1024
"""Read at most this much of one .pth file (a real one is a few lines)."""


def read_bounded(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file, opened without waiting on a FIFO; OSError else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(path + ": not a regular file")
        chunks: List[bytes] = []
        size = 0
        while size < limit:
            chunk = os.read(fd, min(65536, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _pythonpath() -> List[str]:
    """PYTHONPATH's entries (``-I`` ignores it; the application does not)."""
    value = os.environ.get("PYTHONPATH", "")
    return [os.path.abspath(part) for part in value.split(os.pathsep) if part]


def _pth_paths(sitedir: str, known: List[str]) -> List[str]:
    """The folders ``sitedir``'s .pth files add, as ``site.addpackage`` adds them, without
    executing their ``import`` lines (start-up code of the environment: never run here)."""
    try:
        names = sorted(
            name for name in os.listdir(sitedir) if name.endswith(".pth") and not name.startswith(".")
        )
    except OSError:
        return []
    added: List[str] = []
    for name in names:
        try:
            text = read_bounded(os.path.join(sitedir, name), _PTH_LIMIT).decode("utf-8", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            if not line.strip() or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            folder = os.path.normpath(os.path.join(sitedir, line.rstrip()))
            if folder not in known and folder not in added and _is_dir(folder):
                added.append(folder)
    return added


def _venv() -> List[str]:
    """What ``site.venv`` does (pyvenv.cfg: sys.prefix, site.PREFIXES, the user site), without
    its ``addsitepackages`` (which runs the .pth files); the venv's own site folders."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable or ""))
    site_prefix = os.path.dirname(exe_dir)
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(site_prefix, "pyvenv.cfg")):
        try:
            text = read_bounded(conf, _PTH_LIMIT).decode("utf-8", "replace")
            break
        except OSError:
            continue
    else:
        return []
    system_site = "true"
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "include-system-site-packages":
            system_site = value.strip().lower()
    sys.prefix = sys.exec_prefix = site_prefix
    if system_site == "true":
        site.PREFIXES.insert(0, sys.prefix)
    else:
        site.PREFIXES = [sys.prefix]
        site.ENABLE_USER_SITE = False
    try:
        return [folder for folder in site.getsitepackages([sys.prefix]) if _is_dir(folder)]
    except Exception:  # noqa: BLE001 - an odd site.py must not stop the listing
        return []


def site_path() -> List[str]:
    """The folders ``site`` would add at start-up (venv, user site, site-packages and their
    .pth folders, in site.main's order), worked out without running any .pth code."""
    dirs = _venv()
    if getattr(site, "ENABLE_USER_SITE", None) is None:
        getuid, geteuid = getattr(os, "getuid", None), getattr(os, "geteuid", None)
        same = getuid is None or geteuid is None or getuid() == geteuid()
        site.ENABLE_USER_SITE = same and not os.environ.get("PYTHONNOUSERSITE")
    user = user_site()
    if user:
        dirs.append(user)
    getsite = getattr(site, "getsitepackages", None)
    if getsite is not None:
        try:
            dirs.extend(folder for folder in getsite() if _is_dir(folder))
        except Exception:  # noqa: BLE001
            pass
    found: List[str] = []
    for folder in dirs:
        if folder not in found:
            found.append(folder)
            found.extend(_pth_paths(folder, found))
    return found


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
    return read_bounded(path, _HEADER_LIMIT).decode("utf-8", "replace")


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
