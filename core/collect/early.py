"""Children started before the heavy imports, so their start-up overlaps with ours.

`fallback-doctor diagnose` needs the application interpreter's package listing first, and
that child spends most of its time starting Python. The launcher starts it before importing
the core (about a tenth of a second of imports), and the collector takes it over when the
interpreter and the environment are the ones it would have used. A started child that is
not taken is killed when the process exits: none outlives the run.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from importlib import util

from fallback_doctor.core.frozen import default_python
from fallback_doctor.core.probes.runner import StartedChild, kill_process_group, start_child

_STARTED: dict[tuple[str, tuple[tuple[str, str], ...]], StartedChild] = {}


def python_env_script() -> str:
    """The path of the self-contained listing script (it runs under the application's Python)."""
    spec = util.find_spec("fallback_doctor.core.probes.python_env_child")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("fallback_doctor.core.probes.python_env_child is not installed")
    return spec.origin


def _key(python: str, env: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return python, tuple(sorted(env.items()))


def start_python_env(python: str, env: Mapping[str, str]) -> None:
    """Start the package listing of ``python`` under ``env`` now (for ``take_python_env``)."""
    key = _key(python, env)
    if key not in _STARTED:
        _STARTED[key] = start_child([python, python_env_script()], env=env)


def take_python_env(python: str, env: Mapping[str, str]) -> StartedChild | None:
    """The child started early for exactly this interpreter and environment, if any."""
    return _STARTED.pop(_key(python, env), None)


@atexit.register
def _kill_untaken() -> None:
    for child in _STARTED.values():
        if child.process is not None:
            kill_process_group(child.process)
            child.process.wait()
    _STARTED.clear()


def wanted_python(argv: list[str]) -> str:
    """The interpreter ``diagnose`` will read, from its arguments (``--python``), else ours."""
    for index, item in enumerate(argv):
        if item == "--python" and index + 1 < len(argv):
            return argv[index + 1]
        if item.startswith("--python="):
            return item.split("=", 1)[1]
    return default_python()
