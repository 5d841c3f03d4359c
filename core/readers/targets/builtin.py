"""The built-in target profiles: Bareun, a Python application, any native application, a log.

Their resolvers live beside the code that reads each kind (core/readers/targets/resolve.py,
core/readers/targets/native.py) and are imported when first called, so the registry (which the
wizard's first page reads) loads without them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.readers.targets.profile import Probe, ResolveOptions, TargetProfile, WizardField

if TYPE_CHECKING:
    from fallback_doctor.core.model.facts.target import TargetFacts
    from fallback_doctor.core.readers.targets.spec import TargetSpec


def _bareun(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    from fallback_doctor.core.readers.targets.resolvers import resolve_bareun

    return resolve_bareun(spec, env, options)


def _bareun_found(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> bool:
    from fallback_doctor.core.readers.targets.resolvers import bareun_found

    return bareun_found(spec, env, options)


def _python(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    from fallback_doctor.core.readers.targets.resolvers import resolve_python

    return resolve_python(spec, options)


def _native(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    from fallback_doctor.core.readers.targets.resolvers import resolve_native

    return resolve_native(spec, env, options)


def _log(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    from fallback_doctor.core.readers.targets.resolvers import resolve_log

    return resolve_log(spec)


def _bareun_choice(path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A file typed in the folder field is the configuration itself."""
    if os.path.isfile(path):
        return {"config": path, "pid": given.get("pid")}
    return {"bareun_root": path, "config": given.get("config"), "pid": given.get("pid")}


def _python_choice(path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A virtual environment's folder names its interpreter (core/readers/targets/interpreter.py); what
    is not an interpreter is passed on as typed, for the diagnosis to say what it is."""
    from fallback_doctor.core.readers.targets.interpreter import NotAnInterpreterError, interpreter_of

    try:
        path = interpreter_of(path)
    except NotAnInterpreterError:
        pass
    return {"python": path, "pid": given.get("pid")}


def _log_choice(path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    return {"logs": [path]}


def _native_choice(path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    return {"lib_dir": path, "pid": given.get("pid")}


BAREUN = TargetProfile(
    kind="bareun",
    help="bareun (the Bareun server: --bareun-root or --config)",
    resolve=_bareun,
    detect=_bareun_found,
    probe=Probe.LIBRARY,
    no_probe="the configuration names no libPath, so there is no library to run",
    finds_process=True,
    remedy_terms="configuration",
    server_name="bareun",
    wizard=WizardField(
        "start.folder", ("bareun_root", "config"), _bareun_choice, picks="folder", lists_found=True
    ),
)
PYTHON = TargetProfile(
    kind="python",
    help="python (a Python application: --python)",
    resolve=_python,
    probe=Probe.PYTHON,
    wizard=WizardField("start.interpreter", ("python",), _python_choice, optional=True),
)
LOG = TargetProfile(
    kind="log",
    help="log (its log alone: --log)",
    resolve=_log,
    no_probe="a log-only target has no ONNX Runtime to run",
    wizard=WizardField("start.logfile", ("logs",), _log_choice),
    inspects_machine=False,
)
NATIVE = TargetProfile(
    kind="native",
    help="native (any application's own ONNX Runtime folder: --lib-dir)",
    resolve=_native,
    probe=Probe.LIBRARY,
    no_probe="no library folder was found, so there is no library to run",
    finds_process=True,
    remedy_terms="application",
    wizard=WizardField("start.libdir", ("lib_dir",), _native_choice, picks="folder"),
)

BUILTIN = (BAREUN, PYTHON, NATIVE, LOG)
"""In the order the wizard's first page offers them (and ``auto`` tries their ``detect``)."""
