"""Reading ONNX Runtime's own binaries without loading them: a marker in one section, Mach-O load commands.

- :func:`has_azure_provider`: the Azure provider's RTTI name in ELF .rodata / PE .data of the
  Python binding (the CPU wheels compile it in).
- :func:`macho_facts`: the libraries a Mach-O file links (LC_LOAD_DYLIB) and the oldest macOS it
  runs on (LC_BUILD_VERSION minos), as ``otool -L`` and ``otool -l | grep minos`` show them.

- :func:`read_package_binaries`: an installed DirectML or macOS package folder against what the
  real wheels ship (core/readers/knowledge/directml_coreml.py), as a fact the checks judge.

Section headers and load commands are read by hand (a few hundred bytes, ``struct`` only).
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO

from fallback_doctor.core.model.facts.onnxruntime import OrtFacts, PackageBinaries
from fallback_doctor.core.platform.files import open_regular_file

_AZURE_MARKER = b"AzureProviderFactory"
"""Part of the RTTI name of the Azure provider's factory class, present only where the provider is
compiled in: ``N11onnxruntime20AzureProviderFactoryE`` (GCC/Clang, .rodata) and
``.?AVAzureProviderFactory@onnxruntime@@`` (MSVC). Found in the 1.23.2 CPU wheels (Linux
pybind module, Windows .pyd and onnxruntime.dll); absent from the onnxruntime-gpu 1.23.2 and 1.31.1
wheels (Linux and Windows), whose get_available_providers() indeed does not list Azure. The bare
provider name is no marker: every build carries it in its table of known provider names."""
_AZURE_SCAN_LIMIT = 128 * 1024 * 1024


def has_azure_provider(binding: str | None) -> bool:
    """Whether the Azure execution provider is compiled into the binding (the CPU wheels have it).

    Looks for the RTTI name of its factory class only in the section that holds it: ELF .rodata
    (1.7 MB of the 23 MB Linux module), PE .data (0.4 MB of the 19 MB .pyd); about 1-5 ms.
    Anything else is read whole, in 4 MB chunks, at most 128 MB. By hand:
    ``grep -c AzureProviderFactory .../onnxruntime/capi/onnxruntime_pybind11_state*``.
    """
    if binding is None:
        return False
    try:
        with open_regular_file(binding) as handle:
            start, size = _marker_span(handle)
            handle.seek(start)
            return _stream_contains(handle, _AZURE_MARKER, size)
    except OSError:
        return False


def _marker_span(handle: BinaryIO) -> tuple[int, int]:
    """(offset, size) of the section holding RTTI names: ELF .rodata, PE .data; else the file.

    Section headers are read by hand (a few hundred bytes), not with pyelftools, whose import
    alone costs more than the scan.
    """
    header = handle.read(64)
    try:
        if header[:4] == b"\x7fELF":
            span = _elf_section(handle, header, b".rodata")
        elif header[:2] == b"MZ":
            span = _pe_section(handle, header, b".data")
        else:
            span = None
        if span is not None:
            return span
    except (struct.error, OSError, ValueError, IndexError, OverflowError):
        pass  # a truncated or corrupt header: read the file itself
    handle.seek(0)
    return 0, _AZURE_SCAN_LIMIT


def _elf_section(handle: BinaryIO, header: bytes, wanted: bytes) -> tuple[int, int] | None:
    is64 = header[4] == 2
    order = "<" if header[5] == 1 else ">"
    if is64:
        (shoff,) = struct.unpack_from(order + "Q", header, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", header, 0x3A)
        layout = order + "IIQQQQ"  # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
    else:
        (shoff,) = struct.unpack_from(order + "I", header, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", header, 0x2E)
        layout = order + "IIIIII"
    if not shoff or not shnum or shnum > 4096 or shstrndx >= shnum or shentsize < struct.calcsize(layout):
        return None
    handle.seek(shoff)
    table = handle.read(shentsize * shnum)
    sections = [struct.unpack_from(layout, table, index * shentsize) for index in range(shnum)]
    _, _, _, _, str_offset, str_size = sections[shstrndx]
    handle.seek(str_offset)
    strings = handle.read(min(str_size, 1 << 20))
    for name_offset, section_type, _, _, offset, size in sections:
        end = strings.find(b"\0", name_offset)
        if strings[name_offset:end] == wanted and section_type != 8:  # 8: SHT_NOBITS
            return offset, size
    return None


def _pe_section(handle: BinaryIO, header: bytes, wanted: bytes) -> tuple[int, int] | None:
    (pe_offset,) = struct.unpack_from("<I", header, 0x3C)
    handle.seek(pe_offset)
    coff = handle.read(24)
    if coff[:4] != b"PE\0\0":
        return None
    (count,) = struct.unpack_from("<H", coff, 6)
    (optional,) = struct.unpack_from("<H", coff, 20)
    handle.seek(pe_offset + 24 + optional)
    table = handle.read(40 * min(count, 96))
    for index in range(len(table) // 40):
        name, _, _, raw_size, raw_offset = struct.unpack_from("<8sIIII", table, index * 40)
        if name.rstrip(b"\0") == wanted:
            return raw_offset, raw_size
    return None


def _stream_contains(handle: BinaryIO, marker: bytes, limit: int, chunk: int = 4 << 20) -> bool:
    tail = b""
    remaining = limit
    while remaining > 0:
        data = handle.read(min(chunk, remaining))
        if not data:
            return False
        if marker in tail + data:
            return True
        tail = data[-(len(marker) - 1) :]
        remaining -= len(data)
    return False


_MACHO_64 = b"\xcf\xfa\xed\xfe"
_LC_LOAD_DYLIB, _LC_BUILD_VERSION, _LC_VERSION_MIN_MACOSX = 0xC, 0x32, 0x24
_LC_LOAD_WEAK_DYLIB, _LC_REEXPORT_DYLIB = 0x80000018, 0x8000001F


def macho_facts(path: str) -> tuple[tuple[str, ...], str | None] | None:
    """(linked libraries, the oldest macOS it runs on) of a thin 64-bit Mach-O, None otherwise.

    By hand: ``otool -L FILE`` and ``otool -l FILE | grep -A4 LC_BUILD_VERSION``.
    """
    try:
        with open_regular_file(path) as handle:
            header = handle.read(32)
            if header[:4] != _MACHO_64:
                return None
            count, size = struct.unpack_from("<II", header, 16)
            commands = handle.read(min(size, 1 << 20))
    except OSError:
        return None
    libraries: list[str] = []
    minimum: str | None = None
    offset = 0
    for _ in range(min(count, 4096)):
        if offset + 8 > len(commands):
            break
        command, length = struct.unpack_from("<II", commands, offset)
        if length < 8:
            break
        body = commands[offset : offset + length]
        if command in (_LC_LOAD_DYLIB, _LC_LOAD_WEAK_DYLIB, _LC_REEXPORT_DYLIB) and len(body) >= 12:
            (name_at,) = struct.unpack_from("<I", body, 8)
            libraries.append(body[name_at:].split(b"\0", 1)[0].decode("utf-8", "replace"))
        elif command in (_LC_BUILD_VERSION, _LC_VERSION_MIN_MACOSX) and len(body) >= 16:
            (encoded,) = struct.unpack_from("<I", body, 12 if command == _LC_BUILD_VERSION else 8)
            minimum = f"{encoded >> 16}.{(encoded >> 8) & 0xFF}"
        offset += length
    return tuple(libraries), minimum


_BINDING_PREFIX = "onnxruntime_pybind11_state"


def _listing(capi: str) -> dict[str, str]:
    try:
        return {name.lower(): name for name in os.listdir(capi)}
    except OSError:
        return {}


def directml_problems(capi: str) -> list[str]:
    """What is missing from an onnxruntime-directml package folder, in words (empty: complete)."""
    from fallback_doctor.core.readers.knowledge.directml_coreml import facts
    from fallback_doctor.core.readers.targets.libpath import read_needed

    dml = facts()["directml"]
    names = _listing(capi)
    if not any(name.endswith((".pyd", ".dll")) for name in names):
        return []  # not a Windows build: DirectML does not exist there (another check names it)
    problems = [
        f"{wanted} is missing from {capi} (the {dml['package']} wheel ships it there)"
        for wanted in dml["bundled"]
        if wanted.lower() not in names
    ]
    core = names.get(str(dml["provider_file"]).lower())
    if core is None:
        problems.append(f"{dml['provider_file']} is missing from {capi}: it holds {dml['provider']}")
        return problems
    linked = {name.lower() for name in read_needed(os.path.join(capi, core))}
    if linked and "directml.dll" not in linked:
        problems.append(f"{core} does not load DirectML.dll: a build without {dml['provider']}")
    return problems


def read_package_binaries(ort: OrtFacts, platform: str | None) -> PackageBinaries | None:
    """A DirectML package's files, or a package read for macOS (``platform`` "darwin"): what its
    binaries say; None for any other package.

    By hand: ``dir SITE_PACKAGES\\onnxruntime\\capi`` (Windows) or
    ``otool -L .../onnxruntime/capi/onnxruntime_pybind11_state*.so`` (macOS).
    """
    if ort.package_dir is None:
        return None
    capi = os.path.join(ort.package_dir, "capi")
    package = ort.build_package_name or (ort.distributions[0].name if ort.distributions else "onnxruntime")
    if package == "onnxruntime-directml" or "DmlExecutionProvider" in ort.providers_in_build:
        return PackageBinaries("directml", tuple(directml_problems(capi)))
    if platform == "darwin":
        return coreml_binaries(capi)
    return None


def coreml_binaries(capi: str) -> PackageBinaries:
    """What a macOS onnxruntime package folder's binding links and needs (``otool -L``, ``otool -l``)."""
    from fallback_doctor.core.readers.knowledge.directml_coreml import facts

    coreml = facts()["coreml"]
    names = _listing(capi)
    binding = next((real for low, real in names.items() if low.startswith(_BINDING_PREFIX)), None)
    if binding is None:
        return PackageBinaries("coreml", (f"{capi} has no onnxruntime_pybind11_state module",))
    read = macho_facts(os.path.join(capi, binding))
    if read is None:
        not_macho = f"{binding} is not a macOS (Mach-O 64-bit) binary: this package cannot run CoreML"
        return PackageBinaries("coreml", (not_macho,), binding)
    libraries, minimum = read
    problems: tuple[str, ...] = ()
    if not any("CoreML.framework" in name for name in libraries):
        problems = (f"{binding} does not link CoreML.framework: a build without {coreml['provider']}",)
    return PackageBinaries("coreml", problems, binding, minimum)
