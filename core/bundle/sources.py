"""What may be read from this machine into a bundle: the application's logs and configuration, nothing else.

A file is refused, with the reason, when it is (or its real location is) a system or user
credential file (``/etc/shadow``, ``~/.ssh``, … : resources/redaction/refused_paths.json); when a
log's real location is in a system folder (``logPath`` set to ``/etc`` takes nothing); when a log
is a symlink that leaves its folder; when it is not a regular file (a FIFO, a socket, a device, a
folder: opened without blocking, checked on the open file); or when it is not text (NUL bytes, or
mostly control characters, outside UTF-16). By hand: ``stat -c '%F %N' FILE``, ``file FILE``.
"""

from __future__ import annotations

import codecs
import fnmatch
import json
import os
import re
import stat
import zlib
from dataclasses import dataclass
from functools import cache

from fallback_doctor.core.platform.resource_files import RESOURCES

SNIFF = 8192
_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
"""Bytes looked at to tell text from binary."""


@dataclass(frozen=True)
class Read:
    """A file read for a bundle, or why it was not."""

    path: str
    data: bytes | None
    refused: str | None = None


@dataclass(frozen=True)
class _Rules:
    credentials: tuple[str, ...]
    patterns: tuple[str, ...]
    system_folders: tuple[str, ...]


@cache
def _rules() -> _Rules:
    data = json.loads(RESOURCES.joinpath("redaction", "refused_paths.json").read_text(encoding="utf-8"))
    return _Rules(
        tuple(data["credentials"]), tuple(data["credential_patterns"]), tuple(data["system_folders"])
    )


def _under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/") or folder == "/"


@cache
def _home_pattern(rest: str) -> re.Pattern[str]:
    home = re.escape(os.path.expanduser("~").rstrip("/"))
    return re.compile(rf"^(?:/home/[^/]+|/root|/Users/[^/]+|/var/home/[^/]+|{home})/{re.escape(rest)}(?:/|$)")


def credential_reason(path: str) -> str | None:
    """Why ``path`` (a real, absolute path) is a credential file, or None."""
    rules = _rules()
    for entry in rules.credentials:
        if entry.startswith("~/"):
            if _home_pattern(entry[2:]).match(path):
                return f"a credential file or folder ({entry})"
        elif _under(path, entry):
            return f"a system credential file or folder ({entry})"
    name = os.path.basename(path)
    for pattern in rules.patterns:
        if fnmatch.fnmatch(name, pattern):
            return f"a key or certificate file ({pattern})"
    return None


def system_folder_reason(path: str) -> str | None:
    """Why a log at ``path`` (real path) is not an application's log: it sits in a system folder."""
    for folder in _rules().system_folders:
        if _under(os.path.dirname(path), folder):
            return f"in the system folder {folder}, not an application's log folder"
    return None


def looks_binary(sample: bytes) -> bool:
    """NUL bytes (outside UTF-16) or mostly control characters: not a text log."""
    if not sample:
        return False
    if sample.startswith(b"\x1f\x8b"):
        try:
            sample = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(sample, SNIFF)
        except zlib.error:
            return True
        if not sample:
            return False
    if sample.startswith(
        (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
    ):
        return False
    even, odd = sample[0::2], sample[1::2]
    if len(sample) >= 4 and (odd.count(0) > 0.3 * len(odd)) != (even.count(0) > 0.3 * len(even)):
        return False  # UTF-16 without a BOM: one byte of two is NUL
    if b"\0" in sample:
        return True
    control = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return control > len(sample) // 10


def read_source(path: str, limit: int, *, kind: str, tail: bool) -> Read:
    """The file at ``path`` for the bundle (at most ``limit`` bytes; its end when ``tail``), or a refusal.

    ``kind`` "log": every rule above; "config": all but the system-folder and symlink rules
    (a configuration may live in /etc/bareun/ and be a link).
    """
    try:
        absolute = os.path.abspath(path)
        real = os.path.realpath(absolute)
    except (OSError, ValueError) as error:
        return Read(path, None, f"cannot be resolved ({error})")
    for candidate in dict.fromkeys((absolute, real)):
        reason = credential_reason(candidate)
        if reason is not None:
            return Read(path, None, f"refused: {reason}")
    if kind == "log":
        reason = system_folder_reason(real)
        if reason is not None:
            return Read(path, None, f"refused: {reason}")
        if os.path.islink(absolute) and not _under(real, os.path.dirname(absolute)):
            return Read(path, None, "refused: a symlink that leaves the log folder")
    return _read_regular(path, real, limit, tail)


def _read_regular(path: str, real: str, limit: int, tail: bool) -> Read:
    try:
        mode = os.stat(real).st_mode
    except OSError as error:
        return Read(path, None, f"cannot be read ({error.strerror or error})")
    if not stat.S_ISREG(mode):
        # Not even opened: opening a device or a FIFO can block or have effects.
        return Read(path, None, f"refused: not a regular file ({_file_type(mode)})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(real, flags)
    except OSError as error:
        return Read(path, None, f"cannot be opened ({error.strerror or error})")
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return Read(path, None, f"refused: not a regular file ({_file_type(info.st_mode)})")
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            head = stream.read(SNIFF)
            if looks_binary(head):
                return Read(path, None, "refused: not a text file")
            if real.endswith(".gz") or head.startswith(b"\x1f\x8b"):
                stream.seek(0)
                return Read(path, stream.read(max(limit, 64 * 1024 * 1024)))
            if tail and info.st_size > limit:
                stream.seek(info.st_size - limit)
                return Read(path, stream.read(limit))
            return Read(path, head + stream.read(max(0, limit - len(head))))
    except OSError as error:
        return Read(path, None, f"cannot be read ({error.strerror or error})")
    finally:
        os.close(descriptor)


def _file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a plain file"
