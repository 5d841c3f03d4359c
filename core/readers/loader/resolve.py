"""Resolve a provider library's dependency tree as the dynamic loader would, without loading it.

Breadth-first like ld.so (``_dl_map_object_deps``): the root's DT_NEEDED in order, then theirs;
each name once (a name already loaded, by file name or soname, is satisfied by that object).
Each resolution records the step that finds it (RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache,
default directories; Windows: DLL directory, System32, PATH …), the directories tried, copies
of the exact name in known places the loader does not search, and copies of another major.

Libraries ONNX Runtime opens by name at run time (>= 1.28: cuDNN, cuFFT, nvrtc; and the cuDNN
shim's own sub-libraries) are resolved too, as a dlopen() from the library that opens them, and
marked ``lazy``. The whole walk is bounded by a time budget.

By hand: ``ldd /path/libonnxruntime_providers_cuda.so`` (load-time part only) or
``LD_DEBUG=libs python -c 'import ctypes; ctypes.CDLL("/path/libonnxruntime_providers_cuda.so")'``.
"""

from __future__ import annotations

import bisect
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fallback_doctor.core.model.facts.libraries import DependencyReport, Resolution
from fallback_doctor.core.readers.loader import names
from fallback_doctor.core.readers.loader.elf import ElfDynamic, NotAnElfFile
from fallback_doctor.core.readers.loader.elf_cache import ElfReader
from fallback_doctor.core.readers.loader.ldcache import LdCache
from fallback_doctor.core.readers.loader.pe import NotAPeFile, read_pe_imports
from fallback_doctor.core.readers.loader.search_path import (
    KNOWN_DLLS,
    VIA_APISET,
    VIA_CACHE,
    VIA_KNOWN_DLL,
    VIA_LOADED,
    LinuxHost,
    SearchStep,
    detect_linux_host,
    is_api_set,
    linux_search_steps,
    windows_search_steps,
)

PROGRAM_INTERPRETERS: frozenset[str] = frozenset(
    {
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
        "ld-linux.so.2",
        "ld64.so.2",
        "ld64.so.1",
        "ld-linux-armhf.so.3",
        "ld-linux-riscv64-lp64d.so.1",
    }
)
"""Always loaded in a dynamically linked process (the program interpreter)."""


@dataclass
class DirectoryIndex:
    """Directory listings, read once each (lower-cased keys on Windows)."""

    windows: bool
    listings: dict[str, dict[str, str]] = field(default_factory=dict)
    sorted_names: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def find(self, directory: str, name: str) -> str | None:
        listing = self.listing(directory)
        actual = listing.get(name.lower() if self.windows else name)
        if actual is None:
            return None
        path = os.path.join(directory, actual)
        return path if os.path.exists(path) else None

    def listing(self, directory: str) -> dict[str, str]:
        cached = self.listings.get(directory)
        if cached is None:
            try:
                entries = os.listdir(directory)
            except OSError:
                entries = []
            cached = {(entry.lower() if self.windows else entry): entry for entry in entries}
            self.listings[directory] = cached
        return cached

    def starting_with(self, directory: str, prefix: str) -> list[str]:
        """The entries of ``directory`` whose name starts with ``prefix`` (case-insensitive).

        A sorted index per directory: system library folders hold thousands of files, and
        every needed library asks for its family's copies.
        """
        ordered = self.sorted_names.get(directory)
        if ordered is None:
            ordered = sorted((key.lower(), actual) for key, actual in self.listing(directory).items())
            self.sorted_names[directory] = ordered
        wanted = prefix.lower()
        found: list[str] = []
        for lowered, actual in ordered[bisect.bisect_left(ordered, (wanted, "")) :]:
            if not lowered.startswith(wanted):
                break
            found.append(actual)
        return found


@dataclass(frozen=True)
class _Node:
    path: str
    dynamic: ElfDynamic | None
    chain: tuple[tuple[str, ElfDynamic], ...]
    lazy: bool


