"""Collect the ONNX Runtime facts of the target environment from its files (never imported).

Importing onnxruntime costs time and loads native code; everything here is read as text
or parsed from headers: the distributions' metadata, capi/build_and_package_info.py,
the provider libraries present and their dynamic dependencies. A few milliseconds.

By hand: ``python -m pip list | grep -i onnxruntime``, ``ls .../onnxruntime/capi`` and
``cat .../onnxruntime/capi/build_and_package_info.py``.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts, ProviderLibrary
from fallback_doctor.core.model.facts.python_env import Distribution, PythonEnvFacts
from fallback_doctor.core.model.result import Words
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.readers.collect.ort_binaries import has_azure_provider, read_package_binaries
from fallback_doctor.core.readers.collect.ort_words import file_says, matrix_words, needs_words, notes_fields
from fallback_doctor.core.readers.knowledge.ort_matrix import OrtRequirement, ort_requirements
from fallback_doctor.core.readers.knowledge.providers import PROVIDER_KEYS, PROVIDER_ORDER
from fallback_doctor.core.readers.targets.libpath import read_needed

PACKAGE = "onnxruntime"

_STANDALONE_LIBRARIES: dict[str, str] = {
    "directml.dll": "DmlExecutionProvider",
    "qnncpu.dll": "QNNExecutionProvider",
    "qnnhtp.dll": "QNNExecutionProvider",
}
"""Libraries whose presence means the provider is compiled into the core library."""

AZURE = "AzureExecutionProvider"
_BINDING = re.compile(r"^onnxruntime_pybind11_state.*\.(?:so|pyd)$", re.IGNORECASE)

CPU_ONLY_PACKAGES = frozenset({"onnxruntime", "ort-nightly", "onnxruntime-training-cpu"})
"""Package names whose build has no GPU provider compiled in, whatever files lie beside it."""

_PROVIDER_FILE = re.compile(r"^(?:lib)?onnxruntime_providers_(\w+?)\.(?:so|dll|dylib)$", re.IGNORECASE)
_NOT_THE_RUNTIME = ("extensions", "genai", "tools")
_CUDA_LIB = re.compile(r"^(?:lib)?(cudart|cublas|cublaslt)(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_CUDNN_LIB = re.compile(r"^(?:lib)?cudnn(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_TRT_LIB = re.compile(r"^(?:lib)?nvinfer(?:\.so\.|_)(\d+)", re.IGNORECASE)


def collect_onnxruntime(python: PythonEnvFacts) -> OrtFacts:
    """Every onnxruntime* distribution, the package import would take, its version and needs.

    Reads files only (no import of onnxruntime). By hand:
    ``python -m pip list | grep -i onnxruntime``;
    ``cat SITE_PACKAGES/onnxruntime/capi/build_and_package_info.py``;
    ``readelf -d .../capi/libonnxruntime_providers_cuda.so | grep NEEDED``.
    """
    dists = tuple(dist for dist in python.distributions if is_ort_distribution(dist))
    search = python.sys_path or python.site_packages
    package_dir, namespace_dirs = find_package_dir(search, PACKAGE)
    notes: list[Words] = []
    if package_dir is None:
        if namespace_dirs:
            notes.append(Words("evidence.ort.namespace_left", {"folder": namespace_dirs[0]}))
        return OrtFacts(
            distributions=dists,
            package_dir=None,
            version=None,
            cuda_build_version=None,
            providers_in_build=(),
            provider_libraries=(),
            required_cuda_major=None,
            required_cudnn_major=None,
            requirement_source=None,
            **notes_fields(notes),
        )
    return _inspect_package(package_dir, dists, python, notes)


def plugin_libraries(python: PythonEnvFacts, notes: list[Words]) -> tuple[ProviderLibrary, ...]:
    """The provider libraries of installed plugin packages (onnxruntime-ep-*), with their needs.

    A plugin provider (``register_execution_provider_library``) is a separate package; its library
    needs its own CUDA (or vendor) libraries exactly like a built-in provider's, so it joins the
    provider libraries whose dependency trees are resolved. Read from the package's RECORD.
    By hand: ``pip show -f onnxruntime-ep-nv-tensorrt-rtx-cu13``.
    """
    found: list[ProviderLibrary] = []
    for dist in python.distributions:
        if not dist.normalized_name.startswith("onnxruntime-ep-") or dist.metadata_dir is None:
            continue
        record = record_files(os.path.join(dist.metadata_dir, "RECORD"))
        for relative in record:
            match = _PROVIDER_FILE.match(os.path.basename(relative))
            if not match or match.group(1).lower() == "shared":
                continue
            provider = PROVIDER_KEYS.get(match.group(1).lower(), f"{dist.name} plugin")
            path = os.path.normpath(os.path.join(dist.location, relative))
            found.append(ProviderLibrary(provider=provider, path=path, needed=read_needed(path)))
            package = f"{dist.name} {dist.version}"
            plugin = {"provider": provider, "package": package, "path": path}
            notes.append(Words("evidence.ort.plugin", plugin))
    return tuple(found)


def record_files(path: str, limit: int = 1 << 20) -> list[str]:
    """The file paths a wheel's RECORD lists (first column), [] when it cannot be read."""
    try:  # a FIFO or device as RECORD is refused at once, never waited on
        text = read_regular_text(path, limit)
    except OSError:
        return []
    return [line.split(",", 1)[0] for line in text.splitlines() if line.strip()]


