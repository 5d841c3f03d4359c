"""``os.path.realpath`` with every folder resolved once per diagnosis.

The library inventory asks where hundreds of files really are (one copy per file, the
soname link or the file it points to). ``os.path.realpath`` stats every component of every
path again; a wheel's library lives eleven folders deep. :class:`RealPaths` remembers each
folder's answer, so a file costs one ``readlink``. The answers are those of
``os.path.realpath`` (tests/core/loader/test_loader_realpaths.py compares them on random
trees of links); the memory lives as long as the object (one collection).
By hand: ``readlink -f PATH``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

_MAX_LINKS = 40
"""Like the kernel's limit on links followed in one lookup; past it, os.path.realpath decides."""


class _Loop(Exception):  # noqa: N818 - internal signal, never escapes
    """A link loop: os.path.realpath has its own answer for those."""


class RealPaths:
    """A memoising ``os.path.realpath`` (symlinks followed, non-strict, POSIX paths)."""

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}
        self._active: set[str] = set()

    def __call__(self, path: str) -> str:
        """The canonical path of ``path`` (as ``os.path.realpath(path)``)."""
        if not os.path.isabs(path):
            path = os.path.join(os.getcwd(), path)
        try:
            return self._resolve(path, 0)
        except _Loop:
            return os.path.realpath(path)
        finally:
            self._active.clear()

    def _resolve(self, path: str, links: int) -> str:
        known = self._memo.get(path)
        if known is not None:
            return known
        if path in self._active:
            raise _Loop
        self._active.add(path)
        try:
            result = self._walk(path, links)
        finally:
            self._active.discard(path)
        self._memo[path] = result
        return result

    def _walk(self, path: str, links: int) -> str:
        parent, name = os.path.split(path)
        if parent == path:
            result = path  # the root
        elif "//" in path:
            result = os.path.realpath(path)  # doubled slashes: the plain way
        elif name in ("", "."):
            result = self._resolve(parent, links)  # a trailing slash, a dot
        elif name == "..":
            result = os.path.dirname(self._resolve(parent, links))
        else:
            base = self._resolve(parent, links)
            candidate = os.path.join(base, name)
            try:
                target = os.readlink(candidate)
            except (OSError, ValueError):
                result = candidate  # not a link, or not there: realpath keeps the name
            else:
                if links >= _MAX_LINKS:
                    result = os.path.realpath(candidate)
                else:
                    result = self._resolve(os.path.join(base, target), links + 1)
        return result


def realpath_function() -> RealPaths | Callable[[str], str]:
    """A RealPaths on POSIX; ``os.path.realpath`` itself elsewhere (drive letters, junctions)."""
    return RealPaths() if os.name == "posix" else os.path.realpath
