"""Opening what is handed over as a log: only regular files, without blocking, and only logs.

``O_NONBLOCK`` keeps a FIFO from blocking the open, and ``fstat`` on the descriptor (not on
the name, which could change in between) decides: a FIFO, a socket, a device or a directory is
refused with the file's name and what it is. An empty file or binary data is not a log and
says so. A ``.gz`` inflates to at most ``INFLATED_CAP`` bytes (inflated bytes are read bytes).

By hand: ``stat -c %F FILE`` and ``file FILE``.
"""

from __future__ import annotations

import errno
import os
import zlib
from typing import BinaryIO

from fallback_doctor.core.platform.files import open_without_blocking, special_file_words
from fallback_doctor.core.readers.logs.lines import LogReadError, bom_of, sniff_utf16

INFLATED_CAP = 256 * 1024 * 1024
"""A ``.gz`` is read to at most this many inflated bytes: a rotated day of a busy server
(a 25 MB ``.gz`` of text) fits, and a gzip bomb costs what 256 MiB of log does."""

# Reading bytes


def open_regular(path: str | os.PathLike[str], name: str | None = None) -> BinaryIO:
    """Open a regular file for reading without blocking; refuse anything else, saying why.

    ``O_NONBLOCK`` keeps a FIFO from blocking the open; ``fstat`` on the descriptor (not on
    the name, which could change in between) decides. By hand: ``stat -c %F FILE``.
    """
    name = name or str(path)
    try:
        descriptor = open_without_blocking(path)
    except OSError as error:
        try:  # a socket cannot be opened at all: say what it is
            mode: int | None = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None:
            _refuse_special(name, mode)
        raise LogReadError(f"{name}: cannot be read: {reason(error)}") from error
    try:
        _refuse_special(name, os.fstat(descriptor).st_mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _refuse_special(name: str, mode: int) -> None:
    words = special_file_words(mode)
    if words is not None:
        raise LogReadError(f"{name}: refused: {words}; only regular files are read as logs")


def reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno is not None and getattr(error, "strerror", None):
        words = str(error.strerror)
        if error.errno == errno.ELOOP:
            words = "a symbolic link loop"
        return words.lower() if words[:1].isupper() and words[1:2].islower() else words
    return str(error) or type(error).__name__


def not_a_log(head: bytes, size: int) -> str | None:
    """Why these first bytes are not a log (empty, an executable, binary data), or None."""
    if size == 0:
        return "an empty file: there is nothing to read"
    if head.startswith(b"\x7fELF"):
        return "an ELF executable or library, not a log"
    if head.startswith(b"MZ") and b"This program cannot be run in DOS mode" in head[:512]:
        return "a Windows executable or DLL, not a log"
    if bom_of(head) or sniff_utf16(head) or is_docker_raw(head):
        return None
    sample = head[:4096]
    # NUL runs are left in real logs (copytruncate rotation, a sparse hole): not counted.
    controls = sum(1 for byte in sample if 0 < byte < 9 or (13 < byte < 32 and byte != 27))
    if sample and controls / len(sample) > 0.1:
        return "binary data, not a log (more than a tenth of its first bytes are control bytes)"
    return None


class CappedStream:
    """A decompressing stream that stops at ``cap`` bytes and says so (``capped``)."""

    def __init__(self, stream: BinaryIO, name: str, cap: int = INFLATED_CAP) -> None:
        self._stream = stream
        self._name = name
        self._left = cap
        self.capped = False

    def read(self, size: int = -1, /) -> bytes:
        if self._left <= 0:
            self.capped = True
            return b""
        want = self._left if size < 0 else min(size, self._left)
        try:
            data = self._stream.read(want)
        except (OSError, EOFError, zlib.error) as error:
            raise LogReadError(f"{self._name}: corrupt compressed data: {error}") from error
        self._left -= len(data)
        return data


def is_docker_raw(head: bytes) -> bool:
    """``docker logs`` captured raw: 8-byte frame headers (stream 0-2, three zeros, size)."""
    if len(head) < 9 or head[:1] not in (b"\x00", b"\x01", b"\x02") or head[1:4] != b"\x00\x00\x00":
        return False
    size = int.from_bytes(head[4:8], "big")
    return 0 < size < 1 << 24 and head[8:9] != b"\x00"