def is_ort_distribution(dist: Distribution) -> bool:
    """True for a distribution that ships the onnxruntime/ package (not -extensions, -genai …).

    Decided by its RECORD where there is one (the files it installed), else by its name.
    """
    name = dist.normalized_name
    if not (name.startswith("onnxruntime") or name.startswith("ort-")):
        return False
    record = _record_top_levels(dist)
    if record is not None:
        return PACKAGE in record
    return not any(part in name for part in _NOT_THE_RUNTIME)


def _record_top_levels(dist: Distribution) -> set[str] | None:
    if not dist.metadata_dir:
        return None
    path = os.path.join(dist.metadata_dir, "RECORD")
    try:
        text = read_regular_text(path, 8 << 20)
    except OSError:
        return None
    return {line.split("/", 1)[0].split(",", 1)[0] for line in text.splitlines() if "/" in line}


def find_package_dir(search: Iterable[str], package: str) -> tuple[str | None, tuple[str, ...]]:
    """The first ``<dir>/<package>/__init__.py`` on the import path, in order.

    Also returns the folders named ``package`` without an __init__.py seen before or
    instead of it (what is left when one of two packages sharing the folder was removed).
    """
    namespace: list[str] = []
    for base in search:
        if not base:
            continue
        candidate = os.path.join(base, package)
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate, tuple(namespace)
        if os.path.isdir(candidate):
            namespace.append(candidate)
    return None, tuple(namespace)


@dataclass(frozen=True)
class _Requirement:
    major: int | None
    source: Words | None


def _inspect_package(
    package_dir: str, dists: tuple[Distribution, ...], python: PythonEnvFacts, notes: list[Words]
) -> OrtFacts:
    capi = os.path.join(package_dir, "capi")
    build_info = read_assignments(os.path.join(capi, "build_and_package_info.py"))
    version_info = read_assignments(os.path.join(capi, "version_info.py"))
    package_name = _as_text(build_info.get("package_name"))
    version, version_source = _version(package_dir, build_info, dists, package_name)
    cuda_build = _as_text(build_info.get("cuda_version"))
    cuda_build_file = "build_and_package_info.py"
    if cuda_build is None and version_info.get("use_cuda") is not False:
        cuda_build = _as_text(version_info.get("cuda_version"))
        cuda_build_file = "version_info.py"

    libraries, shared, unknown = _provider_files(capi)
    for key in unknown:
        notes.append(Words("evidence.ort.unknown_provider", {"capi": capi, "name": key}))
    leftovers: tuple[ProviderLibrary, ...] = ()
    if package_name is not None and package_name.lower() in CPU_ONLY_PACKAGES and libraries:
        leftovers, libraries = libraries, ()
        names = ", ".join(os.path.basename(lib.path) for lib in leftovers)
        notes.append(Words("evidence.ort.leftovers", {"package": repr(package_name), "names": names}))
    windows_info_complete = cuda_build is not None and "cudnn_version" in version_info
    libraries = tuple(_with_needed(lib, windows_info_complete) for lib in libraries)
    azure = has_azure_provider(_binding(capi))
    providers = tuple(
        name
        for name in PROVIDER_ORDER
        if name == "CPUExecutionProvider"
        or (name == AZURE and azure)
        or any(lib.provider == name for lib in libraries)
    )
    _note_version_disagreement(version, version_source, dists, package_name, notes)

    cuda_lib = _library(libraries, "CUDAExecutionProvider")
    trt_lib = _library(libraries, "TensorrtExecutionProvider")
    matrix = ort_requirements(version) if version else None
    cuda = cudnn = _Requirement(None, None)
    lazy: bool | None = None
    if cuda_lib is not None:
        cuda = _cuda_requirement(cuda_build, cuda_build_file, cuda_lib, matrix, notes)
        cudnn = _cudnn_requirement(version_info, cuda_lib, trt_lib, matrix)
        if cuda_lib.needed:
            lazy = not any(_CUDNN_LIB.match(name) for name in cuda_lib.needed)
        elif matrix is not None:
            lazy = matrix.cudnn_loaded_lazily
    trt_major: int | None = None
    if trt_lib is not None:
        trt_major = _first_major(trt_lib.needed, _TRT_LIB)
        if trt_major is None and matrix is not None:
            trt_major = matrix.tensorrt_major
    sources = [part for part in (cuda.source, cudnn.source) if part]
    facts = OrtFacts(
        distributions=dists,
        package_dir=package_dir,
        version=version,
        cuda_build_version=cuda_build,
        providers_in_build=providers,
        provider_libraries=libraries + plugin_libraries(python, notes),
        required_cuda_major=cuda.major,
        required_cudnn_major=cudnn.major,
        requirement_source="; ".join(map(words_text, sources)) if sources else None,
        requirement_words=tuple(sources),
        version_source=version_source,
        build_package_name=package_name,
        required_tensorrt_major=trt_major,
        cudnn_loaded_lazily=lazy,
        shared_library=shared,
        **notes_fields(notes),
        leftover_libraries=leftovers,
    )
    return dataclasses.replace(facts, binaries=read_package_binaries(facts, python.platform))


