"""An application's own ONNX Runtime folder (Bareun's libPath, any native application's library folder).

Which ONNX Runtime the folder holds (the core library, its version, its provider libraries) and
what its providers need (their DT_NEEDED). By hand: ``ls -l LIBPATH | grep onnxruntime`` and
``readelf -d LIBPATH/libonnxruntime_providers_cuda.so | grep NEEDED``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from fallback_doctor.core.model.facts.onnxruntime import OrtFacts, ProviderLibrary
from fallback_doctor.core.model.facts.target import LibPathOrt
from fallback_doctor.core.platform.frozen import probe_argv
from fallback_doctor.core.readers.knowledge.providers import PROVIDER_KEYS, PROVIDER_ORDER

# --- libPath -------------------------------------------------------------------------------------

_CORE_LIBRARY = re.compile(
    r"^(?:libonnxruntime\.so(?:\.\d+)*|onnxruntime\.dll|libonnxruntime(?:\.\d+)*\.dylib)$", re.IGNORECASE
)
_PROVIDER_FILE = re.compile(r"^(?:lib)?onnxruntime_providers_(\w+?)\.(?:so|dll|dylib)$", re.IGNORECASE)
_PROVIDER_NAMES = PROVIDER_KEYS
"""libonnxruntime_providers_<key>.so -> provider: one table, kept with the Python-package reader."""
_VERSION_IN_NAME = re.compile(r"(?:\.so\.|^libonnxruntime\.)(\d+\.\d+\.\d+)")
_CUDA_LIB = re.compile(r"^(?:lib)?(?:cudart|cublas|cublaslt)(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_CUDNN_LIB = re.compile(r"^(?:lib)?cudnn(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_TRT_LIB = re.compile(r"^(?:lib)?nvinfer(?:\.so\.|_)(\d+)", re.IGNORECASE)


def version_from_name(name: str) -> str | None:
    """1.23.2 for libonnxruntime.so.1.23.2 or libonnxruntime.1.23.2.dylib; None for libonnxruntime.so.1."""
    match = _VERSION_IN_NAME.search(name)
    return match.group(1) if match else None


def _child_script() -> str:
    return str(Path(__file__).resolve().parent.parent / "probes" / "ort_version_child.py")


def read_library_version(
    path: str, env: Mapping[str, str], python: str = sys.executable, timeout_s: float = 15.0
) -> tuple[str | None, str | None]:
    """(version, None) from the library's own C API, or (None, why not), in a child process.

    By hand: ``python3 -c "import ctypes as c; l=c.CDLL('LIB'); ..."`` — see
    core/readers/probes/ort_version_child.py for the three lines it takes.
    """
    from fallback_doctor.core.readers.probes.runner import run_child

    if not _loadable_here(path):
        return None, "built for another operating system; read from the file name instead"
    child_env = dict(env)
    folder = os.path.dirname(path)
    variable = "PATH" if sys.platform == "win32" else "LD_LIBRARY_PATH"
    current = child_env.get(variable)
    child_env[variable] = folder + (os.pathsep + current if current else "")
    outcome = run_child(
        probe_argv(python, _child_script(), path, flags=("-I", "-S")), env=child_env, timeout_s=timeout_s
    )
    for line in reversed(outcome.stdout.splitlines()):
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if isinstance(reply, dict):
            if isinstance(reply.get("version"), str) and reply["version"]:
                return str(reply["version"]), None
            if reply.get("error"):
                return None, str(reply["error"])
    return None, outcome.sentence("reading the ONNX Runtime version") + (
        f": {outcome.stderr.strip()[-300:]}" if outcome.stderr.strip() else ""
    )


def refused(path: str) -> str | None:
    """Why ``path`` is not read (a FIFO, a socket, a device, a folder, gone), or None for a regular file.

    Nothing in an application's library folder is opened before this says yes, and then only
    without blocking: a FIFO named libonnxruntime.so.1 would otherwise hang the tool forever."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        return f"{os.path.basename(path)} cannot be read: {error.strerror or error}"
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    )
    kind = next((words for test, words in kinds if test(mode)), "not a regular file")
    return f"{os.path.basename(path)} was not read: it is {kind}, not a regular file"


def read_head(path: str, size: int) -> bytes:
    """The first ``size`` bytes of a regular file, opened without blocking (OSError otherwise)."""
    why = refused(path)
    if why is not None:
        raise OSError(why)
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped between stat and open
            raise OSError(f"{os.path.basename(path)} was not read: not a regular file")
        return handle.read(size)


_VERS = re.compile(rb"VERS_(\d+\.\d+\.\d+)\x00")
_SCAN_LIMIT = 64 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024


