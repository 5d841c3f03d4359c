"""The dynamic loader's search order, as data: which directories, in which order, via which step.

Linux (glibc ld.so, ``man ld.so``) for a library NEEDED by object X:

1. ``RPATH``: DT_RPATH of X, then of the object that loaded X, and so on up the loading chain,
   only when X has no DT_RUNPATH (an object that has DT_RUNPATH has its DT_RPATH ignored).
   Simplification: the chain we know is the chain inside the resolved tree (the provider
   library and what it pulled in). The process's executable and the library that dlopen()ed
   the provider are not known here; callers may pass their RPATH as ``host_rpath`` (a Python
   interpreter normally has none; ld.so never uses the executable's DT_RUNPATH for a
   dlopen()ed library).
2. ``LD_LIBRARY_PATH`` from the environment given (not ``os.environ``); ':' and ';' separate,
   an empty element means the current directory.
3. ``RUNPATH``: DT_RUNPATH of X itself, for X's direct needs only.
4. ``ld.so.cache``: the ldconfig cache (skipped for objects linked with ``-z nodefaultlib``,
   which we do not read: rare).
5. ``default``: the built-in system directories (Debian/Ubuntu multiarch: /lib/<triplet>,
   /usr/lib/<triplet>, /lib, /usr/lib; Fedora/RHEL 64-bit: /lib64, /usr/lib64).

``$ORIGIN``/``${ORIGIN}`` expand to X's directory, ``$LIB`` to ``lib/<triplet>`` (multiarch),
``lib64`` or ``lib``, ``$PLATFORM`` to the machine name. glibc-hwcaps and legacy ``tls``/
platform subdirectories are not searched (they hold nothing of the GPU stack in practice).
By hand: ``LD_DEBUG=libs python -c 'import ctypes; ctypes.CDLL("/path/lib.so")'`` prints the
same search, step by step.

Windows (``LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH)``, which ONNX Runtime uses
for its provider DLLs) searches: already-loaded modules and KnownDLLs, then the directory of the
DLL being loaded, System32, the 16-bit System directory, the Windows directory, the current
directory, and the directories in PATH. API-set names (``api-ms-win-*``, ``ext-ms-*``) are
virtual and always satisfied by the system.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fallback_doctor.core.readers.loader.elf import ElfDynamic

VIA_RPATH = "RPATH"
VIA_LD_LIBRARY_PATH = "LD_LIBRARY_PATH"
VIA_RUNPATH = "RUNPATH"
VIA_CACHE = "ld.so.cache"
VIA_DEFAULT = "default"
VIA_LOADED = "already loaded"

VIA_DLL_DIR = "DLL directory"
VIA_SYSTEM32 = "System32"
VIA_SYSTEM16 = "System"
VIA_WINDOWS = "Windows directory"
VIA_CWD = "current directory"
VIA_PATH = "PATH"
VIA_APISET = "API set"
VIA_KNOWN_DLL = "KnownDLLs"

MULTIARCH_TRIPLETS: dict[tuple[int, str], str] = {
    (64, "x86_64"): "x86_64-linux-gnu",
    (32, "i386"): "i386-linux-gnu",
    (64, "aarch64"): "aarch64-linux-gnu",
    (32, "arm"): "arm-linux-gnueabihf",
    (64, "ppc64"): "powerpc64le-linux-gnu",
    (64, "s390"): "s390x-linux-gnu",
    (64, "riscv"): "riscv64-linux-gnu",
}

# Windows KnownDLLs (HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs, Windows 10/11)
# plus ntdll, which is always loaded.
KNOWN_DLLS: frozenset[str] = frozenset(
    name.lower()
    for name in (
        "advapi32.dll",
        "clbcatq.dll",
        "combase.dll",
        "comdlg32.dll",
        "coml2.dll",
        "difxapi.dll",
        "gdi32.dll",
        "gdiplus.dll",
        "imagehlp.dll",
        "imm32.dll",
        "kernel32.dll",
        "kernelbase.dll",
        "msctf.dll",
        "msvcrt.dll",
        "normaliz.dll",
        "nsi.dll",
        "ntdll.dll",
        "ole32.dll",
        "oleaut32.dll",
        "psapi.dll",
        "rpcrt4.dll",
        "sechost.dll",
        "setupapi.dll",
        "shcore.dll",
        "shell32.dll",
        "shlwapi.dll",
        "user32.dll",
        "wldap32.dll",
        "wow64.dll",
        "wow64win.dll",
        "ws2_32.dll",
        "bcrypt.dll",
        "ucrtbase.dll",
    )
)


@dataclass(frozen=True)
class SearchStep:
    """One step of the search: its name, the directories (expanded), and whose entry it is."""

    via: str
    dirs: tuple[str, ...]
    owner: str | None = None
    """The file whose RPATH/RUNPATH this is; None for environment, cache and default steps."""


@dataclass(frozen=True)
class LinuxHost:
    """What the loader of this host expands and searches by itself (injectable in tests)."""

    lib: str
    """$LIB: ``lib/x86_64-linux-gnu`` (Debian), ``lib64`` (Fedora 64-bit) or ``lib``."""
    platform: str
    """$PLATFORM, e.g. x86_64."""
    default_dirs: tuple[str, ...]


def split_search_path(value: str | None) -> tuple[str, ...]:
    """Split LD_LIBRARY_PATH like ld.so: ':' or ';' separate; an empty element is ``.``."""
    if not value:
        return ()
    parts = value.replace(";", ":").split(":")
    return tuple(part if part else "." for part in parts)


def split_windows_path(value: str | None) -> tuple[str, ...]:
    """Split a Windows PATH on ';' (quotes removed, empty elements dropped)."""
    if not value:
        return ()
    return tuple(part.strip().strip('"') for part in value.split(";") if part.strip().strip('"'))


def default_dirs_for(elf_class: int, machine: str, root: str = "/") -> tuple[str, ...]:
    """ld.so's built-in directories for an object of this class/machine on this file system.

    Multiarch (Debian, Ubuntu) where ``/lib/<triplet>`` or ``/usr/lib/<triplet>`` exists;
    ``/lib64:/usr/lib64`` for 64-bit objects where those exist (Fedora, RHEL, SUSE);
    ``/lib:/usr/lib`` otherwise.
    """
    triplet = MULTIARCH_TRIPLETS.get((elf_class, machine))
    join = os.path.join
    if triplet and (
        os.path.isdir(join(root, "lib", triplet)) or os.path.isdir(join(root, "usr/lib", triplet))
    ):
        return (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib", "/usr/lib")
    if (
        elf_class == 64
        and os.path.isdir(join(root, "usr/lib64"))
        and not os.path.islink(join(root, "usr/lib64"))
        and os.path.exists(join(root, "usr/lib64/libc.so.6"))
    ):
        return ("/lib64", "/usr/lib64")
    return ("/lib", "/usr/lib")


def detect_linux_host(elf_class: int = 64, machine: str = "x86_64", root: str = "/") -> LinuxHost:
    """The $LIB/$PLATFORM expansion and default directories of this host for such objects."""
    dirs = default_dirs_for(elf_class, machine, root)
    triplet = MULTIARCH_TRIPLETS.get((elf_class, machine))
    if triplet and dirs[0] == f"/lib/{triplet}":
        lib = f"lib/{triplet}"
    elif dirs[0] == "/lib64":
        lib = "lib64"
    else:
        lib = "lib"
    return LinuxHost(lib=lib, platform=machine, default_dirs=dirs)


def expand_dst(entry: str, origin_dir: str, *, lib: str, platform: str) -> str:
    """Expand ``$ORIGIN``, ``${ORIGIN}``, ``$LIB``, ``${LIB}``, ``$PLATFORM``, ``${PLATFORM}``.

    The result is normalised (``$ORIGIN/../lib`` becomes a clean path) so paths compare equal.
    """
    value = entry
    for token, replacement in (
        ("${ORIGIN}", origin_dir),
        ("$ORIGIN", origin_dir),
        ("${LIB}", lib),
        ("$LIB", lib),
        ("${PLATFORM}", platform),
        ("$PLATFORM", platform),
    ):
        value = value.replace(token, replacement)
    return os.path.normpath(value) if value else value


def linux_search_steps(
    requester_path: str,
    requester: ElfDynamic,
    loader_chain: Sequence[tuple[str, ElfDynamic]],
    env: Mapping[str, str],
    host: LinuxHost,
    *,
    host_rpath: Sequence[str] = (),
    cache_source: str | None = "/etc/ld.so.cache",
) -> tuple[SearchStep, ...]:
    """The search steps ld.so takes for a name that ``requester`` (at ``requester_path``) needs.

    ``loader_chain`` lists the objects that loaded the requester, nearest first (its loader,
    that one's loader, …); their DT_RPATH counts when the requester has no DT_RUNPATH.
    """
    steps: list[SearchStep] = []

    def expanded(entries: Sequence[str], owner_path: str) -> tuple[str, ...]:
        origin = os.path.dirname(os.path.abspath(owner_path))
        return tuple(expand_dst(item, origin, lib=host.lib, platform=host.platform) for item in entries)

    if not requester.runpath:
        for owner_path, dynamic in ((requester_path, requester), *loader_chain):
            if dynamic.rpath and not dynamic.runpath:
                steps.append(SearchStep(VIA_RPATH, expanded(dynamic.rpath, owner_path), owner_path))
        if host_rpath:
            steps.append(SearchStep(VIA_RPATH, tuple(host_rpath), None))
    ld_library_path = split_search_path(env.get("LD_LIBRARY_PATH"))
    if ld_library_path:
        steps.append(SearchStep(VIA_LD_LIBRARY_PATH, ld_library_path))
    if requester.runpath:
        steps.append(SearchStep(VIA_RUNPATH, expanded(requester.runpath, requester_path), requester_path))
    if cache_source is not None:
        steps.append(SearchStep(VIA_CACHE, (), cache_source))
    steps.append(SearchStep(VIA_DEFAULT, host.default_dirs))
    return tuple(steps)


def windows_system_dirs(env: Mapping[str, str]) -> tuple[str, str, str]:
    """(System32, System, Windows) from SystemRoot/windir in the environment given."""
    root = (
        env.get("SystemRoot")
        or env.get("SYSTEMROOT")
        or env.get("windir")
        or env.get("WINDIR")
        or "C:\\Windows"
    )
    root = root.rstrip("\\/")
    return (root + "\\System32", root + "\\System", root)


def windows_search_steps(
    dll_path: str, env: Mapping[str, str], *, cwd: str | None = None
) -> tuple[SearchStep, ...]:
    """The search steps of ``LoadLibraryExW(dll_path, LOAD_WITH_ALTERED_SEARCH_PATH)``.

    For the dependencies of ``dll_path``: its own directory first (the altered search path),
    then System32, System, the Windows directory, the current directory, then PATH.
    By hand (Windows): ``where cublas64_13.dll`` shows the PATH part.
    """
    system32, system16, windows = windows_system_dirs(env)
    steps = [
        SearchStep(VIA_DLL_DIR, (_win_dirname(dll_path),), dll_path),
        SearchStep(VIA_SYSTEM32, (system32,)),
        SearchStep(VIA_SYSTEM16, (system16,)),
        SearchStep(VIA_WINDOWS, (windows,)),
    ]
    if cwd:
        steps.append(SearchStep(VIA_CWD, (cwd,)))
    path_value = env.get("PATH") or env.get("Path") or ""
    steps.append(SearchStep(VIA_PATH, split_windows_path(path_value)))
    return tuple(steps)


def _win_dirname(path: str) -> str:
    cut = max(path.rfind("\\"), path.rfind("/"))
    return path[:cut] if cut > 0 else "."


def is_api_set(name: str) -> bool:
    """Whether a DLL name is a virtual API set (``api-ms-win-*``, ``ext-ms-*``)."""
    lowered = name.lower()
    return lowered.startswith(("api-ms-win-", "ext-ms-"))
