"""Find the part of a log that matters: the most recent start-up, and the lines around a failure.

A start-up is a line matched by a ``startup`` signature of resources/signatures/startup.json
(journalctl's ``-- Boot … --``, systemd's ``Starting …``, a server's first line, the Python
banner, an NVIDIA container banner, Bareun's ``Use config file:``). Lines that only describe the
machine (installed packages, a container, WSL) are read from the whole window by the diagnosis;
the causes come from the latest start-up onwards.

By hand: ``grep -n -E '^-- Boot|systemd\\[1\\]: Start|Use config file' app.log | tail -1``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from fallback_doctor.core.readers.logs.lines import LogLine, LogText
from fallback_doctor.core.readers.logs.signatures import SignatureBase, load_signatures, matchable


def is_startup(line: LogLine, base: SignatureBase | None = None) -> bool:
    """True when the line marks a start of the application (a startup signature matches)."""
    base = base or load_signatures()
    window = matchable(line.text)
    lowered = window.lower()
    if not any(word in lowered for word in base.startup_words):
        return False
    for sig in base.by_kind("startup"):
        if any(word in lowered for word in sig.keywords) and sig.pattern.search(window):
            return True
    return False


def startup_index(lines: Sequence[LogLine], base: SignatureBase | None = None) -> int | None:
    """Index of the last start-up line, or None when the lines show no start-up.

    The start-up keywords are looked for in all lines at once (joined, lower-cased); only
    the lines that hold one are checked against the patterns, last first.
    """
    base = base or load_signatures()
    if not lines:
        return None
    joined = "\x00".join(matchable(line.text) for line in lines).lower()
    candidates: set[int] = set()
    starts: list[int] = []
    position = 0
    for line in lines:
        starts.append(position)
        position += len(matchable(line.text)) + 1
    for word in base.startup_words:
        at = joined.find(word)
        while at >= 0:
            candidates.add(bisect.bisect_right(starts, at) - 1)
            at = joined.find(word, at + 1)
    for index in sorted(candidates, reverse=True):
        if is_startup(lines[index], base):
            return index
    return None


def has_startup(text: LogText) -> bool:
    """True when a file's lines contain a start-up (``read_log``'s ``stop_when``)."""
    return startup_index(text.lines) is not None


def latest_run(lines: Sequence[LogLine]) -> tuple[list[LogLine], LogLine | None]:
    """The lines from the most recent start-up on (all lines when none), and that start-up."""
    index = startup_index(lines)
    if index is None:
        return list(lines), None
    return list(lines[index:]), lines[index]


def around(lines: Sequence[LogLine], index: int, before: int = 2, after: int = 2) -> list[LogLine]:
    """The line at ``index`` with up to ``before`` lines before it and ``after`` after it."""
    start = max(0, index - before)
    return list(lines[start : index + after + 1])