def version_from_file(path: str) -> tuple[str | None, str | None]:
    """(version, how) read from the library's bytes without loading it, or (None, why not).

    ONNX Runtime's Linux library exports its symbols under the version node ``VERS_<version>``
    (its linker version script), so the version is a string in the file's dynamic string table:
    ``readelf -V libonnxruntime.so.1 | grep VERS_`` by hand. The file is read, never loaded: none
    of the application's code runs (``diagnose --quick`` promises that)."""
    why = refused(path)
    if why is not None:
        return None, why
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(descriptor, "rb") as handle:
            tail = b""
            read = 0
            while read < _SCAN_LIMIT:
                block = handle.read(_CHUNK)
                if not block:
                    break
                read += len(block)
                match = _VERS.search(tail + block)
                if match:
                    return match.group(1).decode("ascii"), "ELF version definition"
                tail = block[-32:]
    except OSError as error:
        return None, f"{os.path.basename(path)} could not be read: {error}"
    return None, "no VERS_ version definition in the first 64 MiB of the file"


def read_needed(path: str) -> tuple[str, ...]:
    """The direct dependencies of a library: ELF DT_NEEDED or PE imports; () when unreadable.

    By hand: ``readelf -d LIB | grep NEEDED`` (Linux) or ``dumpbin /dependents LIB`` (Windows).
    """
    try:
        if path.lower().endswith(".dll"):
            from fallback_doctor.core.readers.loader.pe import read_pe_imports

            return read_pe_imports(path).imports
        from fallback_doctor.core.readers.loader.elf import read_elf_dynamic

        return read_elf_dynamic(path).needed
    except (OSError, ValueError):
        return ()


def _loadable_here(path: str) -> bool:
    try:
        magic = read_head(path, 4)
    except OSError:
        return False
    if sys.platform == "win32":
        return magic[:2] == b"MZ"
    if sys.platform == "darwin":
        return magic in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
    return magic == b"\x7fELF"


def inspect_lib_path(
    directory: str, env: Mapping[str, str], *, python: str = sys.executable, load: bool = False
) -> LibPathOrt:
    """Which ONNX Runtime the folder holds: the core library, its version, its provider libraries.

    The version is read from the library's bytes (its ``VERS_<version>`` definition), else from
    its file name; the library is loaded (its C API, in a child process, so its constructors run)
    only with ``load=True``. Only regular files are opened; a FIFO, a socket or a device under a
    library's name is refused and named in ``load_error``. A folder without
    libonnxruntime_providers_cuda.so (or onnxruntime_providers_cuda.dll) holds a CPU-only package.
    By hand: ``ls -l LIBPATH | grep onnxruntime``.
    """
    try:
        entries = sorted(os.listdir(directory))
    except OSError as list_error:
        return LibPathOrt(directory, None, None, None, (), (), load_error=str(list_error))
    problems: list[str] = []
    cores = _regular(directory, [name for name in entries if _CORE_LIBRARY.match(name)], problems)
    core = _pick_core(directory, cores)
    providers: list[str] = []
    gpu: list[str] = []
    for name in _regular(directory, [name for name in entries if _PROVIDER_FILE.match(name)], problems):
        providers.append(os.path.join(directory, name))
        match = _PROVIDER_FILE.match(name)
        provider = _PROVIDER_NAMES.get(match.group(1).lower()) if match else None
        if provider and provider not in gpu:
            gpu.append(provider)
    if any(name.lower() == "directml.dll" for name in entries):
        gpu.append("DmlExecutionProvider")
    version, source = _version(core, cores, env, python, load, problems)
    return LibPathOrt(
        directory=directory,
        core_library=core,
        version=version,
        version_source=source,
        provider_libraries=tuple(providers),
        gpu_providers=tuple(gpu),
        load_error="; ".join(problems) or None,
    )


def _regular(directory: str, names: list[str], problems: list[str]) -> list[str]:
    """The names that are regular files; each refused one is said in ``problems``."""
    kept = []
    for name in names:
        why = refused(os.path.join(directory, name))
        if why is None:
            kept.append(name)
        else:
            problems.append(why)
    return kept


def _version(
    core: str | None, cores: list[str], env: Mapping[str, str], python: str, load: bool, problems: list[str]
) -> tuple[str | None, str | None]:
    """(version, source): the file's bytes, then the C API (only when ``load``), then the file name."""
    if core is None:
        return None, None
    version, how = version_from_file(core)
    if version is not None:
        return version, how
    if load:
        version, error = read_library_version(core, env, python)
        if version is not None:
            return version, "C API"
        problems.append(str(error))
    named = version_from_name(os.path.basename(os.path.realpath(core))) or next(
        (found for name in cores if (found := version_from_name(name))), None
    )
    if named:
        return named, "file name"
    if how:
        problems.append(how)
    return None, None


