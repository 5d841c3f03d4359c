"""Small helpers shared by the subcommands."""

from __future__ import annotations

import locale
import os


class UsageError(Exception):
    """A usage problem the user can fix (a missing file, a bad value): exit status 2."""


def default_language() -> str:
    """ "ko" when the locale is Korean, else "en"."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            return "ko" if value.lower().startswith("ko") else "en"
    try:
        current = locale.getlocale()[0] or ""
    except ValueError:
        current = ""
    return "ko" if current.lower().startswith("ko") else "en"
