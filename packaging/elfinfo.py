"""What the frozen folder's ELF files ask of the system: the newest glibc symbol version, the
libraries they need that the folder does not hold. Read with pyelftools (nothing is loaded).

By hand: ``objdump -T FILE | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1`` and
``readelf -d FILE | grep NEEDED``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

_VERSION = re.compile(r"^(GLIBC|GLIBCXX|CXXABI|GCC)_(\d+(?:\.\d+)*)$")


@dataclass
class ElfNeeds:
    """One file's needs: DT_NEEDED names, and the newest version it needs of each symbol family."""

    path: Path
    needed: list[str] = field(default_factory=list)
    versions: dict[str, tuple[int, ...]] = field(default_factory=dict)


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_files(folder: Path) -> Iterator[Path]:
    """Every regular ELF file under ``folder`` (symlinks are skipped: their targets are there)."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and _is_elf(path):
            yield path


def read_needs(path: Path) -> ElfNeeds:
    """DT_NEEDED and the symbol versions the file requires (.gnu.version_r)."""
    result = ElfNeeds(path)
    try:
        with open(path, "rb") as handle:
            elf = ELFFile(handle)
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    result.needed += [
                        tag.needed for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"
                    ]
                elif isinstance(section, GNUVerNeedSection):
                    for _verneed, auxiliaries in section.iter_versions():
                        for aux in auxiliaries:
                            match = _VERSION.match(aux.name)
                            if match:
                                number = tuple(int(part) for part in match.group(2).split("."))
                                family = match.group(1)
                                result.versions[family] = max(result.versions.get(family, ()), number)
    except (ELFError, OSError, ValueError):
        pass
    return result


@dataclass
class FolderNeeds:
    """The folder's needs as a whole."""

    glibc: tuple[int, ...]
    glibc_file: str
    """The file that needs the newest glibc (the one that sets the floor)."""
    glibcxx: tuple[int, ...]
    external: dict[str, list[str]]
    """Library name -> the files of the folder that need it, for names the folder does not hold."""


def folder_needs(folder: Path) -> FolderNeeds:
    """The newest GLIBC_ and GLIBCXX_ versions any file needs, and the libraries from the system."""
    present = {path.name for path in folder.rglob("*")}
    glibc: tuple[int, ...] = ()
    glibc_file = ""
    glibcxx: tuple[int, ...] = ()
    external: dict[str, list[str]] = {}
    for path in elf_files(folder):
        needs = read_needs(path)
        version = needs.versions.get("GLIBC", ())
        if version > glibc:
            glibc, glibc_file = version, str(path.relative_to(folder))
        glibcxx = max(glibcxx, needs.versions.get("GLIBCXX", ()))
        for name in needs.needed:
            if name not in present:
                external.setdefault(name, []).append(str(path.relative_to(folder)))
    return FolderNeeds(glibc, glibc_file, glibcxx, external)


def dotted(version: tuple[int, ...]) -> str:
    """2.34 for (2, 34)."""
    return ".".join(str(part) for part in version) or "none"


if __name__ == "__main__":
    needs = folder_needs(Path(sys.argv[1]))
    print(f"glibc floor: {dotted(needs.glibc)} (set by {needs.glibc_file}); GLIBCXX {dotted(needs.glibcxx)}")
    for name, users in sorted(needs.external.items()):
        print(f"  from the system: {name} ({len(users)} files, e.g. {users[0]})")
