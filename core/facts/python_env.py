"""Facts about the target application's Python interpreter and its installed packages."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """One installed distribution as its metadata says (nothing is imported)."""

    name: str
    version: str
    location: str
    """The directory that holds the distribution's files (site-packages)."""


@dataclass(frozen=True)
class PythonEnvFacts:
    """The interpreter that runs the application, as seen by a child it ran."""

    executable: str
    version: str
    prefix: str
    platform: str
    """sys.platform of the interpreter: linux, win32, darwin."""
    machine: str
    site_packages: tuple[str, ...]
    distributions: tuple[Distribution, ...]
