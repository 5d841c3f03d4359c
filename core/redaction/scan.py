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

from fallback_doctor.core.redaction.detect_keys import Raw

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


def _merged(spans: list[tuple[int, int]], whole: bool, length: int) -> list[tuple[int, int]]:
    """Overlapping windows joined, in order; the whole text for a detector that needs it."""
    if not spans:
        return []
    if whole:
        return [(0, length)]
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def _literal_groups(detectors: tuple[Detector, ...]) -> list[tuple[re.Pattern[str], dict[str, list[int]]]]:
    """The detectors' literals grouped by their first character: one pattern per group.

    A pattern that starts with a literal character is searched as fast as ``str.find``, so twenty
    groups cost what twenty literals did, not fifty; a literal two detectors share is searched once.
    """
    by_first: dict[str, dict[str, list[int]]] = {}
    for index, detector in enumerate(detectors):
        for literal in detector.literals:
            by_first.setdefault(literal[0], {}).setdefault(literal, []).append(index)
    groups = []
    for first, literals in sorted(by_first.items()):
        rests = sorted({literal[1:] for literal in literals}, key=len, reverse=True)
        alternatives = "|".join(re.escape(rest) for rest in rests)
        groups.append(
            (re.compile(re.escape(first) + (f"(?:{alternatives})" if alternatives else "")), literals)
        )
    return groups


def anchored_finditer(
    pattern: re.Pattern[str], text: str, start: int, end: int, anchor: str, reach: int
) -> Iterable[re.Match[str]]:
    """``pattern.finditer(text, start, end)``, the pattern tried only near each ``anchor``.

    For a pattern every match of which holds ``anchor`` at most ``reach`` characters after its
    start (``://`` after a scheme of at most 16): a regular expression without a literal first
    character is tried at every position, the C string search skips to the anchors instead.
    """
    position = start
    while (at := text.find(anchor, position, end)) >= 0:
        match = pattern.search(text, max(position, at - reach), end)
        if match is None:
            return
        yield match
        position = match.end() if match.end() > match.start() else match.end() + 1


def starts_finditer(
    pattern: re.Pattern[str], text: str, start: int, end: int, literals: tuple[str, ...]
) -> Iterable[re.Match[str]]:
    """``pattern.finditer(text, start, end)`` for a pattern every match of which starts at one of
    ``literals`` (lower case; matched in any case) or at the start of a line.

    The pattern is tried at those places only (``host=`` or a line start, not every character).
    """
    window = text[start:end].lower()
    if len(window) != end - start:  # a character that lower-cases to two: no shortcut
        yield from pattern.finditer(text, start, end)
        return
    candidates = {start} if start == 0 or text[start - 1] == "\n" else set()
    for literal in ("\n", *literals):
        at = window.find(literal)
        while at >= 0:
            candidates.add(start + at + (1 if literal == "\n" else 0))
            at = window.find(literal, at + 1)
    position = start
    for candidate in sorted(candidates):
        if candidate < position or candidate > end:
            continue
        match = pattern.match(text, candidate, end)
        if match is not None:
            yield match
            position = match.end() if match.end() > match.start() else match.end() + 1


def first_character_patterns(literals: Iterable[str]) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """One pattern per first character of ``literals`` (non-empty), with the literals it stands for."""
    by_first: dict[str, set[str]] = {}
    for literal in literals:
        by_first.setdefault(literal[0], set()).add(literal)
    patterns = []
    for first, group in sorted(by_first.items()):
        rests = sorted({literal[1:] for literal in group}, key=len, reverse=True)
        alternatives = "|".join(re.escape(rest) for rest in rests)
        pattern = re.compile(re.escape(first) + (f"(?:{alternatives})" if alternatives else ""))
        patterns.append((pattern, tuple(sorted(group, key=len, reverse=True))))
    return patterns


def occurrences(
    text: str, patterns: list[tuple[re.Pattern[str], tuple[str, ...]]]
) -> Iterable[tuple[int, str]]:
    """(position, literal) of every occurrence of every literal, overlapping ones too, unordered.

    What ``str.find`` in a loop per literal gives, with one pass per first character.
    """
    for pattern, group in patterns:
        match = pattern.search(text)
        while match is not None:
            position = match.start()
            for literal in group:
                if text.startswith(literal, position):
                    yield position, literal
            match = pattern.search(text, position + 1)


_GROUPS: dict[tuple[Detector, ...], list[tuple[re.Pattern[str], dict[str, list[int]]]]] = {}


def _literal_spans(lowered: str, detectors: tuple[Detector, ...]) -> list[list[tuple[int, int]]]:
    """Each detector's line windows from its literals, every group's pattern crossing the text once."""
    groups = _GROUPS.get(detectors)
    if groups is None:
        groups = _GROUPS[detectors] = _literal_groups(detectors)
    spans: list[list[tuple[int, int]]] = [[] for _ in detectors]
    for pattern, literals in groups:
        match = pattern.search(lowered)
        while match is not None:
            position = match.start()
            line_end = lowered.find("\n", position)
            line_end = len(lowered) if line_end < 0 else line_end
            window = _line_window(lowered, position)
            for literal, indexes in literals.items():
                for index in indexes:
                    if (not spans[index] or spans[index][-1] != window) and _on_line(
                        lowered, literal, position, line_end, detectors[index].check
                    ):
                        spans[index].append(window)
            # The next hit that matters is on a line after this one: every literal of the group
            # on this line has been looked at.
            match = pattern.search(lowered, line_end + 1) if line_end < len(lowered) else None
    return spans


def _on_line(
    lowered: str, literal: str, start: int, line_end: int, check: Callable[[str, int, int], bool] | None
) -> bool:
    """Whether ``literal`` is in lowered[start:line_end] somewhere ``check`` accepts."""
    position = lowered.find(literal, start, line_end)
    while position >= 0 and check is not None and not check(lowered, position, position + len(literal)):
        position = lowered.find(literal, position + 1, line_end)
    return position >= 0


def _windows(
    text: str, lowered: str | None, detector: Detector, from_literals: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The merged (start, end) windows in which ``detector`` can match."""
    spans = list(from_literals)
    if lowered is None and detector.literals:
        combined = _insensitive(detector.literals)
        _collect(spans, text, _pattern_finder(combined, text, detector.check))
    for pattern in detector.patterns:
        _collect(spans, text, _pattern_finder(pattern, text, None))
    return _merged(spans, detector.whole, len(text))


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


def scan(text: str, detectors: Iterable[Detector], lowered: str | None = None) -> list[Raw]:
    """Every match of every detector in ``text``, each detector run only where it can match.

    ``lowered``: ``text.lower()`` when the caller has it already.
    """
    chosen = tuple(detectors)
    folded = text.lower() if lowered is None else lowered
    # A character that lower-cases to two ("İ") would shift the positions: search case-blind then.
    same = folded if len(folded) == len(text) else None
    from_literals = _literal_spans(same, chosen) if same is not None else [[] for _ in chosen]
    found: list[Raw] = []
    for detector, spans in zip(chosen, from_literals, strict=True):
        if detector.always:
            found.extend(detector.find(text, 0, len(text)))
            continue
        for start, end in _windows(text, same, detector, spans):
            found.extend(detector.find(text, start, end))
    return found
