"""Facts read from a file, kept between runs and trusted only while the file is the same file.

Some facts cannot change while the file they come from does not: the dynamic section of an
installed library (its SONAME, NEEDED, RUNPATH) is one. Reading it again on every diagnosis
costs a few file reads per library; a :class:`FactCache` keeps it under the user's cache
directory (platformdirs ``user_cache_dir``, e.g. ``~/.cache/gpu-fallback-doctor``) keyed by the
path and the file's identity: ``(st_dev, st_ino, st_size, st_mtime_ns)``. A file that was
replaced, rewritten, touched or moved has another identity, so its old entry is never used.

The cache file is an optimisation, never a source of truth, and it is treated as untrusted
input: it is read only when it is a regular file (not a symlink) of at most ``MAX_BYTES``
owned by this user and not writable by others; anything that does not parse, or an entry of
the wrong shape, is ignored (``validate`` decides for each value). Each entry also carries a
digest of the bytes its value was made from, and ``check`` re-reads those bytes from the file
before the entry is trusted (core/readers/loader/elf_cache.py): an entry edited by hand, or a file
rewritten in place with its old size and mtime, is read again, never believed.

The folder is the tool's own (core/readers/cache_folder.py): opened component by component without
following a symbolic link that another user owns, created 0700, refused when it or a folder
above it belongs to another user (``sudo -E`` keeps ``HOME``: root must not write where that
user's links point). A refused folder means no cache for the run and one note on stderr.
It is written atomically (a temporary file in the same folder, then a rename) with mode 0600,
and every error while reading or writing it is swallowed: the caller then reads the file
itself, as without a cache.

``FALLBACK_DOCTOR_CACHE_DIR`` moves the folder; set to ``off`` (or empty) it turns caching off.
By hand: ``ls -l ~/.cache/gpu-fallback-doctor/facts``; deleting the folder is always safe.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import sys
from collections.abc import Callable, Mapping
from typing import Generic, TypeAlias, TypeVar

from fallback_doctor.core.readers.cache_folder import open_own_folder, refusal_note, refusal_words

APP_NAME = "gpu-fallback-doctor"
ENV_DIR = "FALLBACK_DOCTOR_CACHE_DIR"
MAX_BYTES = 4 * 1024 * 1024
"""A cache file larger than this is not read (a hostile or runaway file)."""
MAX_ENTRIES = 1024
"""At most this many entries are written back (the ones used in this run first): a few
environments' libraries. A bigger file costs every run its parsing (4,096 entries: ≈20 ms)."""

FileIdentity = tuple[int, int, int, int]
"""(st_dev, st_ino, st_size, st_mtime_ns) of a file, symlinks followed."""


