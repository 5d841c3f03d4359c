"""The tool as a frozen build (PyInstaller): its own probes, and the target's environment restored.

A frozen executable has no ``python -m`` and no interpreter to run a script with. The probes the
tool runs itself (the native driver child, the C-API child, the libonnxruntime version child)
re-invoke the executable with :data:`PROBE_ARGUMENT` and the script's path; ``main`` hands that
to :func:`run_probe_if_asked` before anything else is imported. The Python probe still runs under
the application's interpreter, by path: the probe scripts ship in the build as plain files.

PyInstaller's bootloader puts its own folder first on ``LD_LIBRARY_PATH`` (keeping the original
in ``LD_LIBRARY_PATH_ORIG``): a child that inherited that would load the build's copy of a
library where the target's own should be, so every child the tool starts gets
:func:`target_environment` of its environment. The ``_PYI_*`` variables stay: with them the
executable re-invoked for a probe is the application's "subprocess" and does not put its folder
back on the loader path (the bootloader restarts itself with it only as a top-level process).
In a probe child the frozen runtime's ctypes patch (it tries the build's folder first and
replaces the loader's own error with "not found when the application was frozen") is undone:
the probe must see what ``dlopen`` says, as under the application's interpreter.

By hand: ``tr '\\0' '\\n' < /proc/$(pgrep -f fallback-doctor)/environ | grep -E 'LD_|_PYI'``.
Nothing here imports more than the standard library: ``main`` calls it first.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

PROBE_ARGUMENT = "--run-probe"
"""``fallback-doctor --run-probe SCRIPT ARGS…``: run one of the tool's own probe scripts."""

MODULE_ARGUMENT = "--run-module"
"""``fallback-doctor --run-module MODULE``: ``python -m MODULE`` of the tool's own child modules."""

CHILD_MODULES = frozenset({"fallback_doctor.core.flow.step_child", "gfd_first_paint"})
"""The modules ``--run-module`` runs (the wizard's step child; the packaging check of the wizard,
packaging/gfd_first_paint.py): no other code runs that way."""

_PATH_VARIABLES = ("LD_LIBRARY_PATH", "PATH", "QT_PLUGIN_PATH", "QML2_IMPORT_PATH")
"""Search paths a frozen build's bootloader or runtime hooks may have put its folder on."""


def is_frozen() -> bool:
    """True in a PyInstaller (or similar) build, where ``sys.executable`` is the tool itself."""
    return bool(getattr(sys, "frozen", False))


def bundle_dir() -> str | None:
    """The frozen build's own folder (``sys._MEIPASS``), None when not frozen."""
    if not is_frozen():
        return None
    folder = getattr(sys, "_MEIPASS", None)
    return str(folder) if folder else os.path.dirname(os.path.abspath(sys.executable))


def default_python(env: Mapping[str, str] | None = None) -> str:
    """The interpreter diagnosed when none is named: ours; a frozen build's: python3 on the PATH.

    A frozen build has no interpreter of its own to diagnose; the application's is most often
    the first ``python3`` of the (restored) PATH. By hand: ``command -v python3``.
    """
    if not is_frozen():
        return sys.executable
    source = target_environment(os.environ if env is None else env)
    name = "python" if sys.platform == "win32" else "python3"
    found = shutil.which(name, path=source.get("PATH", os.defpath))
    return found or name


def probe_argv(
    python: str, script: str | os.PathLike[str], *args: str, flags: Sequence[str] = ()
) -> list[str]:
    """The command that runs one of the tool's own probe scripts under ``python``.

    ``[python, -B, *flags, script, *args]``; in a frozen build, when ``python`` is the tool's own
    executable, ``[executable, --run-probe, script, *args]`` (interpreter flags do not apply).
    ``-B``: a probe writes no bytecode into the application's environment (``-I`` ignores
    PYTHONDONTWRITEBYTECODE, which every child also gets: core/readers/probes/runner.py).
    """
    if is_frozen() and os.path.abspath(python) == os.path.abspath(sys.executable):
        return [sys.executable, PROBE_ARGUMENT, os.fspath(script), *args]
    return [python, "-B", *flags, os.fspath(script), *args]


