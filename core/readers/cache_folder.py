"""The fact cache's folder, opened only when it is the tool's own (core/readers/cache.py).

The folder is under ``HOME`` (``~/.cache/gpu-fallback-doctor/facts``). ``sudo -E`` keeps the
user's ``HOME``, so root would write where that user's folders and links point: a link
``~/.cache/gpu-fallback-doctor -> /etc`` chosen by another user must not decide where root
writes. So the folder is opened one component at a time from ``/`` with ``O_NOFOLLOW``
(``openat``), each missing component is created 0700, and the walk stops, with a reason,
at the first component that

- is a symbolic link owned by another user than the one running the tool (or root),
- belongs to another user (root's folders are fine: ``/``, ``/home``), or
- can be written by other users without the sticky bit (``/tmp`` has it).

The folder itself must be this user's and is made 0700. Where a system cannot open folders
relative to a descriptor (Windows), there is no persistent cache at all. By hand:
``namei -l ~/.cache/gpu-fallback-doctor/facts``.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from fallback_doctor.core.language.texts import label, system_language

Refusal = tuple[str, dict[str, str]]
"""(label key, its parameters): why the folder is not used."""

_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_noted: set[str] = set()


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _open_component(parent: int, name: str, here: str, euid: int) -> tuple[int | None, Refusal | None]:
    """Open (creating it 0700 when missing) the folder ``name`` in ``parent`` without following
    a link that someone other than this user or root owns."""
    try:
        return os.open(name, _DIRECTORY | _NOFOLLOW, dir_fd=parent), None
    except FileNotFoundError:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass
        return os.open(name, _DIRECTORY | _NOFOLLOW, dir_fd=parent), None
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
    info = os.lstat(name, dir_fd=parent)
    if not stat.S_ISLNK(info.st_mode):
        return None, ("cache.refused.not_folder", {"path": here})
    if info.st_uid not in (0, euid):
        return None, ("cache.refused.link", {"path": here, "owner": _owner(info.st_uid)})
    return os.open(name, _DIRECTORY, dir_fd=parent), None


def _component_refusal(info: os.stat_result, here: str, euid: int) -> Refusal | None:
    """Why a folder on the way may not lead to the cache (None when it may)."""
    if info.st_uid not in (0, euid):
        return "cache.refused.owner", {"path": here, "owner": _owner(info.st_uid), "user": _owner(euid)}
    sticky = bool(info.st_mode & stat.S_ISVTX)
    others = bool(info.st_mode & stat.S_IWOTH) or (
        bool(info.st_mode & stat.S_IWGRP) and info.st_gid != os.getegid()
    )
    if others and not sticky:
        return "cache.refused.writable", {"path": here}
    return None


def open_own_folder(directory: str) -> tuple[int | None, Refusal | None]:
    """A descriptor of ``directory`` (created 0700 where missing) when it is this user's own,
    else (None, why). (None, None) where the system cannot do this safely (no ``openat``)."""
    if os.open not in os.supports_dir_fd or os.mkdir not in os.supports_dir_fd or not _NOFOLLOW:
        return None, None
    euid = os.geteuid()
    parts = [part for part in os.path.abspath(directory).split(os.sep) if part]
    current = os.open(os.sep, _DIRECTORY)
    refusal: Refusal | None = None
    try:
        for index, part in enumerate(parts):
            here = os.sep + os.sep.join(parts[: index + 1])
            opened, refusal = _open_component(current, part, here, euid)
            if opened is None:
                break
            os.close(current)
            current = opened
            refusal = _component_refusal(os.fstat(current), here, euid)
            if refusal is not None:
                break
        else:
            info = os.fstat(current)
            if info.st_uid != euid:
                owner, user = _owner(info.st_uid), _owner(euid)
                refusal = ("cache.refused.owner", {"path": directory, "owner": owner, "user": user})
            elif stat.S_IMODE(info.st_mode) & 0o077:
                os.fchmod(current, 0o700)
    except OSError as error:
        refusal = ("cache.refused.error", {"path": directory, "error": error.strerror or str(error)})
    except BaseException:
        os.close(current)
        raise
    if refusal is not None:
        os.close(current)
        return None, refusal
    return current, None


def refusal_words(refusal: Refusal, lang: str = "en") -> str:
    """The refusal in words (the text catalogue's ``cache.refused.*`` labels)."""
    key, params = refusal
    return label(key, lang, **params)


def refusal_note(directory: str, refusal: Refusal) -> None:
    """Say once per run, on stderr, that the cache folder is not used and why."""
    if directory in _noted:
        return
    _noted.add(directory)
    lang = system_language()
    sys.stderr.write(
        f"fallback-doctor: {label('cache.refused', lang, reason=refusal_words(refusal, lang))}\n"
    )
