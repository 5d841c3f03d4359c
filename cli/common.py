"""Small helpers shared by the subcommands."""

from __future__ import annotations

import argparse

from fallback_doctor.core.door import TargetSpec, system_language
from fallback_doctor.signals import Terminated, install_signal_handlers

__all__ = ["Terminated", "UsageError", "default_language", "install_signal_handlers", "target_spec"]


class UsageError(Exception):
    """A usage problem the user can fix (a missing file, a bad value): exit status 2."""


def default_language() -> str:
    """ "ko" when the locale is Korean, else "en" (core/language/texts.py decides, for every front end)."""
    return system_language()


def target_spec(args: argparse.Namespace) -> TargetSpec:
    """The TargetSpec of the target options ``diagnose`` and ``check`` share."""
    return TargetSpec(
        kind=args.target,
        python=args.python,
        bareun_root=args.bareun_root,
        config=args.config,
        logs=tuple(args.log or ()),
        pid=args.pid,
        lib_dir=getattr(args, "lib_dir", None),
    )
