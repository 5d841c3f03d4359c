"""The target's own files and folders, where no output of the tool may go (issue 28).

The tool promises to change none of the target's files: ``diagnose --bundle
<root>/config/bareun.json --force`` replaced the server's configuration with a zip. An output
path is refused, ``--force`` or not, when it is (or, through a link or a hard link, is the same
file as) one of the target's files the report names, or lies inside one of its folders:

- files: the configuration, the logs (the report's and the log files read);
- folders: the configuration's and the logs' folders, the libPath, the application's Python
  environment (its ``sys.prefix``).

By hand: ``realpath OUTPUT`` and compare with the paths the report names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

_PROMISE = "the tool changes none of the target's files (refused even with --force)"


class OutputIsTargetFileError(PermissionError):
    """The output path is one of the target's files or inside one of its folders."""


def _strings(values: object) -> list[str]:
    if isinstance(values, str):
        return [values]
    if isinstance(values, list | tuple):
        return [item for item in values if isinstance(item, str)]
    return []


def _section(document: Mapping[str, object], *keys: str) -> Mapping[str, object]:
    current: object = document
    for key in keys:
        current = current.get(key) if isinstance(current, Mapping) else None
    return current if isinstance(current, Mapping) else {}


def target_paths(document: Mapping[str, object], sources: Iterable[str] = ()) -> tuple[str, ...]:
    """The target's files and folders the report ``document`` names, and ``sources`` (files
    read for the bundle), each as written (``refusal`` resolves them)."""
    target = _section(document, "environment", "target")
    log = _section(document, "environment", "log")
    python = _section(document, "environment", "python")
    files = [
        *_strings(target.get("config_path")),
        *_strings(target.get("log_paths")),
        *_strings(log.get("sources")),
        *sources,
    ]
    folders = [os.path.dirname(path) for path in _strings(target.get("config_path"))]
    folders += _strings(target.get("log_dir")) + _strings(target.get("lib_path"))
    folders += _strings(python.get("prefix"))
    # A folder that is the root of the file system (a Python whose prefix is "/") would refuse
    # every path: such a folder is left out, its files are still protected by name.
    folders = [
        folder for folder in folders if os.path.dirname(os.path.realpath(folder)) != os.path.realpath(folder)
    ]
    return tuple(dict.fromkeys(path for path in [*files, *folders] if os.path.isabs(path)))


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:
        return False


def refusal(destination: str | os.PathLike[str], protected: Iterable[str]) -> str | None:
    """Why writing ``destination`` would change one of the target's files (None when it would not)."""
    wanted = os.path.realpath(destination)
    try:
        info: os.stat_result | None = os.stat(wanted)
    except OSError:
        info = None
    for path in protected:
        real = os.path.realpath(path)
        if wanted == real or (_inside(wanted, real) and os.path.isdir(real)):
            what = "folder" if os.path.isdir(real) else "file"
            return f"{os.fspath(destination)} is the target's own {what} {path}: {_PROMISE}"
        try:
            other = os.stat(real)
        except OSError:
            continue
        if info is not None and (info.st_dev, info.st_ino) == (other.st_dev, other.st_ino):
            return f"{os.fspath(destination)} is the same file as the target's {path}: {_PROMISE}"
    return None
