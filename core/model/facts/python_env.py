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
    metadata_dir: str | None = None
    """The .dist-info / .egg-info directory itself, where there is one."""

    @property
    def normalized_name(self) -> str:
        """The PEP 503 form of the name: onnxruntime_gpu and ONNXRuntime-GPU -> onnxruntime-gpu."""
        return normalize_name(self.name)


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: lower case, runs of '-', '_' and '.' become one '-'."""
    out: list[str] = []
    for char in name.strip().lower():
        if char in "-_.":
            if not out or out[-1] != "-":
                out.append("-")
        else:
            out.append(char)
    return "".join(out)


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
    sys_path: tuple[str, ...] = ()
    """The interpreter's import path in order (the probe script's own folder left out)."""
    base_prefix: str | None = None
    """sys.base_prefix: differs from prefix inside a virtual environment."""
    user_site: str | None = None
    """The per-user site-packages directory, when user site is enabled and it exists."""

    @property
    def in_virtualenv(self) -> bool:
        """True inside a venv/virtualenv (prefix differs from base_prefix)."""
        return self.base_prefix is not None and self.base_prefix != self.prefix

    def distributions_named(self, name: str) -> tuple[Distribution, ...]:
        """Every installed distribution with this (normalised) name, in path order."""
        wanted = normalize_name(name)
        return tuple(dist for dist in self.distributions if dist.normalized_name == wanted)
