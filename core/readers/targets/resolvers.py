"""How each built-in kind is resolved (core/readers/targets/builtin.py names them): a Bareun
installation's configuration and libPath, a Python application's interpreter, a native
application's library folder (core/readers/targets/native.py), a log alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.platform.frozen import default_python
from fallback_doctor.core.readers.targets import bareun
from fallback_doctor.core.readers.targets.bareun_config import config_text_for_report, read_config
from fallback_doctor.core.readers.targets.bareun_reader import CONFIG_RELATIVE
from fallback_doctor.core.readers.targets.libpath import inspect_lib_path
from fallback_doctor.core.readers.targets.profile import ResolveOptions, TargetNotFound
from fallback_doctor.core.readers.targets.spec import TargetSpec


def resolve_log(spec: TargetSpec) -> TargetFacts:
    """A log alone (``--target log``): the files named, or the text pasted into the wizard."""
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
    )


def resolve_native(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    """A native application's own library folder (core/readers/targets/native.py)."""
    from fallback_doctor.core.readers.targets.native import NativeTargetError, native_target

    try:
        return native_target(spec, env, load_library=options.load_library)
    except NativeTargetError as error:
        raise TargetNotFound(str(error)) from None


def bareun_found(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> bool:
    """Whether a Bareun installation is named or found (what ``auto`` asks first)."""
    return _bareun_root(spec, env, options.roots) is not None


def resolve_bareun(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    """The Bareun installation named or found; none found is a usage error."""
    found = _bareun_root(spec, env, options.roots)
    if found is None:
        looked = ", ".join(bareun.default_roots() if options.roots is None else options.roots)
        raise TargetNotFound(
            f"no Bareun installation found (BAREUN_ROOT: {env.get('BAREUN_ROOT') or 'not set'}; "
            f"looked in {looked}): name it with --bareun-root DIR or --config FILE"
        )
    root, how = found
    return bareun_target(spec, env, root, how, load_library=options.load_library)


def resolve_python(spec: TargetSpec, options: ResolveOptions | None = None) -> TargetFacts:
    """A Python application: its interpreter (``--python``, else the ``--pid`` process's own, else
    the tool's)."""
    running = options.running if options is not None else None
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
    config_path = os.path.abspath(spec.config) if spec.config else os.path.join(root, CONFIG_RELATIVE)
    config = read_config(config_path, env, root)
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
        lib_ort = inspect_lib_path(lib_path, env, load=load_library)
    config_text, cut_note = config_text_for_report(config.text)
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
