"""Read the dynamic section of an ELF shared object without loading it (pyelftools).

What a technician would run by hand to see the same: ``readelf -d /path/to/lib.so``
(or ``objdump -p``): SONAME, NEEDED, RUNPATH and RPATH entries.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Literal

from fallback_doctor.core.platform.files import open_regular_file

# Index of e_machine values we name; anything else keeps pyelftools' own string.
_MACHINES: dict[str, str] = {
    "EM_X86_64": "x86_64",
    "EM_386": "i386",
    "EM_AARCH64": "aarch64",
    "EM_ARM": "arm",
    "EM_PPC64": "ppc64",
    "EM_S390": "s390",
    "EM_RISCV": "riscv",
}

_MAX_DYNAMIC_BYTES = 64 * 1024 * 1024
"""Refuse absurd sizes from a corrupt header rather than reading gigabytes."""


class NotAnElfFile(ValueError):  # noqa: N818 - the name is part of the shared contract
    """Not an ELF object, or truncated/corrupt so its dynamic section is unreadable."""


@dataclass(frozen=True)
class ElfDynamic:
    """The loader-relevant parts of an ELF object's dynamic section."""

    soname: str | None
    needed: tuple[str, ...]
    """DT_NEEDED entries in file order."""
    runpath: tuple[str, ...]
    """DT_RUNPATH split on ':' (unexpanded: $ORIGIN etc. kept as written)."""
    rpath: tuple[str, ...]
    """DT_RPATH split on ':' (unexpanded)."""
    machine: str
    """x86_64, aarch64, i386 … (pyelftools' EM_* name where unknown to us)."""
    elf_class: int
    """32 or 64."""


def _split_path(value: str) -> tuple[str, ...]:
    return tuple(part for part in value.split(":") if part)


def parse_elf_dynamic(data: bytes) -> ElfDynamic:
    """Parse the dynamic section of an ELF image given as bytes.

    Raises NotAnElfFile for anything that is not a readable ELF object.
    """
    if len(data) < 16 or data[:4] != b"\x7fELF":
        raise NotAnElfFile("not an ELF file (no \\x7fELF magic)")
    stream = io.BytesIO(data)
    fast = _parse_program_headers(stream)
    if fast is not None:
        return fast
    stream.seek(0)
    return _parse_stream(stream)


def read_elf_dynamic(path: str) -> ElfDynamic:
    """Read SONAME, NEEDED, RUNPATH, RPATH, machine and class of the ELF file at ``path``.

    By hand: ``readelf -d PATH`` and ``readelf -h PATH``. Follows symlinks.
    Raises NotAnElfFile for non-ELF or truncated input; OSError if the file cannot be opened.
    """
    with open_regular_file(path) as handle:
        magic = handle.read(16)
        if len(magic) < 16 or magic[:4] != b"\x7fELF":
            raise NotAnElfFile(f"{path}: not an ELF file")
        handle.seek(0)
        try:
            fast = _parse_program_headers(handle)
            if fast is not None:
                return fast
            handle.seek(0)
            return _parse_stream(handle)
        except NotAnElfFile as error:
            raise NotAnElfFile(f"{path}: {error}") from None


def read_elf_dynamic_digested(path: str, *, lazy: bool = False) -> tuple[ElfDynamic, str | None]:
    """``read_elf_dynamic`` with the digest of what was read (None when the slow path read it).

    With ``lazy`` only the strings used are read (the fact cache's check of an entry).
    By hand: ``readelf -d PATH``. Raises as ``read_elf_dynamic`` does.
    """
    with open_regular_file(path) as handle:
        found = read_dynamic_digested(handle, lazy=lazy)
    if found is not None:
        return found
    return read_elf_dynamic(path), None


_MACHINE_CODES: dict[int, str] = {
    62: "x86_64",
    3: "i386",
    183: "aarch64",
    40: "arm",
    21: "ppc64",
    22: "s390",
    243: "riscv",
}
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 1, 5, 10, 14, 15, 29
_MAX_STRTAB_BYTES = 16 * 1024 * 1024


def _parse_program_headers(stream: BinaryIO) -> ElfDynamic | None:
    """The dynamic entries through the program headers, with ``struct`` only.

    This is what ld.so itself reads (PT_DYNAMIC, the string table mapped by PT_LOAD),
    and it is about fifty times faster than walking every section with pyelftools:
    a diagnosis reads a few dozen libraries. Returns None for any layout it does not
    handle plainly (the pyelftools path then decides); the tests check both paths agree.
    """
    found = read_dynamic_digested(stream)
    return None if found is None else found[0]


