"""Any native application that loads ONNX Runtime from a folder of its own (C#, Java, Rust, Node, Go, C++).

They all do what Bareun does with ``libPath``: load ``libonnxruntime.so`` / ``onnxruntime.dll``
from a folder they ship. The folder comes from ``--lib-dir DIR``, else from a running process
(``--pid``: its ``/proc/PID/maps`` says which library it loaded), else from ``ORT_DYLIB_PATH``
(how the Rust ``ort`` crate is told). The folder is then inspected and, in the test inference,
driven through the C API exactly like Bareun's libPath; the remedies are in the application's own
terms (core/readers/knowledge/native_apps.py).

By hand: ``grep onnxruntime /proc/PID/maps`` and ``ls -l DIR | grep onnxruntime``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.platform.files import read_regular_file, read_regular_text
from fallback_doctor.core.readers.knowledge.native_apps import recognise
from fallback_doctor.core.readers.targets.libpath import inspect_lib_path
from fallback_doctor.core.readers.targets.spec import TargetSpec

_CORE_NAME = re.compile(
    r"(?:^|/)(?:libonnxruntime\.so(?:\.\d+)*|onnxruntime\.dll|libonnxruntime(?:\.\d+)*\.dylib)$"
)
_MAPS_LIMIT = 4 * 1024 * 1024


class NativeTargetError(ValueError):
    """No library folder could be found for a native target (a usage error: exit 2)."""


def library_from_maps(pid: int, proc: str = "/proc") -> str | None:
    """The ONNX Runtime library a running process has mapped (its /proc/PID/maps), or None."""
    path = os.path.join(proc, str(pid), "maps")
    try:
        text = read_regular_text(path, _MAPS_LIMIT)
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and _CORE_NAME.search(parts[5].strip()):
            return parts[5].strip().removesuffix(" (deleted)")
    return None


def process_variable(pid: int, name: str, proc: str = "/proc") -> str | None:
    """One variable of a running process's environment (/proc/PID/environ), or None."""
    try:
        data = read_regular_file(os.path.join(proc, str(pid), "environ"), _MAPS_LIMIT)
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", "replace")
    return None


def find_lib_dir(spec: TargetSpec, env: Mapping[str, str]) -> tuple[str, str]:
    """(folder, how it was found): --lib-dir, the process's maps, or ORT_DYLIB_PATH."""
    if spec.lib_dir:
        return os.path.abspath(spec.lib_dir), "--lib-dir"
    if spec.pid is not None:
        mapped = library_from_maps(spec.pid)
        if mapped:
            return os.path.dirname(mapped), f"/proc/{spec.pid}/maps ({os.path.basename(mapped)})"
        dylib = process_variable(spec.pid, "ORT_DYLIB_PATH")
        if dylib:
            return os.path.dirname(os.path.abspath(dylib)), f"ORT_DYLIB_PATH of process {spec.pid}"
    dylib = env.get("ORT_DYLIB_PATH")
    if dylib:
        return os.path.dirname(os.path.abspath(dylib)), "ORT_DYLIB_PATH"
    where = f"process {spec.pid} has no ONNX Runtime library mapped; " if spec.pid is not None else ""
    raise NativeTargetError(
        f"--target native needs the application's library folder: {where}name it with --lib-dir DIR "
        "(the folder holding libonnxruntime.so / onnxruntime.dll) or --pid PID of the running application"
    )


def native_target(spec: TargetSpec, env: Mapping[str, str], *, load_library: bool = False) -> TargetFacts:
    """The native application's library folder, inspected like Bareun's libPath.

    By hand: ``ls -l DIR | grep onnxruntime``; ``readelf -V DIR/libonnxruntime.so* | grep VERS_``.
    """
    lib_dir, how = find_lib_dir(spec, env)
    if not os.path.isdir(lib_dir):
        raise NativeTargetError(f"{lib_dir} ({how}): no such directory")
    try:
        files = tuple(sorted(os.listdir(lib_dir)))
    except OSError as error:
        raise NativeTargetError(f"{lib_dir} ({how}): {error.strerror or error}") from None
    app_env = dict(env)
    if spec.pid is not None and (value := process_variable(spec.pid, "ORT_DYLIB_PATH")):
        app_env["ORT_DYLIB_PATH"] = value
    app = recognise(lib_dir, files, app_env) if not spec.app else None
    lib_ort = inspect_lib_path(lib_dir, env, load=load_library)
    return TargetFacts(
        kind="native",
        root=lib_dir,
        config_path=None,
        log_paths=spec.logs,
        lib_path=lib_dir,
        requested_provider="cuda",
        root_source=how,
        python=spec.python,
        pid=spec.pid,
        lib_ort=lib_ort,
        log_text=spec.log_text,
        app=spec.app or (app.app if app else None),
        notes=(
            f"a native application's library folder ({how}); the GPU is assumed to be asked for "
            "(native applications choose their providers in code)",
        ),
    )
