"""Resolve what the user named (TargetSpec) into TargetFacts: which application, where its files are.

Each kind is resolved by its profile (core/readers/targets/registry.py). ``auto`` takes the first
profile whose ``detect`` finds its target (a Bareun installation: ``--bareun-root``/``--config``,
BAREUN_ROOT, the default locations), else the Python environment (``--python``, or the tool's
own interpreter). With ``--pid`` the process decides: a Python process is diagnosed with its own
interpreter (core/readers/targets/process.py), a native one with the ONNX Runtime it has mapped.
A file or folder named on the command line that is not there is a usage error (TargetNotFound,
exit 2); whatever is wrong inside the installation is a finding.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

from fallback_doctor.core.model.facts.target import RunningProcess, TargetFacts
from fallback_doctor.core.readers.targets.profile import ResolveOptions, TargetNotFound, TargetProfile
from fallback_doctor.core.readers.targets.registry import AUTO, FALLBACK, find_profile, profiles, target_kinds
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec


def resolve_target(
    spec: TargetSpec,
    env: Mapping[str, str],
    *,
    roots: Sequence[str] | None = None,
    load_library: bool = False,
) -> TargetFacts:
    """The target's facts: its kind, root, configuration (checked, with positions) and libPath.

    ``roots`` replaces the default Bareun locations (tests); ``load_library=False`` reads the
    ONNX Runtime version from the file name only (no child process). By hand:
    ``echo $BAREUN_ROOT``, ``cat $BAREUN_ROOT/config/bareun.json``, ``ls $BAREUN_ROOT/lib``.
    """
    _check_named_files(spec)
    running = _running(spec)
    options = ResolveOptions(roots=roots, load_library=load_library, running=running)
    profile = _profile_for(str(spec.kind), spec, env, options)
    resolved = replace(profile.resolve(spec, env, options), process=running)
    if running is not None and running.output_files and not resolved.log_paths:
        # No log named and none configured: what the process writes to its files is its log.
        resolved = replace(resolved, log_paths=running.output_files)
    return resolved


def _profile_for(
    kind: str, spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions
) -> TargetProfile:
    """The profile named, or for ``auto``: a running Python process's, else the first profile that
    finds its target, else a running native process's (its own ONNX Runtime), else Python's."""
    if kind != AUTO:
        named = find_profile(kind)
        if named is None:
            raise TargetNotFound(f"--target {kind}: not a kind of target ({', '.join(target_kinds())})")
        return named
    running = options.running
    wanted: str | None = None
    if running is not None and running.is_python:
        wanted = TargetKind.PYTHON.value
    else:
        found = next((p for p in profiles() if p.detect is not None and p.detect(spec, env, options)), None)
        if found is not None:
            return found
        wanted = TargetKind.NATIVE.value if running is not None else FALLBACK
    profile = find_profile(wanted)
    if profile is None:  # a registry without the built-in kinds (never in the tool itself)
        raise TargetNotFound(f"--target {wanted}: not a kind of target ({', '.join(target_kinds())})")
    return profile


def _running(spec: TargetSpec) -> RunningProcess | None:
    """The process ``--pid`` names, read from /proc (None without --pid or without /proc)."""
    if spec.pid is None or not os.path.isdir(f"/proc/{spec.pid}"):
        return None
    from fallback_doctor.core.readers.targets.process import read_running_process

    return read_running_process(spec.pid)


def _check_named_files(spec: TargetSpec) -> None:
    if spec.bareun_root is not None and not os.path.isdir(spec.bareun_root):
        raise TargetNotFound(f"--bareun-root {spec.bareun_root}: no such directory")
    if spec.config is not None and not os.path.isfile(spec.config):
        raise TargetNotFound(f"--config {spec.config}: no such file")
    for log in spec.logs:
        if log != "-" and not os.path.lexists(log):
            # Only a missing path is "no such file": a FIFO, a device or a folder goes to the
            # log reader, which reads a folder's logs and refuses the others saying why.
            raise TargetNotFound(f"--log {log}: no such file")
    if spec.python is not None and not os.path.exists(spec.python):
        raise TargetNotFound(f"--python {spec.python}: no such file")
    if spec.pid is not None and spec.pid <= 0:
        raise TargetNotFound(f"--pid {spec.pid}: not a process id")
    if spec.pid is not None and os.path.isdir("/proc/self") and not os.path.isdir(f"/proc/{spec.pid}"):
        raise TargetNotFound(f"--pid {spec.pid}: no such process")
    if spec.lib_dir is not None and not os.path.isdir(spec.lib_dir):
        raise TargetNotFound(f"--lib-dir {spec.lib_dir}: no such directory")
