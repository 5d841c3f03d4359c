"""The typed steps of the checks' remedies (core/model.py Step records), built from the facts.

Every command names the target's own interpreter (never a bare ``python``); a remedy that needs
an interpreter the facts do not have (a native server) gets no pip step. Environment steps take
their scope from where the application runs: its systemd unit (a drop-in), its container (``-e``),
else the process that starts it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fallback_doctor.core.checks.resolution import preload_dlls_applies
from fallback_doctor.core.model import CodeStep, EnvironmentStep, RunStep, Step
from fallback_doctor.core.snapshot import EnvironmentSnapshot

PRELOAD_CODE = "import onnxruntime\nonnxruntime.preload_dlls()"


def target_python(snapshot: EnvironmentSnapshot) -> str | None:
    """The application's interpreter, None when the target has none (a native server)."""
    if snapshot.python is not None and snapshot.python.executable:
        return snapshot.python.executable
    return None


def pip_steps(
    snapshot: EnvironmentSnapshot, packages: Iterable[str | None], option: int = 1, *, uninstall: bool = False
) -> list[Step]:
    """``<interpreter> -m pip install|uninstall -y PACKAGES`` (none: no step; no interpreter: none)."""
    wanted = list(dict.fromkeys(package for package in packages if package))
    python = target_python(snapshot)
    if not wanted or python is None:
        return []
    verb = ["uninstall", "-y"] if uninstall else ["install"]
    return [RunStep((python, "-m", "pip", *verb, *wanted), "application", option)]


def environment_scope(snapshot: EnvironmentSnapshot) -> tuple[str, str | None]:
    """("systemd", unit) for a service, ("container", None) in a container, else ("process", None)."""
    process = snapshot.process
    if process is not None:
        unit = getattr(process, "unit", None)
        if unit is not None and getattr(unit, "name", None):
            return "systemd", str(unit.name)
        if getattr(process, "container", None) is not None:
            return "container", None
    return "process", None


def loader_path_steps(
    snapshot: EnvironmentSnapshot, dirs: Sequence[str], windows: bool, option: int = 1
) -> list[Step]:
    """Put ``dirs`` first on the loader path; ``preload_dlls()`` as the alternative where it applies."""
    if not dirs:
        return []
    scope, unit = environment_scope(snapshot)
    variable = "PATH" if windows else "LD_LIBRARY_PATH"
    separator = ";" if windows else ":"
    mode = "set" if scope == "systemd" else "prepend"
    steps: list[Step] = [
        EnvironmentStep({variable: separator.join(dirs)}, scope, mode, separator, unit, option)
    ]
    if preload_dlls_applies(snapshot):
        steps.append(CodeStep(PRELOAD_CODE, "python", "before the first InferenceSession", option + 1))
    return steps
