"""Read the dynamic section of an ELF shared object without loading it (pyelftools).

What a technician would run by hand to see the same: ``readelf -d /path/to/lib.so``
(or ``objdump -p``): SONAME, NEEDED, RUNPATH and RPATH entries.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any

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
    return _parse_stream(io.BytesIO(data))


def read_elf_dynamic(path: str) -> ElfDynamic:
    """Read SONAME, NEEDED, RUNPATH, RPATH, machine and class of the ELF file at ``path``.

    By hand: ``readelf -d PATH`` and ``readelf -h PATH``. Follows symlinks.
    Raises NotAnElfFile for non-ELF or truncated input; OSError if the file cannot be opened.
    """
    with open(path, "rb") as handle:
        magic = handle.read(16)
        if len(magic) < 16 or magic[:4] != b"\x7fELF":
            raise NotAnElfFile(f"{path}: not an ELF file")
        handle.seek(0)
        try:
            return _parse_stream(handle)
        except NotAnElfFile as error:
            raise NotAnElfFile(f"{path}: {error}") from None


def _parse_stream(stream: Any) -> ElfDynamic:
    # Imported here: pyelftools is only needed when a file is actually read.
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(stream)
        elf_class = int(elf.elfclass)
        machine_raw = str(elf["e_machine"])
        machine = _MACHINES.get(machine_raw, machine_raw)
        tags: list[Any] = []
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
                if segment["p_type"] == "PT_DYNAMIC":
                    dynamic_segment: Any = segment
                    tags = list(dynamic_segment.iter_tags())
                    break
        soname: str | None = None
        needed: list[str] = []
        runpath: tuple[str, ...] = ()
        rpath: tuple[str, ...] = ()
        for tag in tags:
            kind = tag.entry.d_tag
            if kind == "DT_NEEDED":
                needed.append(str(tag.needed))
            elif kind == "DT_SONAME":
                soname = str(tag.soname)
            elif kind == "DT_RUNPATH":
                runpath = _split_path(str(tag.runpath))
            elif kind == "DT_RPATH":
                rpath = _split_path(str(tag.rpath))
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
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_identity(path: str) -> tuple[int, str] | None:
    """(class, machine) from the ELF header only, or None for a non-ELF/unreadable file.

    Cheap: reads 20 bytes. Used to skip wrong-class candidates like ld.so does.
    """
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return None
    return elf_identity_from_bytes(header)


_EM_CODES: dict[int, str] = {3: "i386", 62: "x86_64", 183: "aarch64", 40: "arm", 21: "ppc64",
                             22: "s390", 243: "riscv"}


def elf_identity_from_bytes(header: bytes) -> tuple[int, str] | None:
    """(class, machine) from the first 20 bytes of an ELF header, or None."""
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    elf_class = {1: 32, 2: 64}.get(header[4])
    if elf_class is None:
        return None
    byteorder: Any = "little" if header[5] == 1 else "big"
    code = int.from_bytes(header[18:20], byteorder)
    return elf_class, _EM_CODES.get(code, f"EM_{code}")


def realpath(path: str) -> str:
    """The path with every symlink followed (os.path.realpath, kept here for one import site)."""
    return os.path.realpath(path)
