"""ELF dynamic sections remembered by file identity, within a run and (optionally) across runs.

The libraries of an installed wheel do not change until the wheel is reinstalled: their
SONAME, NEEDED, RUNPATH and RPATH are read once and kept in a FactCache (core/cache.py) keyed
by (st_dev, st_ino, st_size, st_mtime_ns). A replaced or touched file has another identity and
is read again. By hand: ``readelf -d PATH``.
"""

from __future__ import annotations

from typing import Any

from fallback_doctor.core.cache import FactCache, default_cache_dir, file_identity
from fallback_doctor.core.loader.elf import ElfDynamic, elf_identity, read_elf_dynamic

CACHE_NAME = "elf-dynamic"
CACHE_VERSION = 1


def _strings(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return tuple(value)


def decode(value: Any) -> ElfDynamic | None:
    """A stored entry back to an ElfDynamic; None for anything of another shape."""
    if not isinstance(value, dict):
        return None
    soname = value.get("soname")
    needed, runpath, rpath = (_strings(value.get(key)) for key in ("needed", "runpath", "rpath"))
    machine, elf_class = value.get("machine"), value.get("class")
    if (
        (soname is not None and not isinstance(soname, str))
        or needed is None
        or runpath is None
        or rpath is None
        or not isinstance(machine, str)
        or elf_class not in (32, 64)
    ):
        return None
    return ElfDynamic(soname, needed, runpath, rpath, machine, elf_class)


def encode(dynamic: ElfDynamic) -> dict[str, Any]:
    """An ElfDynamic as JSON data (``decode`` reads it back)."""
    return {
        "soname": dynamic.soname,
        "needed": list(dynamic.needed),
        "runpath": list(dynamic.runpath),
        "rpath": list(dynamic.rpath),
        "machine": dynamic.machine,
        "class": dynamic.elf_class,
    }


def open_cache(directory: str | None = None, *, persistent: bool = True) -> FactCache:
    """The ELF fact cache in ``directory`` (default: the user's cache dir); in memory only
    when ``persistent`` is False or caching is turned off."""
    folder = (directory or default_cache_dir()) if persistent else None
    return FactCache(CACHE_NAME, CACHE_VERSION, folder, decode)


class ElfReader:
    """``read_elf_dynamic`` and ``elf_identity`` with the answers kept by file identity."""

    def __init__(self, cache: FactCache | None = None) -> None:
        self.cache = cache if cache is not None else open_cache(persistent=False)
        self.reads = 0
        """How many files were actually read (for the benchmarks and tests)."""

    def dynamic(self, path: str) -> ElfDynamic:
        """The dynamic section of ``path``; raises as ``read_elf_dynamic`` does."""
        before = file_identity(path)
        known: ElfDynamic | None = self.cache.get(path, before)
        if known is not None:
            return known
        self.reads += 1
        dynamic = read_elf_dynamic(path)
        self.cache.put(path, before, file_identity(path), dynamic)
        return dynamic

    def identity(self, path: str) -> tuple[int, str] | None:
        """(class, machine) of ``path``, from the kept dynamic section when there is one."""
        known: ElfDynamic | None = self.cache.get(path, file_identity(path))
        if known is not None:
            return known.elf_class, known.machine
        return elf_identity(path)

    def save(self) -> None:
        """Write what was learnt back to the cache file (nothing when nothing is new)."""
        self.cache.save(encode)