def file_identity(path: str) -> FileIdentity | None:
    """The identity of the file at ``path`` (symlinks followed), or None when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def default_cache_dir(env: Mapping[str, str] | None = None) -> str | None:
    """The folder for fact caches: FALLBACK_DOCTOR_CACHE_DIR, else platformdirs' user cache dir.

    None when caching is turned off (``FALLBACK_DOCTOR_CACHE_DIR=off`` or empty).
    """
    environ = os.environ if env is None else env
    if ENV_DIR in environ:
        value = environ[ENV_DIR].strip()
        return None if value in ("", "off", "0") else value
    if sys.platform.startswith("linux"):
        # What platformdirs' user_cache_dir answers on Linux (the XDG base directory), without
        # its import (about 10 ms of the quick diagnosis).
        base = environ.get("XDG_CACHE_HOME", "").strip()
        if not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, APP_NAME, "facts")
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # pragma: no cover - a dependency of the tool
        return None
    return os.path.join(user_cache_dir(APP_NAME, appauthor=False), "facts")


def _safe_to_read(handle_fd: int) -> bool:
    info = os.fstat(handle_fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        return False
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or info.st_uid == geteuid()


V = TypeVar("V")

Entry: TypeAlias = tuple[FileIdentity, str, V]
"""(identity of the file, digest of the bytes the value was made from, the value)."""


class FactCache(Generic[V]):
    """One cache file of facts about files, for one kind of fact (``name``) and format ``version``.

    ``validate`` turns a stored value back into a trusted shape or None (then the entry is
    ignored); ``check(path, value, digest)`` re-reads what the value was made from and says
    whether the file still gives that value with that digest. Use ``get``/``put`` with the
    identity taken before reading the file, and the identity taken after: ``put`` stores
    nothing when they differ (the file changed meanwhile). ``refusal`` says why the folder
    was not used (None when it was, or when caching is off).
    """

    def __init__(
        self,
        name: str,
        version: int,
        directory: str | None,
        validate: Callable[[object], V | None],
        check: Callable[[str, V, str], bool] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.directory = directory
        self.path = os.path.join(directory, f"{name}.json") if directory else None
        self._validate = validate
        self._check = check
        self._folder_fd: int | None = None
        self._folder_tried = False
        self.refusal: str | None = None
        """Why the folder is not used, in English (None when it is, or caching is off)."""
        self._entries: dict[str, Entry[V]] | None = None
        self._stored: dict[str, object] = {}
        """Entries as read from the file, checked one by one when first asked for (most never are)."""
        self._used: dict[str, Entry[V]] = {}
        self._dirty = False
        self.hits = 0
        self.misses = 0
        self.rejected = 0
        """Entries whose identity matched but whose check against the file failed (tampered)."""

    def _folder(self) -> int | None:
        """A descriptor of the cache folder, opened once and safely (core/readers/cache_folder.py)."""
        if not self._folder_tried:
            self._folder_tried = True
            if self.directory is not None:
                self._folder_fd, refusal = open_own_folder(self.directory)
                if refusal is not None:
                    self.refusal = refusal_words(refusal)
                    refusal_note(self.directory, refusal)
        return self._folder_fd

    def close(self) -> None:
        """Close the folder's descriptor (the cache can still be used: it is opened again)."""
        if self._folder_fd is not None:
            os.close(self._folder_fd)
        self._folder_fd, self._folder_tried = None, False

    def _load(self) -> dict[str, Entry[V]]:
        if self._entries is not None:
            return self._entries
        self._entries = {}
        folder = self._folder()
        if folder is None:
            return self._entries
        try:
            fd = os.open(
                f"{self.name}.json",
                os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                dir_fd=folder,
            )
        except OSError:
            return self._entries
        try:
            with os.fdopen(fd, "rb") as handle:
                if not _safe_to_read(handle.fileno()):
                    return self._entries
                raw = handle.read(MAX_BYTES + 1)
            data = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return self._entries
        if (
            not isinstance(data, dict)
            or data.get("format") != self.name
            or data.get("version") != self.version
        ):
            return self._entries
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return self._entries
        self._stored = dict(list(entries.items())[:MAX_ENTRIES])
        return self._entries

    def _entry(self, path: str) -> Entry[V] | None:
        """The checked entry for ``path``: one put in this run, else the file's, checked now."""
        entries = self._load()
        entry = entries.get(path)
        if entry is None and path in self._stored:
            entry = self._parse_entry(path, self._stored.pop(path))
            if entry is not None:
                entries[path] = entry
        return entry

    def _parse_entry(self, key: object, item: object) -> Entry[V] | None:
        if not isinstance(key, str) or not isinstance(item, list) or len(item) != 3:
            return None
        identity, digest, value = item
        if (
            not isinstance(identity, list)
            or len(identity) != 4
            or not all(isinstance(part, int) and not isinstance(part, bool) for part in identity)
            or not isinstance(digest, str)
            or len(digest) != 64
        ):
            return None
        try:
            checked = self._validate(value)
        except Exception:  # noqa: BLE001 - a hostile value must not break the caller
            return None
        if checked is None:
            return None
        return (identity[0], identity[1], identity[2], identity[3]), digest, checked

    def get(self, path: str, identity: FileIdentity | None) -> V | None:
        """The value stored for ``path`` when its identity is still ``identity`` and the file,
        read again where the value came from, still gives it; else None."""
        if identity is None:
            return None
        entry = self._entry(path)
        if entry is None or entry[0] != identity:
            self.misses += 1
            return None
        if path not in self._used and self._check is not None:
            try:
                good = self._check(path, entry[2], entry[1])
            except Exception:  # noqa: BLE001 - a hostile file must not break the caller
                good = False
            if not good:
                self.rejected += 1
                self.misses += 1
                (self._entries or {}).pop(path, None)
                self._dirty = True  # the bad entry is dropped from the file
                return None
        self.hits += 1
        self._used[path] = entry
        return entry[2]

    def put(
        self, path: str, before: FileIdentity | None, after: FileIdentity | None, value: V, digest: str
    ) -> None:
        """Keep ``value`` (made from bytes whose SHA-256 is ``digest``) for ``path`` if the file
        stayed the same file while it was read."""
        if before is None or before != after:
            return
        self._load()[path] = (before, digest, value)
        self._used[path] = (before, digest, value)
        self._dirty = True

    def save(self, encode: Callable[[V], object]) -> None:
        """Write the entries back (atomically) when something was added; errors are ignored.

        ``encode`` turns a value into JSON data (``validate`` must accept what it returns).
        Entries carried over unread are written as they were read (each is checked against
        its file when it is next used).
        """
        if not self._dirty:
            return
        folder = self._folder()
        if folder is None:
            return
        entries = dict(self._used)
        for key in [*(self._entries or {}), *self._stored]:
            if len(entries) >= MAX_ENTRIES:
                break
            if key not in entries:
                entry = self._entry(key)  # an entry carried over is checked for shape before it is written
                if entry is not None:
                    entries[key] = entry
        document = {
            "format": self.name,
            "version": self.version,
            "entries": {
                key: [list(identity), digest, encode(value)]
                for key, (identity, digest, value) in entries.items()
            },
        }
        try:
            _write_in(
                folder, f"{self.name}.json", json.dumps(document, separators=(",", ":")).encode("utf-8")
            )
        except (OSError, TypeError, ValueError):
            return
        self._dirty = False


def _write_in(folder: int, name: str, data: bytes) -> None:
    """Write ``name`` in the folder ``folder`` atomically: a new 0600 file, then a rename over it."""
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        os.unlink(temporary, dir_fd=folder)
        raise
