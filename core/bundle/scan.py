"""One pass over a text with many small detectors: a literal prefilter, then full patterns where needed.

Each :class:`Detector` (sos-style: small, declarative) names the literals (or a cheap pattern)
that every one of its matches holds. The scan finds those first, with the string search the C
library does fast, and runs a detector's full patterns only on the lines that hold one of its
literals (and the line after, for a value on the next line). A text without a single ``@`` never
meets the e-mail pattern. By hand: ``grep -n -e '@' -e '://' FILE`` before the real search.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fallback_doctor.core.bundle.detect_keys import Raw

Finder = Callable[[str, int, int], Iterable[Raw]]
"""(text, start, end) -> the matches that begin in text[start:end]."""


@dataclass(frozen=True)
class Detector:
    """One kind of thing to find, with what every match holds (the prefilter)."""

    name: str
    find: Finder
    literals: tuple[str, ...] = ()
    """Lower-case strings one of which is on the line of every match."""
    patterns: tuple[re.Pattern[str], ...] = ()
    """Cheap patterns (starting with a literal character) one of which matches on that line."""
    whole: bool = False
    """Run on the whole text once a trigger is seen (matches that span lines: PEM blocks)."""
    check: Callable[[str, int, int], bool] | None = None
    """A cheap look at a literal's neighbours (text, start, end): False when no match can be there."""

    @property
    def always(self) -> bool:
        """No prefilter: run on everything."""
        return not self.literals and not self.patterns


def _line_window(text: str, position: int) -> tuple[int, int]:
    """The line holding ``position`` and the line after it."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    if end < 0:
        return start, len(text)
    following = text.find("\n", end + 1)
    return start, len(text) if following < 0 else following


def _windows(text: str, lowered: str | None, detector: Detector) -> list[tuple[int, int]]:
    """The merged (start, end) windows in which ``detector`` can match."""
    spans: list[tuple[int, int]] = []
    check = detector.check
    if lowered is not None:
        for literal in detector.literals:
            _collect(spans, text, _finder(lowered, literal, check))
    elif detector.literals:
        combined = _insensitive(detector.literals)
        _collect(spans, text, _pattern_finder(combined, text, check))
    for pattern in detector.patterns:
        _collect(spans, text, _pattern_finder(pattern, text, None))
    if not spans:
        return []
    if detector.whole:
        return [(0, len(text))]
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def _collect(spans: list[tuple[int, int]], text: str, find: Callable[[int], int]) -> None:
    position = find(0)
    while position >= 0:
        window = _line_window(text, position)
        spans.append(window)
        # The next hit that matters is on a line after this one.
        next_line = text.find("\n", position)
        if next_line < 0:
            return
        position = find(next_line + 1)


def _finder(
    lowered: str, literal: str, check: Callable[[str, int, int], bool] | None
) -> Callable[[int], int]:
    """The next position of ``literal`` at or after a start, that passes ``check``; -1 when none."""

    def find(start: int) -> int:
        position = lowered.find(literal, start)
        while position >= 0 and check is not None and not check(lowered, position, position + len(literal)):
            position = lowered.find(literal, position + 1)
        return position

    return find


def _pattern_finder(
    pattern: re.Pattern[str], text: str, check: Callable[[str, int, int], bool] | None
) -> Callable[[int], int]:
    def find(start: int) -> int:
        match = pattern.search(text, start)
        while match is not None and check is not None and not check(text, match.start(), match.end()):
            match = pattern.search(text, match.start() + 1)
        return -1 if match is None else match.start()

    return find


_INSENSITIVE: dict[tuple[str, ...], re.Pattern[str]] = {}


def _insensitive(literals: tuple[str, ...]) -> re.Pattern[str]:
    pattern = _INSENSITIVE.get(literals)
    if pattern is None:
        pattern = re.compile("|".join(map(re.escape, literals)), re.IGNORECASE)
        _INSENSITIVE[literals] = pattern
    return pattern


def scan(text: str, detectors: Iterable[Detector]) -> list[Raw]:
    """Every match of every detector in ``text``, each detector run only where it can match."""
    folded = text.lower()
    # A character that lower-cases to two ("İ") would shift the positions: search case-blind then.
    lowered = folded if len(folded) == len(text) else None
    found: list[Raw] = []
    for detector in detectors:
        if detector.always:
            found.extend(detector.find(text, 0, len(text)))
            continue
        for start, end in _windows(text, lowered, detector):
            found.extend(detector.find(text, start, end))
    return found
