"""A log and its rotations, and a folder of logs: which files to read, newest first."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from fallback_doctor.core.readers.logs.excerpt import has_startup
from fallback_doctor.core.readers.logs.lines import LogLine, LogReadError, LogText
from fallback_doctor.core.readers.logs.reader import DEFAULT_BUDGET, open_regular, read_tail
from fallback_doctor.core.readers.logs.scan import HEAD_BYTES, scan_file, startup_words_in

MAX_ROTATIONS = 20
"""Older rotations read at most, looking for a start-up."""

MAX_FOLDER_FILES = 50
"""Log files of a folder read at most."""

ROTATION_KEEP = 512 * 1024
"""Bytes kept at the start and the end of an older rotation (the start-up's file keeps more)."""

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


def log_files_in(directory: str | os.PathLike[str], limit: int = MAX_FOLDER_FILES) -> list[Path]:
    """The log files of a folder (not rotations), most recently written first, at most ``limit``.

    Only regular files count (``lstat``: a link, a FIFO or a device in the folder is not a
    log). By hand: ``ls -t DIR``.
    """
    candidates: list[tuple[float, Path]] = []
    try:
        entries = list(Path(directory).iterdir())
    except OSError as error:
        raise LogReadError(f"{directory}: cannot be read: {error.strerror or error}") from error
    for entry in entries:
        if _ROTATED_NAME.search(entry.name):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            candidates.append((info.st_mtime, entry))
    candidates.sort(key=lambda pair: pair[0], reverse=True)
    return [entry for _, entry in candidates[:limit]]


def newest_log_in(directory: str | os.PathLike[str]) -> Path | None:
    """The most recently written log file in a directory (not a rotation), or None."""
    files = log_files_in(directory, 1)
    return files[0] if files else None


def _skipped(path: Path | str, why: str) -> LogText:
    """A file listed but not read, with why (the reader's reason without the file's name)."""
    prefix = f"{path}: "
    return LogText(str(path), (), "-", 0, 0, "skipped", why[len(prefix) :] if why.startswith(prefix) else why)


def _read_one(path: Path | str, budget: int, scan: bool, keep: int) -> LogText:
    """One file: its end, or (when its end shows no start-up) the whole file scanned."""
    name = str(path)
    if scan and name.endswith(".gz"):
        try:
            return scan_file(path, name, keep=keep)
        except LogReadError as error:
            if "not scannable" not in str(error):
                raise
    if scan and not _tail_may_hold_startup(path, budget):
        try:
            return scan_file(path, name, keep=keep)
        except LogReadError as error:
            if "not scannable" not in str(error):
                raise
    text = read_tail(path, budget)
    if not scan or text.complete or has_startup(text):
        return text
    try:
        return scan_file(path, name, keep=keep)
    except LogReadError:
        return text


def _tail_may_hold_startup(path: Path | str, budget: int) -> bool:
    """Whether the file is read whole by its end, or its end holds a start-up keyword (cheap)."""
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            if size <= budget:
                return True
            handle.seek(size - budget)
            tail = handle.read(budget)
    except LogReadError:
        return True  # read_tail says why
    return startup_words_in(tail)


def read_log(
    path: str | os.PathLike[str],
    budget: int = DEFAULT_BUDGET,
    *,
    follow_rotation: bool = True,
    stop_when: Callable[[LogText], bool] | None = has_startup,
    scan: bool = True,
) -> list[LogText]:
    """Read a log and, while no start-up is found, its rotations: newest file first.

    Each file is read from its end; when that shows no start-up, the whole file is scanned
    (core/readers/logs/scan.py: bounded memory, whole-file time). Older rotations are read until one
    shows a start-up (``stop_when``), at most ``MAX_ROTATIONS``; one that cannot be read is
    listed as skipped with why, and the others are still read. A folder is read as its log
    files (``read_folder``). The result is newest first; ``chronological`` reverses it.
    With ``scan=False``: only the ends, within one byte budget (the old bounded reading).
    """
    if str(path) == "-":
        return [read_tail("-", budget)]
    file_path = Path(path)
    if file_path.is_dir():
        return read_folder(file_path, budget, stop_when=stop_when, scan=scan)
    texts = [_read_one(file_path, budget, scan, HEAD_BYTES)]
    remaining = budget - (texts[0].size - texts[0].skipped)
    done = stop_when is not None and stop_when(texts[0])
    if not follow_rotation or done or (not scan and not texts[0].complete):
        return texts
    for sibling in rotated_siblings(file_path)[:MAX_ROTATIONS]:
        if not scan and remaining <= 0:
            break
        try:
            text = _read_one(sibling, remaining if not scan else budget, scan, ROTATION_KEEP)
        except LogReadError as error:
            texts.append(_skipped(sibling, str(error)))
            continue
        texts.append(text)
        remaining -= text.size - text.skipped
        if (stop_when is not None and stop_when(text)) or (not scan and not text.complete):
            break
    return texts


def read_folder(
    directory: Path,
    budget: int = DEFAULT_BUDGET,
    *,
    stop_when: Callable[[LogText], bool] | None = has_startup,
    scan: bool = True,
) -> list[LogText]:
    """A folder as the log: its log files, newest first, until one shows a start-up.

    An empty file, binary data or a file that cannot be read is listed as skipped with why
    (an empty newest file must not hide the one with the failure). When no file shows a
    start-up, the newest readable one (with its rotations) is the answer.
    """
    files = log_files_in(directory)
    if not files:
        raise LogReadError(f"{directory}: no log file in this directory")
    skipped: list[LogText] = []
    first: list[LogText] | None = None
    for file in files:
        try:
            texts = read_log(file, budget, stop_when=stop_when, scan=scan)
        except LogReadError as error:
            skipped.append(_skipped(file, str(error)))
            continue
        if stop_when is None or any(stop_when(text) for text in texts):
            return texts + skipped
        if first is None:
            first = texts
    if first is None:
        raise LogReadError(f"{directory}: no readable log file: " + "; ".join(t.note for t in skipped[:5]))
    return first + skipped


def chronological(texts: list[LogText]) -> Iterator[LogLine]:
    """All lines of ``read_log``'s result, oldest first (skipped files have none)."""
    for text in reversed(texts):
        yield from text.lines