def _version(
    package_dir: str,
    build_info: dict[str, object],
    dists: tuple[Distribution, ...],
    package_name: str | None,
) -> tuple[str | None, str | None]:
    from_build = _as_text(build_info.get("__version__"))
    if from_build:
        return from_build, "build_and_package_info.py"
    from_init = _as_text(read_assignments(os.path.join(package_dir, "__init__.py")).get("__version__"))
    if from_init:
        return from_init, "__init__.py"
    owner = _owner(dists, package_name)
    if owner is not None and owner.version:
        return owner.version, "metadata"
    return None, None


def _owner(dists: tuple[Distribution, ...], package_name: str | None) -> Distribution | None:
    if package_name:
        wanted = package_name.lower().replace("_", "-")
        for dist in dists:
            if dist.normalized_name == wanted:
                return dist
    return dists[0] if len(dists) == 1 else None


def _note_version_disagreement(
    version: str | None,
    version_source: str | None,
    dists: tuple[Distribution, ...],
    package_name: str | None,
    notes: list[Words],
) -> None:
    if not version or version_source == "metadata":
        return
    owner = _owner(dists, package_name)
    if owner is not None and owner.version and owner.version != version:
        said = {
            "version": version,
            "source": version_source,
            "owner": owner.name,
            "owner_version": owner.version,
        }
        notes.append(Words("evidence.ort.version_disagrees", said))
    if package_name and dists and owner is None:
        listed = ", ".join(f"{dist.name} {dist.version}" for dist in dists)
        notes.append(
            Words("evidence.ort.owner_not_installed", {"package": repr(package_name), "listed": listed})
        )


def _provider_files(capi: str) -> tuple[tuple[ProviderLibrary, ...], str | None, tuple[str, ...]]:
    try:
        names = sorted(os.listdir(capi))
    except OSError:
        return (), None, ()
    libraries: list[ProviderLibrary] = []
    shared: str | None = None
    unknown: list[str] = []
    for name in names:
        path = os.path.join(capi, name)
        match = _PROVIDER_FILE.match(name)
        if match:
            key = match.group(1).lower()
            if key == "shared":
                shared = path
            elif key in PROVIDER_KEYS:
                provider = PROVIDER_KEYS[key]
                libraries.append(ProviderLibrary(provider=provider, path=path))
            else:
                unknown.append(name)
        elif name.lower() in _STANDALONE_LIBRARIES:
            provider = _STANDALONE_LIBRARIES[name.lower()]
            if not any(lib.provider == provider for lib in libraries):
                libraries.append(ProviderLibrary(provider=provider, path=path))
    return tuple(libraries), shared, tuple(unknown)


def _binding(capi: str) -> str | None:
    """The Python binding module ``import onnxruntime`` loads (onnxruntime_pybind11_state.*)."""
    try:
        names = sorted(os.listdir(capi))
    except OSError:
        return None
    found = next((name for name in names if _BINDING.match(name)), None)
    return os.path.join(capi, found) if found else None


_NEEDS_READ = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})


def _with_needed(lib: ProviderLibrary, windows_info_complete: bool) -> ProviderLibrary:
    """Read a provider's dependencies: ELF headers always (a few ms); the CUDA provider DLL
    (about 200 MB, read whole) only where build info and version_info.py do not already
    say which CUDA and cuDNN it needs."""
    if lib.provider not in _NEEDS_READ:
        return lib
    is_dll = lib.path.lower().endswith(".dll")
    if is_dll and lib.provider == "CUDAExecutionProvider" and windows_info_complete:
        return lib
    return ProviderLibrary(provider=lib.provider, path=lib.path, needed=read_needed(lib.path))


def _library(libraries: tuple[ProviderLibrary, ...], provider: str) -> ProviderLibrary | None:
    return next((lib for lib in libraries if lib.provider == provider), None)