def _pick_core(directory: str, names: Iterable[str]) -> str | None:
    """The soname link where there is one (what the server opens), else the longest name."""
    listed = [name for name in names if os.path.exists(os.path.join(directory, name))]
    if not listed:
        return None
    listed.sort(
        key=lambda name: (name.count(".") != 2 if name.startswith("libonnxruntime.so") else False, -len(name))
    )
    return os.path.join(directory, listed[0])


def lib_path_ort_facts(lib: LibPathOrt) -> OrtFacts:
    """OrtFacts for the ONNX Runtime in libPath, so the library checks resolve its providers.

    The CUDA and cuDNN majors come from the CUDA provider's DT_NEEDED, else the bundled
    matrix for its version. By hand: ``readelf -d LIBPATH/libonnxruntime_providers_cuda.so | grep NEEDED``.
    """
    from fallback_doctor.core.readers.knowledge.ort_matrix import ort_requirements

    libraries: list[ProviderLibrary] = []
    shared: str | None = None
    for path in lib.provider_libraries:
        key = _PROVIDER_FILE.match(os.path.basename(path))
        name = key.group(1).lower() if key else ""
        if name == "shared":
            shared = path
            continue
        provider = _PROVIDER_NAMES.get(name)
        if provider is None:
            continue
        needed = (
            read_needed(path) if provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider") else ()
        )
        libraries.append(ProviderLibrary(provider=provider, path=path, needed=needed))
    present = {item.provider for item in libraries} | set(lib.gpu_providers)
    providers = tuple(name for name in PROVIDER_ORDER if name == "CPUExecutionProvider" or name in present)
    matrix = ort_requirements(lib.version) if lib.version else None
    cuda_lib = next((item for item in libraries if item.provider == "CUDAExecutionProvider"), None)
    trt_lib = next((item for item in libraries if item.provider == "TensorrtExecutionProvider"), None)
    cuda_major = cudnn_major = trt_major = None
    sources: list[str] = []
    lazy: bool | None = None
    notes: list[str] = []
    if cuda_lib is not None:
        cuda_major, why = _major(
            cuda_lib, _CUDA_LIB, "CUDA", matrix.cuda_major if matrix else None, lib.version
        )
        sources.extend(why)
        cudnn_major, why = _major(
            cuda_lib, _CUDNN_LIB, "cuDNN", matrix.cudnn_major if matrix else None, lib.version
        )
        sources.extend(why)
        if cuda_lib.needed:
            lazy = not any(_CUDNN_LIB.match(name) for name in cuda_lib.needed)
        elif matrix is not None:
            lazy = matrix.cudnn_loaded_lazily
        if shared is None:
            notes.append(
                f"{lib.directory} has the CUDA provider but not libonnxruntime_providers_shared, "
                "which every provider library loads"
            )
    if trt_lib is not None:
        trt_major, _why = _major(
            trt_lib, _TRT_LIB, "TensorRT", matrix.tensorrt_major if matrix else None, lib.version
        )
    if lib.version is None and lib.core_library is not None:
        notes.append(
            f"the version of {os.path.basename(lib.core_library)} could not be read: {lib.load_error}"
        )
    return OrtFacts(
        distributions=(),
        package_dir=lib.directory,
        version=lib.version,
        cuda_build_version=None,
        providers_in_build=providers,
        provider_libraries=tuple(libraries),
        required_cuda_major=cuda_major,
        required_cudnn_major=cudnn_major,
        requirement_source="; ".join(sources) or None,
        version_source=lib.version_source,
        build_package_name=None,
        required_tensorrt_major=trt_major,
        cudnn_loaded_lazily=lazy,
        shared_library=shared,
        notes=tuple(notes),
    )


def _major(
    library: ProviderLibrary, pattern: re.Pattern[str], what: str, fallback: int | None, version: str | None
) -> tuple[int | None, list[str]]:
    for name in library.needed:
        match = pattern.match(name)
        if match:
            digits = match.group(1)
            major = int(digits[:2]) if len(digits) == 3 and digits.endswith("0") else int(digits)
            return major, [f"{what} {major}: {os.path.basename(library.path)} needs {name}"]
    if fallback is not None:
        return fallback, [f"{what} {fallback}: bundled matrix, ONNX Runtime {version}"]
    return None, []
