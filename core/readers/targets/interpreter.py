"""What ``--python PATH`` names: an interpreter, or a virtual environment's folder, said plainly.

A folder is taken as a virtual environment when it holds ``bin/python`` (``Scripts/python.exe``
on Windows) — the folder the wizard's label invites. A file is taken when its name (symlinks
followed) starts like an interpreter's (python, python3.11, pypy3, python.exe, python-wrapper);
anything else is refused with a sentence naming what it is, instead of diagnosing an
"environment" that never ran.
Nothing is executed here.
"""

from __future__ import annotations

import os
import re

_INTERPRETER = re.compile(r"^(?:python|pypy)[\w.+-]*$", re.IGNORECASE)
"""python, python3.11, pypy3, python.exe, and wrappers named after them (python-debug, python3-wrapper)."""
_IN_VENV = (("bin", "python"), ("bin", "python3"), ("Scripts", "python.exe"), ("python.exe",))
"""A virtual environment's interpreter; last, a Windows installation's folder."""


class NotAnInterpreterError(ValueError):
    """The path is not a Python interpreter nor a virtual environment (the message says why)."""


def interpreter_of(path: str) -> str:
    """The interpreter ``path`` names: itself, or the one inside a virtual environment's folder."""
    if not os.path.lexists(path):
        raise NotAnInterpreterError(f"--python {path}: no such file")
    if os.path.isdir(path):
        for parts in _IN_VENV:
            candidate = os.path.join(path, *parts)
            if os.path.isfile(candidate):
                return candidate
        raise NotAnInterpreterError(
            f"--python {path}: a folder, but not a virtual environment (no bin/python or "
            "Scripts/python.exe in it); name the interpreter, e.g. /path/to/venv/bin/python"
        )
    if not os.path.exists(path):
        raise NotAnInterpreterError(f"--python {path}: a broken link (to {os.readlink(path)})")
    names = {os.path.basename(path), os.path.basename(os.path.realpath(path))}
    if not any(_INTERPRETER.match(name) for name in names):
        raise NotAnInterpreterError(
            f"--python {path}: not a Python interpreter (the file is {os.path.realpath(path)}); "
            "name the application's python, or its virtual environment's folder"
        )
    if not os.access(path, os.X_OK):
        raise NotAnInterpreterError(f"--python {path}: not executable")
    return path
