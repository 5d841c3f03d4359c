"""Read the DLL imports of a Windows PE file without loading it (pefile).

What a technician would run by hand to see the same: ``dumpbin /dependents file.dll``
(Visual Studio tools) or ``objdump -p file.dll | grep "DLL Name"`` on Linux.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

from fallback_doctor.core.platform.files import open_regular_file

_MACHINES: dict[int, str] = {
    0x8664: "x86_64",
    0x014C: "i386",
    0xAA64: "aarch64",
    0x01C4: "arm",
}


class NotAPeFile(ValueError):  # noqa: N818 - mirrors NotAnElfFile
    """The file is not a PE image, or is truncated or corrupt so its imports are unreadable."""


@dataclass(frozen=True)
class PeImports:
    """The DLL name and imported DLLs of one PE image."""

    dll_name: str | None
    """The export directory's name of the DLL itself (None for an EXE or a DLL without exports)."""
    imports: tuple[str, ...]
    """Imported DLL names, normal imports then delay-load imports, each once, as written."""
    machine: str
    """x86_64, i386, aarch64 … (``0x...`` hex for unknown machine codes)."""
    delay_imports: tuple[str, ...] = ()
    """The delay-loaded subset of ``imports`` (loaded at first call, not at LoadLibrary)."""


def parse_pe_imports(data: bytes | mmap.mmap) -> PeImports:
    """Parse the import and delay-import directories of a PE image given as bytes.

    Raises NotAPeFile for anything that is not a readable PE image.
    """
    if len(data) < 64 or data[:2] != b"MZ":
        raise NotAPeFile("not a PE file (no MZ header)")
    import pefile

    try:
        pe = pefile.PE(data=data, fast_load=True)
        return _imports_of(pe)
    except NotAPeFile:
        raise
    except Exception as error:  # noqa: BLE001 - pefile raises many kinds on corrupt input
        raise NotAPeFile(f"unreadable PE ({type(error).__name__}: {error})") from None


def read_pe_imports(path: str) -> PeImports:
    """Read the imported DLL names (imports and delay imports) and machine of the PE at ``path``.

    By hand: ``dumpbin /dependents PATH`` on Windows. Raises NotAPeFile for non-PE input.
    """
    try:
        with open_regular_file(path) as handle:
            if os.fstat(handle.fileno()).st_size < 64:
                return parse_pe_imports(handle.read(64))
            # Mapped, not read: a DLL of cuDNN is hundreds of MB; only the pages parsed are touched.
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return parse_pe_imports(mapped)
    except NotAPeFile as error:
        raise NotAPeFile(f"{path}: {error}") from None


def _decode(raw: object) -> str:
    if isinstance(raw, bytes):
        return raw.decode("ascii", errors="replace")
    return str(raw)


def _imports_of(pe: object) -> PeImports:
    import pefile

    assert isinstance(pe, pefile.PE)
    directories = [
        pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"],
        pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT"],
        pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_EXPORT"],
    ]
    pe.parse_data_directories(directories=directories)
    code = int(pe.FILE_HEADER.Machine)
    machine = _MACHINES.get(code, hex(code))
    names: list[str] = []
    seen: set[str] = set()
    for entry in getattr(pe, "DIRECTORY_ENTRY_IMPORT", []) or []:
        name = _decode(entry.dll)
        if name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    delayed: list[str] = []
    for entry in getattr(pe, "DIRECTORY_ENTRY_DELAY_IMPORT", []) or []:
        name = _decode(entry.dll)
        delayed.append(name)
        if name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    dll_name: str | None = None
    export = getattr(pe, "DIRECTORY_ENTRY_EXPORT", None)
    if export is not None and getattr(export, "name", None):
        dll_name = _decode(export.name)
    return PeImports(dll_name=dll_name, imports=tuple(names), machine=machine, delay_imports=tuple(delayed))
