"""Children started before the heavy imports, so their start-up overlaps with ours.

`fallback-doctor diagnose` needs the application interpreter's package listing first, and
that child spends most of its time starting Python; the native child (core/readers/probes/native_child.py)
probes the driver first and then waits for the libraries to load. The launcher starts both
before importing the core (about a tenth of a second of imports, on one core while the children
run on the others), and the collectors take them over when the interpreter and the
environment are the ones they would have used. A started child that is not taken is killed
when the process exits: none outlives the run.
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Mapping
from importlib import util
from pathlib import Path

from fallback_doctor.core.platform.frozen import default_python, probe_argv, target_environment
from fallback_doctor.core.readers.probes.runner import StartedChild, kill_process_group, start_child

_STARTED: dict[tuple[str, tuple[tuple[str, str], ...]], StartedChild] = {}
_NATIVE: dict[tuple[str, tuple[tuple[str, str], ...]], StartedChild] = {}


def python_env_script() -> str:
    """The path of the self-contained listing script (it runs under the application's Python)."""
    spec = util.find_spec("fallback_doctor.core.readers.probes.python_env_child")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("fallback_doctor.core.readers.probes.python_env_child is not installed")
    return spec.origin


def python_env_argv(python: str) -> list[str]:
    """The listing's command line: ``-I -S`` so that nothing of the environment runs (its .pth
    start-up code, sitecustomize) and ``-B`` so that nothing is written into it (issue 28);
    the child works out the application's import path itself."""
    return probe_argv(python, python_env_script(), flags=("-I", "-S"))


def _key(python: str, env: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return python, tuple(sorted(env.items()))


def start_python_env(python: str, env: Mapping[str, str]) -> None:
    """Start the package listing of ``python`` under ``env`` now (for ``take_python_env``)."""
    key = _key(python, env)
    if key not in _STARTED:
        _STARTED[key] = start_child(python_env_argv(python), env=env)


def take_python_env(python: str, env: Mapping[str, str]) -> StartedChild | None:
    """The child started early for exactly this interpreter and environment, if any."""
    return _STARTED.pop(_key(python, env), None)


def native_argv(python: str) -> list[str]:
    """The native child's command line in its driver-first mode (core/readers/collect/native.py)."""
    script = Path(__file__).resolve().parent.parent / "probes" / "native_child.py"
    # A frozen build re-invokes itself (`--run-probe`): interpreter flags would be its arguments.
    return probe_argv(python, script, "--driver-first", flags=("-I", "-S"))


def start_native(python: str, env: Mapping[str, str]) -> None:
    """Start the native child of ``python`` under ``env`` now (for ``take_native``)."""
    key = _key(python, env)
    if key not in _NATIVE:
        _NATIVE[key] = start_child(native_argv(python), env=env, stdin_text="")


def take_native(python: str, env: Mapping[str, str]) -> StartedChild | None:
    """The native child started early for exactly this interpreter and environment, if any."""
    return _NATIVE.pop(_key(python, env), None)


def start_diagnose_children(python: str, env: Mapping[str, str]) -> None:
    """Both children of ``diagnose`` for a Python target: the listing, then the native child.

    The native child runs under our own interpreter (``sys.executable``) with the same env: the
    target's (a frozen build's own folder taken off the search paths), as the collectors use it,
    so that they find these children and take them over.
    """
    target_env = target_environment(env)
    start_python_env(python, target_env)
    start_native(sys.executable, target_env)


@atexit.register
def _kill_untaken() -> None:
    for child in [*_STARTED.values(), *_NATIVE.values()]:
        if child.process is not None:
            kill_process_group(child.process)
            child.process.wait()
    _STARTED.clear()
    _NATIVE.clear()


def wanted_python(argv: list[str]) -> str:
    """The interpreter ``diagnose`` will read, from its arguments (``--python``), else ours."""
    for index, item in enumerate(argv):
        if item == "--python" and index + 1 < len(argv):
            return argv[index + 1]
        if item.startswith("--python="):
            return item.split("=", 1)[1]
    return default_python()