def read_dynamic_digested(stream: BinaryIO, *, lazy: bool = False) -> tuple[ElfDynamic, str] | None:
    """The fast path's dynamic section and a SHA-256 of every byte it was made from.

    The digest covers the ELF header, the program header table, the PT_DYNAMIC entries and
    each string used (SONAME, NEEDED, RUNPATH, RPATH), so it is the same whether the string
    table is read whole or, with ``lazy``, one string at a time (a few small reads: what the
    fact cache does to check an entry against the file, core/readers/loader/elf_cache.py).
    None for a layout the fast path does not handle.
    """
    digest = hashlib.sha256()
    try:
        ident = stream.read(64)
        digest.update(ident)
        if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
            return None
        wide = ident[4] == 2
        order = "<" if ident[5] == 1 else ">"
        if wide:
            (_, machine, _, _, phoff, _, _, _, phentsize, phnum, _, _, _) = struct.unpack_from(
                order + "HHIQQQIHHHHHH", ident, 16
            )
            ph_format, dyn_format = order + "IIQQQQQQ", order + "qQ"
        else:
            (_, machine, _, _, phoff, _, _, _, phentsize, phnum, _, _, _) = struct.unpack_from(
                order + "HHIIIIIHHHHHH", ident, 16
            )
            ph_format, dyn_format = order + "IIIIIIII", order + "iI"
        if phnum == 0 or phnum >= 0xFFFF or phentsize < struct.calcsize(ph_format):
            return None
        stream.seek(phoff)
        table = stream.read(phentsize * phnum)
        if len(table) < phentsize * phnum:
            return None
        digest.update(table)
        loads: list[tuple[int, int, int]] = []
        dynamic: tuple[int, int] | None = None
        for index in range(phnum):
            fields = struct.unpack_from(ph_format, table, index * phentsize)
            if wide:
                p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = fields
            else:
                p_type, p_offset, p_vaddr, _, p_filesz, _, _, _ = fields
            if p_type == _PT_LOAD:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == _PT_DYNAMIC:
                dynamic = (p_offset, p_filesz)
        if dynamic is None or dynamic[1] > _MAX_DYNAMIC_BYTES:
            return None
        entries = _dynamic_entries(stream, dynamic, dyn_format)
        for pair in entries:
            digest.update(struct.pack("<qQ", pair[0], pair[1] & 0xFFFFFFFFFFFFFFFF))
        values = dict(entries)
        strtab_vaddr, strsz = values.get(_DT_STRTAB), values.get(_DT_STRSZ)
        if strtab_vaddr is None or strsz is None or strsz > _MAX_STRTAB_BYTES:
            return None
        for vaddr, offset, filesz in loads:
            if vaddr <= strtab_vaddr < vaddr + filesz:
                strtab_offset = strtab_vaddr - vaddr + offset
                break
        else:
            return None
        strings = _StringTable(stream, strtab_offset, strsz, lazy)
        found = _dynamic_of(entries, strings, _MACHINE_CODES.get(machine, f"EM_{machine}"), wide, digest)
        return found, digest.hexdigest()
    except (struct.error, OSError, IndexError, ValueError, OverflowError):
        return None


def _dynamic_of(
    entries: list[tuple[int, int]], strings: _StringTable, machine: str, wide: bool, digest: hashlib._Hash
) -> ElfDynamic:
    """The ElfDynamic the entries name, each string read (and added to ``digest``) once."""
    values = dict(entries)

    def text(offset: int) -> str:
        chunk = strings.at(offset)
        digest.update(struct.pack("<QQ", offset, len(chunk)) + chunk)
        return chunk.decode("utf-8", errors="replace")

    needed = tuple(text(value) for tag, value in entries if tag == _DT_NEEDED)
    soname = text(values[_DT_SONAME]) if _DT_SONAME in values else None
    runpath = _split_path(text(values[_DT_RUNPATH])) if _DT_RUNPATH in values else ()
    rpath = _split_path(text(values[_DT_RPATH])) if _DT_RPATH in values else ()
    return ElfDynamic(
        soname=soname,
        needed=needed,
        runpath=runpath,
        rpath=rpath,
        machine=machine,
        elf_class=64 if wide else 32,
    )


_LAZY_STRING_BYTES = 4096
"""One string of a lazy read is at most this long (a RUNPATH longer than this is cut the same
way in both modes, so the digests agree)."""


class _StringTable:
    """The dynamic string table, read whole or one string at a time (``lazy``)."""

    def __init__(self, stream: BinaryIO, offset: int, size: int, lazy: bool) -> None:
        self.stream, self.offset, self.size, self.lazy = stream, offset, size, lazy
        self.whole: bytes | None = None
        if not lazy:
            stream.seek(offset)
            self.whole = stream.read(size)

    def at(self, offset: int) -> bytes:
        """The NUL-terminated string at ``offset`` (without its NUL), at most _LAZY_STRING_BYTES."""
        if offset < 0 or offset >= self.size:
            raise IndexError(offset)
        length = min(_LAZY_STRING_BYTES, self.size - offset)
        if self.whole is not None:
            window = self.whole[offset : offset + length]
        else:
            self.stream.seek(self.offset + offset)
            window = self.stream.read(length)
        end = window.find(b"\0")
        return bytes(window[: end if end >= 0 else len(window)])


