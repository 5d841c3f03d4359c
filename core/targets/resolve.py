"""Resolve what the user named (TargetSpec) into TargetFacts: which application, where its files are.

``auto`` takes a Bareun installation when one is found (``--bareun-root``/``--config``,
BAREUN_ROOT, the default locations), else the Python environment (``--python``, or the tool's
own interpreter). With ``--pid`` the process decides: a Python process is diagnosed with its own
interpreter (core/targets/process.py), a native one with the ONNX Runtime it has mapped.
A file or folder named on the command line that is not there is a usage error (TargetNotFound,
exit 2); whatever is wrong inside the installation is a finding.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

from fallback_doctor.core.facts.target import RunningProcess, TargetFacts
from fallback_doctor.core.frozen import default_python
from fallback_doctor.core.targets import bareun
from fallback_doctor.core.targets.spec import TargetKind, TargetSpec


class TargetNotFound(Exception):  # noqa: N818 - the name is the brief's
    """A target named by the user does not exist (a usage error: the CLI exits 2)."""


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
    kind = TargetKind(spec.kind)
    running = _running(spec)
    if kind == TargetKind.LOG:
        if not spec.logs and spec.log_text is None:
            raise TargetNotFound("--target log needs at least one --log FILE")
        return TargetFacts(
            kind="log",
            root=None,
            config_path=None,
            log_paths=spec.logs,
            lib_path=None,
            requested_provider=None,
            python=spec.python,
            pid=spec.pid,
            log_text=spec.log_text,
            process=running,
        )
    if kind == TargetKind.PYTHON or (kind == TargetKind.AUTO and running is not None and running.is_python):
        return _python_target(spec, running)
    if kind == TargetKind.NATIVE:
        return _native(spec, env, running, load_library)
    found = _bareun_root(spec, env, roots)
    if found is None and kind == TargetKind.AUTO and running is not None and not running.is_python:
        return _native(spec, env, running, load_library)  # its own ONNX Runtime, or a usage error
    if found is None:
        if kind == TargetKind.BAREUN:
            looked = ", ".join(bareun.default_roots() if roots is None else roots)
            raise TargetNotFound(
                f"no Bareun installation found (BAREUN_ROOT: {env.get('BAREUN_ROOT') or 'not set'}; "
                f"looked in {looked}): name it with --bareun-root DIR or --config FILE"
            )
        return _python_target(spec, running)
    root, how = found
    return replace(bareun_target(spec, env, root, how, load_library=load_library), process=running)


def _running(spec: TargetSpec) -> RunningProcess | None:
    """The process ``--pid`` names, read from /proc (None without --pid or without /proc)."""
    if spec.pid is None or not os.path.isdir(f"/proc/{spec.pid}"):
        return None
    from fallback_doctor.core.targets.process import read_running_process

    return read_running_process(spec.pid)


def _native(
    spec: TargetSpec, env: Mapping[str, str], running: RunningProcess | None, load_library: bool
) -> TargetFacts:
    from fallback_doctor.core.targets.native import NativeTargetError, native_target

    try:
        return replace(native_target(spec, env, load_library=load_library), process=running)
    except NativeTargetError as error:
        raise TargetNotFound(str(error)) from None


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


def _python_target(spec: TargetSpec, running: RunningProcess | None = None) -> TargetFacts:
    """A Python target: ``--python``, else the ``--pid`` process's own interpreter, else the tool's."""
    own = running.interpreter if running is not None and running.is_python else None
    return TargetFacts(
        kind="python",
        root=None,
        config_path=spec.config,
        log_paths=spec.logs,
        lib_path=None,
        requested_provider=None,
        python=spec.python or own or default_python(),
        pid=spec.pid,
        log_text=spec.log_text,
        process=running,
    )


def _bareun_root(
    spec: TargetSpec, env: Mapping[str, str], roots: Sequence[str] | None
) -> tuple[str, str] | None:
    if spec.bareun_root is not None:
        return os.path.abspath(spec.bareun_root), "--bareun-root"
    if spec.config is not None:
        config = os.path.abspath(spec.config)
        parent = os.path.dirname(os.path.dirname(config))
        if os.path.basename(os.path.dirname(config)) == "config" and os.path.isdir(parent):
            return parent, "--config"
        from_env = bareun.find_root(env, ())
        return (from_env[0], from_env[1]) if from_env else (os.path.dirname(config), "--config")
    return bareun.find_root(env, roots)


def bareun_target(
    spec: TargetSpec, env: Mapping[str, str], root: str, how: str, *, load_library: bool = False
) -> TargetFacts:
    """The Bareun installation at ``root``: its configuration read and checked, its libPath read.

    By hand: ``python -m json.tool ROOT/config/bareun.json`` and ``ls -l ROOT/lib``.
    """
    config_path = os.path.abspath(spec.config) if spec.config else os.path.join(root, bareun.CONFIG_RELATIVE)
    config = bareun.read_config(config_path, env, root)
    notes: list[str] = []
    lib_path = config.paths.get("libPath")
    if lib_path is None and not any(issue.key == "libPath" for issue in config.issues):
        default = os.path.join(root, "lib")
        if os.path.isdir(default):
            lib_path = default
            notes.append(
                f"libPath was not read from the configuration; {default} (the usual layout) was used"
            )
    lib_ort = None
    if lib_path is not None and os.path.isdir(lib_path):
        lib_ort = bareun.inspect_lib_path(lib_path, env, load=load_library)
    config_text, cut_note = bareun.config_text_for_report(config.text)
    if cut_note:
        notes.append(cut_note)
    log_dir = config.paths.get("logPath")
    logs = spec.logs
    if not logs and log_dir is not None and os.path.isdir(log_dir):
        logs = bareun.log_files(log_dir)
    return TargetFacts(
        kind="bareun",
        root=root,
        config_path=config_path,
        log_paths=logs,
        lib_path=lib_path,
        requested_provider=config.provider.provider if config.provider else None,
        root_source=how,
        python=spec.python,
        pid=spec.pid,
        provider_setting=config.provider,
        config_issues=tuple(config.issues),
        paths=dict(config.paths),
        log_dir=log_dir,
        lib_ort=lib_ort,
        log_text=spec.log_text,
        notes=tuple(notes),
        config_text=config_text,
        config_key_lines=dict(config.key_lines),
    )
