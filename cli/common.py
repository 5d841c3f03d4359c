"""Small helpers shared by the subcommands."""

from __future__ import annotations

from fallback_doctor.core.texts import system_language


class UsageError(Exception):
    """A usage problem the user can fix (a missing file, a bad value): exit status 2."""


def default_language() -> str:
    """ "ko" when the locale is Korean, else "en" (core/texts.py decides, for every front end)."""
    return system_language()
