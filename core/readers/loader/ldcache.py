"""The ldconfig cache (/etc/ld.so.cache): pure parsers over bytes and over ``ldconfig -p`` text.

By hand: ``ldconfig -p`` (``ldconfig -p | grep cudnn``) prints the same entries.

Both binary formats are read:

- the old ``ld.so-1.7.0`` format: a 16-byte header, 12-byte entries, strings after the entries
  with offsets relative to the end of the entries;
- the new ``glibc-ld.so.cache1.1`` format: a 48-byte header, 24-byte entries, string offsets
  relative to the start of the new header;
- the "compat" layout (old table followed by a new one, aligned to 8 bytes): the new table is
  used, as ld.so does.

Entries living in ``glibc-hwcaps`` subdirectories (hwcap extension bit set) are kept but sorted
after the plain entries by :meth:`LdCache.lookup`: we do not read the CPU's ISA level, so the
plain copy is what we report (document this simplification wherever it matters).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field

from fallback_doctor.core.platform.files import open_regular_file

OLD_MAGIC = b"ld.so-1.7.0"
NEW_MAGIC = b"glibc-ld.so.cache1.1"
DEFAULT_CACHE_PATH = "/etc/ld.so.cache"

_OLD_HEADER = 16
_OLD_ENTRY = 12
_NEW_HEADER = 48
_NEW_ENTRY = 24
_HWCAP_EXTENSION = 1 << 62
_MAX_ENTRIES = 1_000_000

# flags & 0xff: the library type; flags & 0xff00: the architecture (glibc ldconfig.h).
FLAG_ELF_LIBC6 = 0x0003
_ARCH_NAMES: dict[int, str] = {
    0x0000: "",
    0x0100: "IA-64",
    0x0200: "64bit",  # sparc64
    0x0300: "x86-64",
    0x0400: "64bit",  # s390x
    0x0500: "64bit",  # ppc64
    0x0600: "N32",
    0x0700: "64bit",  # mips64
    0x0800: "x32",
    0x0900: "hard-float",
    0x0A00: "AArch64",
    0x0B00: "soft-float",
    0x0C00: "nan2008",
    0x0D00: "N32,nan2008",
    0x0E00: "64bit,nan2008",
    0x0F00: "soft-float",  # riscv
    0x1000: "double-float",  # riscv
    0x1100: "soft-float",  # loongarch
    0x1200: "double-float",  # loongarch
}
_TYPE_NAMES: dict[int, str] = {0x00: "libc4", 0x01: "ELF", 0x02: "libc5", 0x03: "libc6"}

# (elf_class, machine) -> the arch flag ld.so accepts for it (_DL_CACHE_DEFAULT_ID).
_ACCEPTED_ARCH: dict[tuple[int, str], int] = {
    (64, "x86_64"): 0x0300,
    (32, "x86_64"): 0x0800,
    (32, "i386"): 0x0000,
    (64, "aarch64"): 0x0A00,
    (64, "ppc64"): 0x0500,
    (64, "s390"): 0x0400,
}


class LdCacheParseError(ValueError):
    """The bytes (or text) are not a readable ld.so.cache."""


@dataclass(frozen=True)
class LdCacheEntry:
    """One library in the cache: its name (the soname), the file, and the flags ldconfig wrote."""

    name: str
    path: str
    flags: int
    hwcap: int = 0

    @property
    def arch(self) -> str:
        """The architecture label as ``ldconfig -p`` prints it, e.g. ``libc6,x86-64``."""
        kind = _TYPE_NAMES.get(self.flags & 0xFF, "unknown")
        arch = _ARCH_NAMES.get(self.flags & 0xFF00, f"0x{self.flags & 0xFF00:x}")
        return f"{kind},{arch}" if arch else kind

    @property
    def in_hwcaps_subdir(self) -> bool:
        """Whether this entry is for a glibc-hwcaps subdirectory (used only on capable CPUs)."""
        return bool(self.hwcap & _HWCAP_EXTENSION)

    def matches(self, elf_class: int, machine: str) -> bool:
        """Whether ld.so would consider this entry for an object of this class and machine.

        Unknown combinations are accepted: the resolver checks the file's own ELF header anyway.
        """
        wanted = _ACCEPTED_ARCH.get((elf_class, machine))
        if wanted is None:
            return True
        return (self.flags & 0xFF00) == wanted


@dataclass(frozen=True)
class LdCache:
    """The parsed cache with a name index; ``source`` says where it came from."""

    entries: tuple[LdCacheEntry, ...]
    source: str
    """The cache file path, or ``ldconfig -p`` when the text fallback was used."""
    _index: dict[str, tuple[LdCacheEntry, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        index: dict[str, list[LdCacheEntry]] = {}
        for entry in self.entries:
            index.setdefault(entry.name, []).append(entry)
        frozen = {
            name: tuple(sorted(items, key=lambda item: item.in_hwcaps_subdir))
            for name, items in index.items()
        }
        object.__setattr__(self, "_index", frozen)

    def lookup(self, name: str, elf_class: int | None = None, machine: str | None = None) -> tuple[str, ...]:
        """The paths the cache gives for ``name``, best first, filtered by class/machine if given."""
        found = self._index.get(name, ())
        if elf_class is not None and machine is not None:
            found = tuple(entry for entry in found if entry.matches(elf_class, machine))
        return tuple(entry.path for entry in found)

    def names(self) -> frozenset[str]:
        """Every library name in the cache."""
        return frozenset(self._index)


def _cstring(data: bytes, offset: int) -> str:
    if offset < 0 or offset >= len(data):
        raise LdCacheParseError(f"string offset {offset} is outside the cache")
    end = data.find(b"\0", offset)
    if end < 0:
        raise LdCacheParseError(f"string at {offset} is not terminated")
    return data[offset:end].decode("utf-8", errors="surrogateescape")


def _parse_new(data: bytes, base: int) -> tuple[LdCacheEntry, ...]:
    if len(data) < base + _NEW_HEADER:
        raise LdCacheParseError("truncated header (new format)")
    endian_flag = data[base + 28]
    order = ">" if endian_flag == 3 else "<"
    nlibs, _len_strings = struct.unpack_from(order + "II", data, base + 20)
    if nlibs > _MAX_ENTRIES or base + _NEW_HEADER + nlibs * _NEW_ENTRY > len(data):
        raise LdCacheParseError(f"entry table of {nlibs} entries does not fit (new format)")
    entries: list[LdCacheEntry] = []
    for index in range(nlibs):
        flags, key, value, _os, hwcap = struct.unpack_from(
            order + "iIIIQ", data, base + _NEW_HEADER + index * _NEW_ENTRY
        )
        entries.append(
            LdCacheEntry(
                name=_cstring(data, base + key),
                path=_cstring(data, base + value),
                flags=flags & 0xFFFFFFFF,
                hwcap=hwcap,
            )
        )
    return tuple(entries)


def _parse_old(data: bytes) -> tuple[LdCacheEntry, ...]:
    if len(data) < _OLD_HEADER:
        raise LdCacheParseError("truncated header (old format)")
    (nlibs,) = struct.unpack_from("<I", data, 12)
    strings = _OLD_HEADER + nlibs * _OLD_ENTRY
    if nlibs > _MAX_ENTRIES or strings > len(data):
        raise LdCacheParseError(f"entry table of {nlibs} entries does not fit (old format)")
    # A new-format table may follow (the "compat" layout): ld.so prefers it.
    new_base = (strings + 7) & ~7
    if data[new_base : new_base + len(NEW_MAGIC)] == NEW_MAGIC:
        return _parse_new(data, new_base)
    entries: list[LdCacheEntry] = []
    for index in range(nlibs):
        flags, key, value = struct.unpack_from("<iII", data, _OLD_HEADER + index * _OLD_ENTRY)
        entries.append(
            LdCacheEntry(
                name=_cstring(data, strings + key),
                path=_cstring(data, strings + value),
                flags=flags & 0xFFFFFFFF,
            )
        )
    return tuple(entries)


def parse_ld_so_cache(data: bytes) -> tuple[LdCacheEntry, ...]:
    """Parse the bytes of an ld.so.cache file (old, new or compat layout), in file order.

    Raises LdCacheParseError for anything else; never another exception.
    """
    if data.startswith(NEW_MAGIC):
        return _parse_new(data, 0)
    if data.startswith(OLD_MAGIC):
        return _parse_old(data)
    raise LdCacheParseError("not an ld.so.cache (unknown magic)")


_LDCONFIG_LINE = re.compile(r"^\s+(?P<name>\S+)\s+\((?P<arch>[^)]*)\)\s+=>\s+(?P<path>.+?)\s*$")
_ARCH_FLAGS: dict[str, int] = {name: code for code, name in _ARCH_NAMES.items() if name}
_TYPE_FLAGS: dict[str, int] = {name: code for code, name in _TYPE_NAMES.items()}


def _flags_from_label(label: str) -> tuple[int, int]:
    parts = [part.strip() for part in label.split(",")]
    flags = _TYPE_FLAGS.get(parts[0], FLAG_ELF_LIBC6) if parts else FLAG_ELF_LIBC6
    hwcap = 0
    for part in parts[1:]:
        if part.startswith("hwcap:"):
            hwcap = _HWCAP_EXTENSION
        elif part.startswith("OS ABI:"):
            continue
        elif part in _ARCH_FLAGS and not flags & 0xFF00:
            flags |= _ARCH_FLAGS[part]
    return flags, hwcap


def parse_ldconfig_p(text: str) -> tuple[LdCacheEntry, ...]:
    """Parse ``ldconfig -p`` output into entries (the fallback when the binary is unreadable).

    Lines that are not entries (the "N libs found" header, "Cache generated by") are skipped.
    """
    entries: list[LdCacheEntry] = []
    for line in text.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if match is None:
            continue
        flags, hwcap = _flags_from_label(match["arch"])
        entries.append(LdCacheEntry(match["name"], match["path"], flags, hwcap))
    return tuple(entries)


def read_ld_so_cache(path: str = DEFAULT_CACHE_PATH) -> LdCache:
    """Read and parse a cache file. By hand: ``ldconfig -p -C PATH``.

    Raises OSError when unreadable and LdCacheParseError when not a cache.
    """
    with open_regular_file(path) as handle:
        data = handle.read(64 * 1024 * 1024)
    return LdCache(parse_ld_so_cache(data), source=path)


def load_ld_cache(path: str = DEFAULT_CACHE_PATH, *, timeout_s: float = 2.0) -> LdCache | None:
    """The cache as ld.so reads it: the binary file first, ``ldconfig -p`` as the fallback.

    None when neither works (a musl system, a container without a cache). By hand: ``ldconfig -p``.
    """
    try:
        return read_ld_so_cache(path)
    except (OSError, LdCacheParseError):
        pass
    ldconfig = shutil.which("ldconfig") or next(
        (candidate for candidate in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(candidate)),
        None,
    )
    if ldconfig is None:
        return None
    try:
        completed = subprocess.run(
            [ldconfig, "-p"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            errors="surrogateescape",
        )
    except (OSError, subprocess.SubprocessError):
        return None
    entries = parse_ldconfig_p(completed.stdout)
    if not entries:
        return None
    return LdCache(entries, source="ldconfig -p")


def render_ldconfig_p(entries: Iterable[LdCacheEntry]) -> list[str]:
    """The entries as ``ldconfig -p`` lines (for comparisons and evidence)."""
    lines = []
    for entry in entries:
        label = entry.arch
        lines.append(f"\t{entry.name} ({label}) => {entry.path}")
    return lines