def ort_lazy_libraries(provider_needed: Sequence[str], windows: bool = False) -> tuple[str, ...]:
    """What the CUDA provider opens by name at run time, judged from its own needed list.

    ONNX Runtime >= 1.28 dropped cuDNN, cuFFT and nvrtc from DT_NEEDED and opens them lazily
    (compat-reference §1.2: PR #29252, #29808). When the needed list names the CUDA major
    (libcudart.so.13 / libcublas.so.13 / cublas64_13.dll) but not cuDNN, these are lazy.
    """
    majors = {
        parsed.major
        for parsed in (names.parse_library_name(item) for item in provider_needed)
        if parsed is not None and parsed.family.lower() in ("cudart", "cublas", "cublaslt")
    }
    majors.discard(None)
    if len(majors) != 1 or any(names.is_cudnn(item) for item in provider_needed):
        return ()
    major = int(next(iter(majors)))  # type: ignore[arg-type]
    if major < 13:
        return ()
    runtime = names.cuda_runtime_names(major, windows=windows)
    wanted = [
        names.linux_name("cudnn", "9") if not windows else "cudnn64_9.dll",
        runtime["cufft"],
        runtime["nvrtc"],
    ]
    if windows:
        wanted.append(runtime["cudart"])
    lowered = {item.lower() for item in provider_needed}
    return tuple(item for item in wanted if item.lower() not in lowered)