def _dynamic_entries(stream: BinaryIO, dynamic: tuple[int, int], dyn_format: str) -> list[tuple[int, int]]:
    """The (d_tag, d_val) pairs of PT_DYNAMIC up to DT_NULL. By hand: ``readelf -d LIB``."""
    stream.seek(dynamic[0])
    raw = stream.read(dynamic[1])
    entries: list[tuple[int, int]] = []
    for d_tag, d_val in struct.iter_unpack(
        dyn_format, raw[: len(raw) - len(raw) % struct.calcsize(dyn_format)]
    ):
        if d_tag == 0:
            break
        entries.append((d_tag, d_val))
    return entries


def _parse_stream(stream: BinaryIO) -> ElfDynamic:
    # Imported here: pyelftools is only needed when a file is actually read.
    from elftools.elf.dynamic import DynamicSection, DynamicSegment, DynamicTag
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(stream)
        elf_class = int(elf.elfclass)
        machine_raw = str(elf["e_machine"])
        machine = _MACHINES.get(machine_raw, machine_raw)
        tags: list[DynamicTag] = []
        found_dynamic = False
        for section in elf.iter_sections():
            if not isinstance(section, DynamicSection):
                continue
            if section["sh_type"] == "SHT_NOBITS":
                continue
            if int(section["sh_size"]) > _MAX_DYNAMIC_BYTES:
                raise NotAnElfFile("dynamic section size is implausible")
            found_dynamic = True
            tags = list(section.iter_tags())
            break
        if not found_dynamic:
            # Stripped section headers: fall back to the PT_DYNAMIC segment.
            for segment in elf.iter_segments():
                if segment["p_type"] == "PT_DYNAMIC" and isinstance(segment, DynamicSegment):
                    tags = list(segment.iter_tags())
                    break
        soname: str | None = None
        needed: list[str] = []
        runpath: tuple[str, ...] = ()
        rpath: tuple[str, ...] = ()
        for tag in tags:
            kind = tag.entry.d_tag
            if kind not in ("DT_NEEDED", "DT_SONAME", "DT_RUNPATH", "DT_RPATH"):
                continue
            # pyelftools sets a string tag's text as an attribute named after it (DT_NEEDED: .needed).
            text = str(getattr(tag, kind[3:].lower()))
            if kind == "DT_NEEDED":
                needed.append(text)
            elif kind == "DT_SONAME":
                soname = text
            elif kind == "DT_RUNPATH":
                runpath = _split_path(text)
            else:
                rpath = _split_path(text)
        return ElfDynamic(
            soname=soname,
            needed=tuple(needed),
            runpath=runpath,
            rpath=rpath,
            machine=machine,
            elf_class=elf_class,
        )
    except NotAnElfFile:
        raise
    except Exception as error:  # noqa: BLE001 - pyelftools/construct raise many kinds on bad bytes
        raise NotAnElfFile(f"unreadable ELF ({type(error).__name__}: {error})") from None


def is_elf(path: str) -> bool:
    """Whether ``path`` starts with the ELF magic (cheap check; by hand: ``file PATH``)."""
    try:
        with open_regular_file(path) as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_identity(path: str) -> tuple[int, str] | None:
    """(class, machine) from the ELF header only, or None for a non-ELF/unreadable file.

    Cheap: reads 20 bytes. Used to skip wrong-class candidates like ld.so does.
    """
    try:
        with open_regular_file(path) as handle:
            header = handle.read(20)
    except OSError:
        return None
    return elf_identity_from_bytes(header)


_EM_CODES: dict[int, str] = {
    3: "i386",
    62: "x86_64",
    183: "aarch64",
    40: "arm",
    21: "ppc64",
    22: "s390",
    243: "riscv",
}


def elf_identity_from_bytes(header: bytes) -> tuple[int, str] | None:
    """(class, machine) from the first 20 bytes of an ELF header, or None."""
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    elf_class = {1: 32, 2: 64}.get(header[4])
    if elf_class is None:
        return None
    byteorder: Literal["little", "big"] = "little" if header[5] == 1 else "big"
    code = int.from_bytes(header[18:20], byteorder)
    return elf_class, _EM_CODES.get(code, f"EM_{code}")


def realpath(path: str) -> str:
    """The path with every symlink followed (os.path.realpath, kept here for one import site)."""
    return os.path.realpath(path)