def _first_major(names: Iterable[str], pattern: re.Pattern[str]) -> int | None:
    for name in names:
        match = pattern.match(name)
        if match:
            return _major_from_digits(match.group(match.lastindex or 1))
    return None


def _major_from_digits(digits: str) -> int:
    """cudart64_110 -> 11 (CUDA 11 DLLs carry major and minor digit); cudart64_12 -> 12."""
    if len(digits) == 3 and digits.endswith("0"):
        return int(digits[:2])
    return int(digits)


def _cuda_requirement(
    cuda_build: str | None,
    cuda_build_file: str,
    cuda_lib: ProviderLibrary,
    matrix: OrtRequirement | None,
    notes: list[Words],
) -> _Requirement:
    linked = _first_major(cuda_lib.needed, _CUDA_LIB)
    linked_name = next((name for name in cuda_lib.needed if _CUDA_LIB.match(name)), None)
    from_build = cuda_major_of(cuda_build)
    lib_name = os.path.basename(cuda_lib.path)
    if from_build is not None:
        if linked is not None and linked != from_build:
            other = {
                "build_file": cuda_build_file,
                "build": cuda_build,
                "lib": lib_name,
                "linked": linked_name,
            }
            notes.append(Words("evidence.ort.other_build", other))
            return _Requirement(linked, needs_words(f"CUDA {linked}", lib_name, linked_name))
        said = f"{cuda_build_file} cuda_version '{cuda_build}'"
        return _Requirement(from_build, file_says(f"CUDA {from_build}", said))
    if linked is not None:
        return _Requirement(linked, needs_words(f"CUDA {linked}", lib_name, linked_name))
    if matrix is not None:
        return _Requirement(matrix.cuda_major, matrix_words("CUDA", matrix.cuda_major, matrix.release))
    return _Requirement(None, None)


def _cudnn_requirement(
    version_info: dict[str, object],
    cuda_lib: ProviderLibrary,
    trt_lib: ProviderLibrary | None,
    matrix: OrtRequirement | None,
) -> _Requirement:
    cudnn_version = _as_text(version_info.get("cudnn_version"))
    from_info = cuda_major_of(cudnn_version)
    if from_info is not None:
        said = f"version_info.py cudnn_version '{cudnn_version}'"
        return _Requirement(from_info, file_says(f"cuDNN {from_info}", said))
    linked = _linked_cudnn(cuda_lib)
    if linked is not None:
        return linked
    # Since 1.28 the CUDA provider opens cuDNN at run time: the matrix knows the major it
    # asks for; the TensorRT provider (which still links cuDNN) is the last resort.
    if matrix is not None:
        return _Requirement(matrix.cudnn_major, matrix_words("cuDNN", matrix.cudnn_major, matrix.release))
    if trt_lib is not None:
        return _linked_cudnn(trt_lib) or _Requirement(None, None)
    return _Requirement(None, None)


def _linked_cudnn(lib: ProviderLibrary) -> _Requirement | None:
    for name in lib.needed:
        match = _CUDNN_LIB.match(name)
        if match:
            major = int(match.group(1))
            return _Requirement(major, needs_words(f"cuDNN {major}", os.path.basename(lib.path), name))
    return None


def cuda_major_of(version: str | None) -> int | None:
    """12 for "12.2", 13 for "13.0", 8 for "8"; None for None, "" or text without a leading number."""
    if not version:
        return None
    match = re.match(r"\s*(\d+)", version)
    return int(match.group(1)) if match else None


def _as_text(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None


_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)\s*(?P<value>.+?)\s*$")
_TRAILING_COMMENT = re.compile(r"^(?P<value>(['\"]).*?\2|[^#'\"]+?)\s*#.*$")


def read_assignments(path: str, limit: int = 256 * 1024) -> dict[str, object]:
    """The simple top-level ``name = literal`` assignments of a Python file, read as text."""
    try:
        text = read_regular_text(path, limit)
    except OSError:
        return {}
    return parse_python_assignments(text)


def parse_python_assignments(text: str) -> dict[str, object]:
    """Top-level ``name = literal`` and ``name: T = literal`` lines -> {name: value}.

    Only literals are taken (strings, numbers, True/False/None); the first assignment
    of a name wins, as it is the one a generated file writes. Nothing is executed.
    """
    values: dict[str, object] = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if not match or match.group("name") in values:
            continue
        value = _literal(match.group("value"))
        if value is not _NOT_LITERAL:
            values[match.group("name")] = value
    return values


_NOT_LITERAL = object()


def _literal(text: str) -> object:
    for candidate in (text, _strip_comment(text)):
        if candidate is None:
            continue
        try:
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if value is None or isinstance(value, str | int | float | bool):
            return value
    return _NOT_LITERAL


def _strip_comment(text: str) -> str | None:
    match = _TRAILING_COMMENT.match(text)
    return match.group("value").strip() if match else None
