"""ELF dynamic sections remembered by file identity, within a run and (optionally) across runs.

The libraries of an installed wheel do not change until the wheel is reinstalled: their
SONAME, NEEDED, RUNPATH and RPATH are read once and kept in a FactCache (core/readers/cache.py) keyed
by (st_dev, st_ino, st_size, st_mtime_ns). A replaced or touched file has another identity and
is read again. An entry is trusted only after a check against the file: its ELF header, program
headers and dynamic entries and the few strings the value names are read again (a few small
reads; the whole string table, the costly read, is not) and must give the same value and the
same SHA-256 of what was read. A cache entry edited by hand, or a library rewritten in place
with its old size and mtime, is then read again, never believed. By hand: ``readelf -d PATH``.
"""

from __future__ import annotations

from fallback_doctor.core.readers.cache import FactCache, FileIdentity, default_cache_dir, file_identity
from fallback_doctor.core.readers.loader.elf import ElfDynamic, elf_identity, read_elf_dynamic_digested

CACHE_NAME = "elf-dynamic"
CACHE_VERSION = 2
"""2: each entry carries the digest of what was read (issue 28)."""


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return tuple(value)


def decode(value: object) -> ElfDynamic | None:
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


def encode(dynamic: ElfDynamic) -> dict[str, object]:
    """An ElfDynamic as JSON data (``decode`` reads it back)."""
    return {
        "soname": dynamic.soname,
        "needed": list(dynamic.needed),
        "runpath": list(dynamic.runpath),
        "rpath": list(dynamic.rpath),
        "machine": dynamic.machine,
        "class": dynamic.elf_class,
    }


def check(path: str, value: ElfDynamic, digest: str) -> bool:
    """Whether ``path``, read again where ``value`` came from, still gives it with ``digest``."""
    again, again_digest = read_elf_dynamic_digested(path, lazy=True)
    return again_digest == digest and again == value


def open_cache(directory: str | None = None, *, persistent: bool = True) -> FactCache[ElfDynamic]:
    """The ELF fact cache in ``directory`` (default: the user's cache dir); in memory only
    when ``persistent`` is False or caching is turned off."""
    folder = (directory or default_cache_dir()) if persistent else None
    return FactCache(CACHE_NAME, CACHE_VERSION, folder, decode, check)


class ElfReader:
    """``read_elf_dynamic`` and ``elf_identity`` with the answers kept by file identity."""

    def __init__(self, cache: FactCache[ElfDynamic] | None = None) -> None:
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
        dynamic, digest = read_elf_dynamic_digested(path)
        if digest is not None:  # the slow path's reads cannot be checked cheaply: not kept
            self.cache.put(path, before, file_identity(path), dynamic, digest)
        return dynamic

    def identity(self, path: str) -> tuple[int, str] | None:
        """(class, machine) of ``path``, from the kept dynamic section when there is one."""
        known: ElfDynamic | None = self.cache.get(path, file_identity(path))
        if known is not None:
            return known.elf_class, known.machine
        return elf_identity(path)

    def save(self) -> None:
        """Write what was learnt back to the cache file (nothing when nothing is new), and let
        go of the cache folder's descriptor (a wizard runs many diagnoses in one process)."""
        self.cache.save(encode)
        self.cache.close()


def identity_of(path: str) -> FileIdentity | None:
    """The identity the cache keys ``path`` by (the tests compare it with what was stored)."""
    return file_identity(path)
