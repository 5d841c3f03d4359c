"""How native applications load ONNX Runtime, and their GPU remedy (resources/compat/native_apps.json).

Each entry says how to recognise the application from its library folder (path hints, files
beside the library, an environment variable such as Rust's ``ORT_DYLIB_PATH``) and how it gets a
GPU build of the same release: NuGet ``Microsoft.ML.OnnxRuntime.Gpu``, Maven ``onnxruntime_gpu``,
``ORT_DYLIB_PATH``, ``npm install onnxruntime-node --onnxruntime-node-install=cuda12``, the
release archive. The last entry ("c") is the fallback for anything else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from fallback_doctor.core.model.result import Commented, Words
from fallback_doctor.core.platform.resource_files import RESOURCES

_RESOURCE = "compat/native_apps.json"


@dataclass(frozen=True)
class NativeApp:
    """One kind of native application."""

    app: str
    words: str
    path_hints: tuple[str, ...]
    sibling_files: tuple[str, ...]
    env: tuple[str, ...]
    fix: str
    commands: tuple[str | dict[str, str], ...]
    """A command line, or ``{"or": line}``: an alternative to the one before it."""
    source: str

    def remedy(self, version: str | None) -> tuple[str | Commented, ...]:
        """The commands for this application, with the release filled in (an alternative as a
        comment line in the catalogue's words, "# or: ...")."""
        release = version or "VERSION"
        return tuple(
            command.replace("{version}", release)
            if isinstance(command, str)
            else Commented(
                "", Words("remedy.comment.or", {"command": command["or"].replace("{version}", release)}), ""
            )
            for command in self.commands
        )


@cache
def native_apps() -> tuple[NativeApp, ...]:
    """Every kind, in the order they are recognised (the generic "c" last)."""
    data = json.loads(RESOURCES.joinpath(_RESOURCE).read_text("utf-8"))
    return tuple(
        NativeApp(
            app=str(item["app"]),
            words=str(item["words"]),
            path_hints=tuple(item["path_hints"]),
            sibling_files=tuple(item["sibling_files"]),
            env=tuple(item["env"]),
            fix=str(item["fix"]),
            commands=tuple(item["commands"]),
            source=str(item["source"]),
        )
        for item in data["apps"]
    )


def app_named(name: str) -> NativeApp:
    """The entry for ``name`` ("node", "dotnet", "java", "rust", "python-wheel", "c")."""
    for app in native_apps():
        if app.app == name:
            return app
    return native_apps()[-1]


def recognise(lib_dir: str, files: tuple[str, ...], env: Mapping[str, str]) -> NativeApp:
    """Which application a library folder belongs to: its path, the files beside it, its environment."""
    path = os.path.abspath(lib_dir).replace("\\", "/").lower()
    names = {name.lower() for name in files}
    for app in native_apps()[:-1]:
        if any(hint.lower() in path for hint in app.path_hints):
            return app
        if any(name.lower() in names for name in app.sibling_files):
            return app
        if any(env.get(variable) for variable in app.env):
            return app
    return native_apps()[-1]
