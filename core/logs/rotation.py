"""A log and its rotations, and a folder of logs: which files to read, newest first."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from fallback_doctor.core.logs.lines import LogLine, LogReadError, LogText
from fallback_doctor.core.logs.reader import DEFAULT_BUDGET, read_tail

_DATE_SUFFIX = re.compile(r"^-(\d{8,10})(\.gz)?$")
_NUMBER_SUFFIX = re.compile(r"^\.(\d{1,4})(\.gz)?$")
_ROTATED_NAME = re.compile(r"(?:\.gz|\.\d{1,4}|-\d{8,10})$")


def rotated_siblings(path: str | os.PathLike[str]) -> list[Path]:
    """The rotations of a log in its directory, newest first (``app.log.1``, ``app.log.2.gz``,
    logrotate's ``app.log-20240131[.gz]``). By hand: ``ls -t app.log*``."""
    file_path = Path(path)
    directory = file_path.parent
    numbered: list[tuple[int, Path]] = []
    dated: list[tuple[str, Path]] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(file_path.name) or entry == file_path:
            continue
        suffix = entry.name[len(file_path.name) :]
        number = _NUMBER_SUFFIX.match(suffix)
        if number:
            numbered.append((int(number.group(1)), entry))
            continue
        date = _DATE_SUFFIX.match(suffix)
        if date:
            dated.append((date.group(1), entry))
    numbered.sort(key=lambda pair: pair[0])
    dated.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in numbered] + [entry for _, entry in dated]


def newest_log_in(directory: str | os.PathLike[str]) -> Path | None:
    """The most recently written log file in a directory (not a rotation), or None."""
    candidates: list[tuple[float, Path]] = []
    for entry in Path(directory).iterdir():
        if not entry.is_file() or _ROTATED_NAME.search(entry.name):
            continue
        try:
            candidates.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    candidates.sort(key=lambda pair: pair[0], reverse=True)
    return candidates[0][1] if candidates else None


def read_log(
    path: str | os.PathLike[str],
    budget: int = DEFAULT_BUDGET,
    *,
    follow_rotation: bool = True,
    stop_when: Callable[[LogText], bool] | None = None,
) -> list[LogText]:
    """Read a log and, while needed, its rotations: newest file first, within one byte budget.

    A directory means its most recently written log. Older rotations are read only when the
    newer file was read whole, budget is left, and ``stop_when`` (e.g. "a start-up was found")
    is not yet true. The result is newest first; ``chronological`` reverses it.
    """
    file_path = Path(path)
    if str(path) != "-" and file_path.is_dir():
        newest = newest_log_in(file_path)
        if newest is None:
            raise LogReadError(f"{path}: no log file in this directory")
        file_path = newest
    first = read_tail(file_path if str(path) != "-" else "-", budget)
    texts = [first]
    if str(path) == "-" or not follow_rotation:
        return texts
    remaining = budget - (first.size - first.skipped)
    if not first.complete or (stop_when is not None and stop_when(first)):
        return texts
    for sibling in rotated_siblings(file_path):
        if remaining <= 0:
            break
        try:
            text = read_tail(sibling, remaining)
        except LogReadError:
            continue
        texts.append(text)
        remaining -= text.size - text.skipped
        if not text.complete or (stop_when is not None and stop_when(text)):
            break
    return texts


def chronological(texts: list[LogText]) -> Iterator[LogLine]:
    """All lines of ``read_log``'s result, oldest first."""
    for text in reversed(texts):
        yield from text.lines
