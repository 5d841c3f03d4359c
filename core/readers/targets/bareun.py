"""The Bareun server profile: find the installation, read bareun.json with positions, read libPath.

Sources: ../shared/reference/bareun-facts.md. The root is BAREUN_ROOT (Linux .deb /opt/bareun,
Docker /bareun, Windows ``C:\\Program Files\\bareun``); the configuration is
``<root>/config/bareun.json`` (the server prints ``Use config file: …``); the only real sample
(3.x, third party) has ``libPath``, ``logPath``, ``modelPath``, ``licenseFile`` as ``${BAREUN_ROOT}/…``
and ``executionProvider`` as an object ``{"provider": "tensorrt"|"cuda"|"cpu", "tensorrtOptions": {…}}``;
the vendor's FAQ writes it as a string ``"gpu"``/``"cpu"``. Both forms are read. Keys this tool does
not know are fine: only known keys are checked (type, value, whether the path is there).

By hand: ``cat $BAREUN_ROOT/config/bareun.json | python -m json.tool`` and
``ls -l $BAREUN_ROOT/lib`` (is there a ``libonnxruntime_providers_cuda.so`` beside
``libonnxruntime.so.*``?).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence

from fallback_doctor.core.readers.targets.bareun_reader import CONFIG_RELATIVE

DEFAULT_ROOTS_POSIX: tuple[str, ...] = ("/opt/bareun", "/bareun")
DEFAULT_ROOTS_WINDOWS: tuple[str, ...] = ("C:\\Program Files\\bareun",)


def default_roots(platform: str = sys.platform) -> tuple[str, ...]:
    """Where a Bareun installation lives when BAREUN_ROOT is not set."""
    return DEFAULT_ROOTS_WINDOWS if platform.startswith("win") else DEFAULT_ROOTS_POSIX


def looks_like_bareun(root: str) -> bool:
    """True when ``root`` has config/bareun.json or the server binary (bin/bareun, bareun.exe)."""
    candidates = (
        os.path.join(root, CONFIG_RELATIVE),
        os.path.join(root, "bin", "bareun"),
        os.path.join(root, "bareun.exe"),
        os.path.join(root, "bin", "bareun.exe"),
    )
    return any(os.path.isfile(path) for path in candidates)


def find_root(env: Mapping[str, str], roots: Sequence[str] | None = None) -> tuple[str, str] | None:
    """The installation from BAREUN_ROOT, else the first default location that holds one.

    Returns (root, how it was found). By hand: ``echo $BAREUN_ROOT; ls /opt/bareun /bareun``.
    """
    from_env = env.get("BAREUN_ROOT")
    if from_env and os.path.isdir(from_env):
        return os.path.abspath(from_env), "BAREUN_ROOT"
    for root in default_roots() if roots is None else roots:
        if os.path.isdir(root) and looks_like_bareun(root):
            return root, "default location"
    return None


# --- log files -----------------------------------------------------------------------------------


_ROTATED = re.compile(r"^(?P<base>.+?)(?:[.-]\d+(?:\.gz)?|\.gz)$")


def log_files(directory: str, limit: int = 4) -> tuple[str, ...]:
    """The current log files in the log directory, newest first, at most ``limit``.

    Rotations (``bareun.log.1``, ``bareun.log.2.gz``) of a file that is there are left out:
    the log reader takes them itself when the current file holds no start-up.
    By hand: ``ls -lt $BAREUN_ROOT/var/logs``.
    """
    try:
        with os.scandir(directory) as scan:
            files = {entry.name: (entry.stat().st_mtime, entry.path) for entry in scan if entry.is_file()}
    except OSError:
        return ()
    current = []
    for name, (mtime, path) in files.items():
        match = _ROTATED.match(name)
        if match and match.group("base") in files:
            continue
        current.append((mtime, path))
    current.sort(key=lambda item: (-item[0], item[1]))
    return tuple(path for _mtime, path in current[:limit])