def module_argv(python: str, module: str) -> list[str]:
    """``[python, -m, module]``; in a frozen build, for the tool's own executable,
    ``[executable, --run-module, module]``."""
    if is_frozen() and os.path.abspath(python) == os.path.abspath(sys.executable):
        return [sys.executable, MODULE_ARGUMENT, module]
    return [python, "-m", module]


def run_probe_if_asked(argv: Sequence[str]) -> int | None:
    """Run the probe script (``--run-probe SCRIPT ARGS…``) or child module (``--run-module M``).

    Returns its exit status, or None when ``argv`` asks for neither. Only a script of the tool's
    own probes folder, or a module of :data:`CHILD_MODULES`, runs: no way to run arbitrary code.
    """
    if len(argv) < 2 or argv[0] not in (PROBE_ARGUMENT, MODULE_ARGUMENT):
        return None
    import runpy

    if argv[0] == MODULE_ARGUMENT:
        if argv[1] not in CHILD_MODULES:
            sys.stderr.write(f"fallback-doctor: {argv[1]} is not one of the tool's child modules\n")
            return 2
        sys.argv = [argv[1], *argv[2:]]
        try:
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        except SystemExit as stop:
            return _exit_status(stop.code)
        return 0
    script = os.path.realpath(argv[1])
    probes = os.path.realpath(probes_dir())
    if os.path.dirname(script) != probes or not script.endswith("_child.py"):
        sys.stderr.write(f"fallback-doctor: {argv[1]} is not one of the tool's probes\n")
        return 2
    sys.argv = [script, *argv[2:]]
    _undo_frozen_ctypes()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        return _exit_status(stop.code)
    return 0


def _undo_frozen_ctypes() -> None:
    """Give ctypes back its own library classes (PyInstaller's loader subclasses them)."""
    import ctypes

    for name, loader in (("CDLL", "cdll"), ("PyDLL", "pydll"), ("WinDLL", "windll"), ("OleDLL", "oledll")):
        current = getattr(ctypes, name, None)
        if current is None or not current.__name__.startswith("PyInstaller"):
            continue
        original = current.__mro__[1]
        setattr(ctypes, name, original)
        setattr(ctypes, loader, ctypes.LibraryLoader(original))


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def probes_dir() -> str:
    """The folder of the probe scripts (a data folder of the build when frozen)."""
    return str(Path(__file__).resolve().parent.parent / "readers" / "probes")


def target_environment(env: Mapping[str, str], bundle: str | None = None) -> dict[str, str]:
    """``env`` without what a frozen build added: the environment the target itself would have.

    Each search path (LD_LIBRARY_PATH, PATH, QT_PLUGIN_PATH, QML2_IMPORT_PATH) loses the entries
    inside the build's folder (``bundle``, default :func:`bundle_dir`); an emptied one is removed.
    LD_LIBRARY_PATH_ORIG is taken back where LD_LIBRARY_PATH is exactly the bootloader's
    (its folder, then the original), and removed. Entries anyone else put there
    (a libPath, the server's own LD_LIBRARY_PATH) stay. Outside a frozen build: a copy of ``env``.
    """
    folder = bundle if bundle is not None else bundle_dir()
    result = dict(env)
    if folder is None:
        return result
    original = result.pop("LD_LIBRARY_PATH_ORIG", None)
    current = result.get("LD_LIBRARY_PATH")
    if original is not None and current in (folder, f"{folder}{os.pathsep}{original}"):
        result["LD_LIBRARY_PATH"] = original
    for name in _PATH_VARIABLES:
        value = result.get(name)
        if value is None:
            continue
        kept = [entry for entry in value.split(os.pathsep) if not _inside(entry, folder)]
        if len(kept) == len(value.split(os.pathsep)):
            continue
        if any(kept):
            result[name] = os.pathsep.join(kept)
        else:
            del result[name]
    return result


def _inside(entry: str, folder: str) -> bool:
    if not entry:
        return False
    path = os.path.normpath(os.path.abspath(entry))
    root = os.path.normpath(os.path.abspath(folder))
    return path == root or path.startswith(root + os.sep)
