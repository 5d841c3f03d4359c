"""Parse ``LD_DEBUG=libs`` output: which library names ld.so searched, where, and what it took.

By hand: ``LD_DEBUG=libs python -c 'import ctypes; ctypes.CDLL("/path/lib.so")' 2>&1 | less``.
Each search is a block::

    12345:	find library=libcublasLt.so.13 [0]; searching
    12345:	 search path=/a:/b		(LD_LIBRARY_PATH)
    12345:	  trying file=/a/libcublasLt.so.13
    12345:	 search cache=/etc/ld.so.cache
    12345:

The file taken is the last one tried, unless the load failed on that name (ld.so then prints
"NAME: cannot open shared object file" / "error while loading shared libraries"), which the
caller passes as ``failed`` or which is read from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^\s*\d+:\s?(?P<body>.*)$")
_FIND = re.compile(r"^find library=(?P<name>\S+) \[\d+\]; searching")
_TRY = re.compile(r"^\s+trying file=(?P<path>.+?)\s*$")
_SEARCH = re.compile(r"^\s+search (?:path=(?P<path>\S*)\s+\((?P<why>[^)]*)\)|cache=(?P<cache>\S+))")
_FAIL = re.compile(r"(?P<name>[^\s:]+): cannot open shared object file")


@dataclass(frozen=True)
class LdDebugSearch:
    """One ``find library`` block."""

    name: str
    tried: tuple[str, ...]
    steps: tuple[str, ...]
    """The reasons ld.so printed, in order: LD_LIBRARY_PATH, RUNPATH from file …, cache, system."""
    found: str | None
    """The file taken (the last tried) or None when this name failed to load."""


def failed_names(text: str) -> tuple[str, ...]:
    """Names ld.so reported as "cannot open shared object file", in order."""
    return tuple(dict.fromkeys(match["name"] for match in _FAIL.finditer(text)))


def parse_ld_debug_libs(text: str, failed: tuple[str, ...] | None = None) -> tuple[LdDebugSearch, ...]:
    """Every ``find library`` block of ``LD_DEBUG=libs`` output, in order. Never raises."""
    failures = set(failed if failed is not None else failed_names(text))
    searches: list[LdDebugSearch] = []
    name: str | None = None
    tried: list[str] = []
    steps: list[str] = []

    def close() -> None:
        if name is not None:
            found = None if (name in failures or not tried) else tried[-1]
            searches.append(LdDebugSearch(name, tuple(tried), tuple(steps), found))

    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        body = match["body"]
        find = _FIND.match(body)
        if find is not None:
            close()
            name, tried, steps = find["name"], [], []
            continue
        if name is None:
            continue
        attempt = _TRY.match(body)
        if attempt is not None:
            tried.append(attempt["path"])
            continue
        search = _SEARCH.match(body)
        if search is not None:
            steps.append("cache" if search["cache"] else search["why"])
            continue
        if not body.strip():
            close()
            name, tried, steps = None, [], []
    close()
    return tuple(searches)