class DependencyResolver:
    """Resolve dependency trees with one environment, cache and host (reused across providers)."""

    def __init__(
        self,
        *,
        env: Mapping[str, str],
        platform: str = "linux",
        cache: LdCache | None = None,
        host: LinuxHost | None = None,
        host_rpath: Sequence[str] = (),
        known_dirs: Sequence[str] = (),
        cwd: str | None = None,
        elf: ElfReader | None = None,
        index: DirectoryIndex | None = None,
        realpath: Callable[[str], str] = os.path.realpath,
    ) -> None:
        self.env = env
        self.windows = platform.startswith("win")
        self.cache = cache
        self.host = host
        self.host_rpath = tuple(host_rpath)
        self.known_dirs = tuple(dict.fromkeys(known_dirs))
        self.cwd = cwd
        self.index = index if index is not None else DirectoryIndex(windows=self.windows)
        self.elf = elf if elf is not None else ElfReader()
        self.realpath = realpath
        """ELF dynamic sections by file identity (core/readers/loader/elf_cache.py)."""

    # -- public -----------------------------------------------------------------------------

    def resolve(
        self,
        provider: str,
        root: str,
        *,
        preloaded: Mapping[str, str] | None = None,
        lazy: Sequence[str] | None = None,
        budget_s: float = 2.0,
        deadline: float | None = None,
    ) -> DependencyReport:
        """The dependency report of ``root``; ``lazy=None`` means: infer ORT's lazy loads."""
        end = deadline if deadline is not None else time.monotonic() + budget_s
        try:
            return self._resolve(provider, root, preloaded or {}, lazy, end)
        except (OSError, NotAnElfFile, NotAPeFile) as error:
            return DependencyReport(
                provider=provider, root=root, resolutions=(), error=f"{type(error).__name__}: {error}"
            )

    # -- the walk ----------------------------------------------------------------------------

    def _resolve(
        self,
        provider: str,
        root: str,
        preloaded: Mapping[str, str],
        lazy: Sequence[str] | None,
        deadline: float,
    ) -> DependencyReport:
        root = os.path.abspath(root)
        if self.windows:
            return self._resolve_windows(provider, root, preloaded, lazy, deadline)
        dynamic = self.elf.dynamic(root)
        identity = (dynamic.elf_class, dynamic.machine)
        host = self.host or detect_linux_host(dynamic.elf_class, dynamic.machine)
        loaded: dict[str, str] = {}
        for name, path in preloaded.items():
            loaded[name] = path
        loaded[os.path.basename(root)] = root
        if dynamic.soname:
            loaded[dynamic.soname] = root
        resolutions: list[Resolution] = []
        queue: deque[tuple[str, _Node]] = deque()
        root_node = _Node(root, dynamic, (), False)
        for name in dynamic.needed:
            queue.append((name, root_node))
        lazy_names = ort_lazy_libraries(dynamic.needed) if lazy is None else tuple(lazy)
        pending_lazy: deque[tuple[str, _Node]] = deque(
            (name, _Node(root, dynamic, (), True)) for name in lazy_names
        )
        seen: set[str] = set()
        exhausted = False
        while queue or pending_lazy:
            if time.monotonic() > deadline:
                exhausted = True
                break
            if queue:
                name, requester = queue.popleft()
            else:
                name, requester = pending_lazy.popleft()
            if name in seen:
                continue
            seen.add(name)
            if name in loaded:
                resolutions.append(self._loaded_resolution(name, requester, loaded[name]))
                continue
            resolution, found_dynamic = self._resolve_linux_name(name, requester, identity, host)
            resolutions.append(resolution)
            if resolution.path is None:
                continue
            loaded[name] = resolution.path
            if found_dynamic is not None and found_dynamic.soname:
                loaded.setdefault(found_dynamic.soname, resolution.path)
            assert requester.dynamic is not None
            chain = ((requester.path, requester.dynamic), *requester.chain)
            node = _Node(resolution.path, found_dynamic, chain, requester.lazy)
            if found_dynamic is not None:
                for needed in found_dynamic.needed:
                    (pending_lazy if requester.lazy else queue).append((needed, node))
                # The cuDNN shim opens its sub-libraries at first use (dlopen, its RPATH).
                for sub in names.cudnn_sublibrary_names(name):
                    pending_lazy.append((sub, _Node(resolution.path, found_dynamic, chain, True)))
        return DependencyReport(
            provider=provider, root=root, resolutions=tuple(resolutions), budget_exhausted=exhausted
        )

    def _loaded_resolution(self, name: str, requester: _Node, path: str) -> Resolution:
        return Resolution(
            name=name,
            needed_by=requester.path,
            path=path,
            via=VIA_LOADED,
            installed_elsewhere=(),
            other_majors=(),
            lazy=requester.lazy,
            version=names.version_from_filename(os.path.basename(self.realpath(path))),
        )

    def _resolve_linux_name(
        self, name: str, requester: _Node, identity: tuple[int, str], host: LinuxHost
    ) -> tuple[Resolution, ElfDynamic | None]:
        assert requester.dynamic is not None
        steps = linux_search_steps(
            requester.path,
            requester.dynamic,
            requester.chain,
            self.env,
            host,
            host_rpath=self.host_rpath,
            cache_source=self.cache.source if self.cache is not None else None,
        )
        searched: list[str] = []
        skipped: list[str] = []
        found: str | None = None
        via: str | None = None
        if "/" in name and os.path.exists(name):
            found, via = name, "path"  # a needed entry with a slash is a path, not searched
        for step in steps if found is None else ():
            if step.via == VIA_CACHE:
                if self.cache is None:
                    continue
                searched.append(self.cache.source)
                for path in self.cache.lookup(name, *identity):
                    if not os.path.exists(path):
                        continue
                    if self.elf.identity(path) not in (identity, None):
                        skipped.append(path)
                        continue
                    found, via = path, step.via
                    break
            else:
                for directory in step.dirs:
                    searched.append(directory)
                    candidate = self.index.find(directory, name)
                    if candidate is None:
                        continue
                    if self.elf.identity(candidate) != identity:
                        skipped.append(candidate)
                        continue
                    found, via = os.path.normpath(candidate), step.via
                    break
            if found is not None:
                break
        if found is None and name in PROGRAM_INTERPRETERS:
            via = VIA_LOADED
            found = next(
                (p for p in (f"/lib64/{name}", f"/lib/{name}") if os.path.exists(p)), f"/lib64/{name}"
            )
        found_dynamic: ElfDynamic | None = None
        if found is not None and via != VIA_LOADED:
            try:
                found_dynamic = self.elf.dynamic(found)
            except (OSError, NotAnElfFile):
                found_dynamic = None
        searched_dirs = tuple(dict.fromkeys(searched))
        resolution = Resolution(
            name=name,
            needed_by=requester.path,
            path=found,
            via=via,
            installed_elsewhere=self._elsewhere(name, searched_dirs, found),
            other_majors=self._other_majors(name, searched_dirs),
            lazy=requester.lazy,
            searched=searched_dirs,
            skipped=tuple(dict.fromkeys(skipped)),
            version=(names.version_from_filename(os.path.basename(self.realpath(found))) if found else None),
            soname=found_dynamic.soname if found_dynamic else None,
        )
        return resolution, found_dynamic

    # -- Windows -----------------------------------------------------------------------------

    def _resolve_windows(
        self,
        provider: str,
        root: str,
        preloaded: Mapping[str, str],
        lazy: Sequence[str] | None,
        deadline: float,
    ) -> DependencyReport:
        imports = read_pe_imports(root)
        machine = imports.machine
        loaded: dict[str, str] = {key.lower(): value for key, value in preloaded.items()}
        loaded[os.path.basename(root).lower()] = root
        resolutions: list[Resolution] = []
        queue: deque[tuple[str, str, bool]] = deque((name, root, False) for name in imports.imports)
        lazy_names = ort_lazy_libraries(imports.imports, windows=True) if lazy is None else lazy
        pending_lazy: deque[tuple[str, str, bool]] = deque((name, root, True) for name in lazy_names)
        seen: set[str] = set()
        exhausted = False
        while queue or pending_lazy:
            if time.monotonic() > deadline:
                exhausted = True
                break
            name, requester, is_lazy = queue.popleft() if queue else pending_lazy.popleft()
            key = name.lower()
            if key in seen:
                continue
            seen.add(key)
            if key in loaded:
                resolutions.append(Resolution(name, requester, loaded[key], VIA_LOADED, (), (), lazy=is_lazy))
                continue
            if is_api_set(name):
                resolutions.append(Resolution(name, requester, None, VIA_APISET, (), (), lazy=is_lazy))
                continue
            if key in KNOWN_DLLS:
                resolutions.append(Resolution(name, requester, None, VIA_KNOWN_DLL, (), (), lazy=is_lazy))
                continue
            steps = windows_search_steps(requester, self.env, cwd=self.cwd)
            found, via, searched, skipped = self._search_dirs(name, steps, machine)
            searched_dirs = tuple(dict.fromkeys(searched))
            resolutions.append(
                Resolution(
                    name=name,
                    needed_by=requester,
                    path=found,
                    via=via,
                    installed_elsewhere=self._elsewhere(name, searched_dirs, found),
                    other_majors=self._other_majors(name, searched_dirs),
                    lazy=is_lazy,
                    searched=searched_dirs,
                    skipped=tuple(skipped),
                    version=names.version_from_filename(name) if found else None,
                )
            )
            if found is None:
                continue
            loaded[key] = found
            try:
                child = read_pe_imports(found)
            except (OSError, NotAPeFile):
                continue
            target = pending_lazy if is_lazy else queue
            for needed in child.imports:
                target.append((needed, found, is_lazy))
            for sub in names.cudnn_sublibrary_names(name):
                pending_lazy.append((sub, found, True))
        return DependencyReport(
            provider=provider, root=root, resolutions=tuple(resolutions), budget_exhausted=exhausted
        )

    def _search_dirs(
        self, name: str, steps: Sequence[SearchStep], machine: str
    ) -> tuple[str | None, str | None, list[str], list[str]]:
        searched: list[str] = []
        skipped: list[str] = []
        for step in steps:
            for directory in step.dirs:
                searched.append(directory)
                local = _to_local(directory)
                path = self.index.find(local, name)
                if path is None:
                    continue
                try:
                    if read_pe_imports(path).machine != machine:
                        skipped.append(path)
                        continue
                except (OSError, NotAPeFile):
                    skipped.append(path)
                    continue
                return path, step.via, searched, skipped
        return None, None, searched, skipped

    # -- copies elsewhere --------------------------------------------------------------------

    def _elsewhere(self, name: str, searched: Sequence[str], found: str | None) -> tuple[str, ...]:
        searched_set = {os.path.normpath(_to_local(item)) for item in searched}
        found_real = self.realpath(found) if found else None
        copies: list[str] = []
        for directory in self.known_dirs:
            if os.path.normpath(directory) in searched_set:
                continue
            path = self.index.find(directory, name)
            if path is None or (found_real and self.realpath(path) == found_real):
                continue
            copies.append(path)
        return tuple(dict.fromkeys(copies))

    def _other_majors(self, name: str, searched: Sequence[str]) -> tuple[str, ...]:
        parsed = names.parse_library_name(name)
        if parsed is None or parsed.version is None:
            return ()
        copies: list[str] = []
        prefix = parsed.family if self.windows else "lib" + parsed.family
        for directory in (*(_to_local(item) for item in searched), *self.known_dirs):
            for actual in self.index.starting_with(directory, prefix):
                if names.is_other_major(name, actual):
                    path = os.path.join(directory, actual)
                    if os.path.exists(path):
                        copies.append(os.path.normpath(path))
        return tuple(dict.fromkeys(copies))


def _to_local(directory: str) -> str:
    """A Windows directory as this host can list it (unchanged on Windows)."""
    return directory


def resolve_dependencies(
    provider: str,
    root: str,
    *,
    env: Mapping[str, str],
    platform: str = "linux",
    cache: LdCache | None = None,
    host: LinuxHost | None = None,
    known_dirs: Sequence[str] = (),
    preloaded: Mapping[str, str] | None = None,
    lazy: Sequence[str] | None = None,
    budget_s: float = 2.0,
) -> DependencyReport:
    """Resolve ``root``'s dependency tree as the loader would (see the module docstring).

    ``preloaded`` maps names already loaded in the process to their paths (ONNX Runtime loads
    libonnxruntime_providers_shared.so before a provider). ``lazy=None`` infers what ONNX Runtime
    opens by name at run time from the provider's own needs; pass ``()`` to resolve none.
    """
    resolver = DependencyResolver(env=env, platform=platform, cache=cache, host=host, known_dirs=known_dirs)
    return resolver.resolve(provider, root, preloaded=preloaded, lazy=lazy, budget_s=budget_s)
