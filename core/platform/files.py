"""Opening a file of the target (bareun.json, a wheel's RECORD or METADATA, a library in a folder)
without ever waiting on it.

A FIFO put where a file is expected blocks ``open()`` until a writer comes, a character device
never ends, and a directory cannot be read: the tool would hang on a customer's machine.
``O_NONBLOCK`` keeps the open from blocking and ``fstat`` on the descriptor (not on the name,
which could change in between) decides: anything but a regular file raises
:class:`NotARegularFileError`, an ``OSError`` whose message names the file and what it is.

By hand: ``stat -c %F FILE``.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe): reading it would wait for a writer"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


class NotARegularFileError(OSError):
    """A FIFO, socket, device or directory where a regular file was expected."""


def special_file_words(mode: int) -> str | None:
    """What a file of ``mode`` is, in words, when it is not a regular file (None when it is)."""
    if stat.S_ISREG(mode):
        return None
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def open_without_blocking(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor, opened so that a FIFO does not wait for a writer (OSError as open)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags | getattr(os, "O_BINARY", 0))


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading in binary mode without blocking; refuse anything else."""
    descriptor = open_without_blocking(path)
    try:
        words = special_file_words(os.fstat(descriptor).st_mode)
        if words is not None:
            message = f"{os.fspath(path)}: refused: {words}; only regular files are read"
            raise NotARegularFileError(errno.EINVAL, message)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file (see :func:`open_regular_file`)."""
    with open_regular_file(path) as handle:
        return handle.read(limit)


def read_regular_text(path: str | os.PathLike[str], limit: int) -> str:
    """At most ``limit`` bytes of a regular file as UTF-8 text (undecodable bytes replaced)."""
    return read_regular_file(path, limit).decode("utf-8", errors="replace")
