"""Collect every layer's facts into one EnvironmentSnapshot, each collector fault-isolated.

Independent collectors run side by side in threads; each has a time bound, and an
exception or an overrun becomes "could not collect: why" while the rest goes on.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, ParamSpec, TypeVar

from fallback_doctor.core.model.facts.python_env import PythonEnvFacts
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.snapshot import CollectorOutcome, EnvironmentSnapshot
from fallback_doctor.core.platform.frozen import default_python, target_environment
from fallback_doctor.core.readers.collect.environment import service_environment
from fallback_doctor.core.readers.knowledge.environment import relevant_environment
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import find_profile, probe_of
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec

if TYPE_CHECKING:
    from fallback_doctor.core.model.facts.libraries import LibraryFacts
    from fallback_doctor.core.model.facts.logs import LogFacts
    from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
    from fallback_doctor.core.model.facts.process import ProcessFacts
    from fallback_doctor.core.model.facts.torch import TorchFacts

T = TypeVar("T")
P = ParamSpec("P")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class CollectRequest:
    """What to collect: the target, its interpreter and the environment it runs with."""

    python: str = field(default_factory=default_python)
    """The interpreter of a Python target when ``target.python`` is not given."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment the tool runs in (the technician's); a found server process's own
    environment replaces its loader-relevant variables."""
    extra_library_dirs: tuple[str, ...] = ()
    timeout_s: float = 20.0
    target: TargetSpec = field(default_factory=lambda: TargetSpec(kind=TargetKind.PYTHON))
    """What to diagnose (``--target``, ``--bareun-root``, ``--config``, ``--log``, ``--pid``)."""


class _Task(Generic[T]):
    """One collector running on a daemon thread: a collector that hangs cannot hold the tool.

    (A thread pool would be waited for at exit; the time bound must hold even then.)
    """

    def __init__(self, name: str, call: Callable[[], T]) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(call,), name=f"collect-{name}", daemon=True).start()

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._value = call()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting side as it is
            self._error = error
        finally:
            self._done.set()

    def result(self, timeout: float) -> T:
        """The collector's value; TimeoutError when it has not finished within ``timeout``."""
        if not self._done.wait(timeout):
            raise TimeoutError
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class _Collection:
    """Runs collectors with fault isolation and records how each went."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.outcomes: list[CollectorOutcome] = []

    def start(
        self, name: str, func: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> _Task[tuple[T, float]]:
        if self.progress is not None:
            self.progress(name)
        return _Task(name, functools.partial(_timed, func, *args, **kwargs))

    def wait(self, name: str, future: _Task[tuple[T, float]], timeout_s: float) -> T | None:
        started = time.monotonic()
        try:
            value, duration = future.result(timeout=timeout_s)
        except TimeoutError:
            self.outcomes.append(
                CollectorOutcome(name, False, f"did not finish within {timeout_s:.0f} s", timeout_s * 1000)
            )
            return None
        except Exception as error:  # noqa: BLE001 - a collector's failure is a fact, not a crash
            elapsed = (time.monotonic() - started) * 1000
            outside = getattr(error, "outside", None)
            self.outcomes.append(
                CollectorOutcome(
                    name, False, _describe(error), elapsed, outside if isinstance(outside, str) else None
                )
            )
            return None
        self.outcomes.append(CollectorOutcome(name, True, None, duration * 1000))
        return value


def _timed(func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> tuple[T, float]:
    started = time.monotonic()
    value = func(*args, **kwargs)
    return value, time.monotonic() - started


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def collect_snapshot(request: CollectRequest, progress: Progress | None = None) -> EnvironmentSnapshot:
    """Collect the facts of every layer for the target described by ``request``.

    The target is resolved first (Bareun: its configuration and libPath; a Python environment; a
    log); a named file that does not exist raises TargetNotFound (a usage error). A profile that
    does not inspect this machine (a log from elsewhere) gets its log read and nothing else. Bareun's
    ONNX Runtime facts come from libPath; a running server lends its environment to the loader.
    """
    # Imported here so that importing this module stays cheap for the GUI's start-up.
    from fallback_doctor.core.readers.collect.device import collect_device
    from fallback_doctor.core.readers.collect.driver import collect_driver
    from fallback_doctor.core.readers.collect.native import collect_native, start_native
    from fallback_doctor.core.readers.collect.platform import collect_platform
    from fallback_doctor.core.readers.collect.python_env import collect_python_env
    from fallback_doctor.core.readers.probes.runner import abandon_child
    from fallback_doctor.core.readers.targets.profile import TargetNotFound
    from fallback_doctor.core.readers.targets.resolve import resolve_target

    shell_env = target_environment(request.env)  # a frozen build's own folder is not the target's
    budget = request.timeout_s
    spec = request.target
    with contextlib.ExitStack() as stack:
        run = _Collection(progress)
        target = _resolve(run, resolve_target, TargetNotFound, spec, shell_env)
        profile = find_profile(target.kind) if target is not None else None
        if target is not None and profile is not None and not profile.inspects_machine:
            return _evidence_alone(run, target, spec, budget)  # nothing of this machine
        f_platform = run.start("platform", collect_platform)
        own_library = profile is not None and profile.probe == Probe.LIBRARY

        f_log = run.start("log", _collect_log, target, spec) if target is not None else None
        process = None
        if target is not None and ((profile is not None and profile.finds_process) or target.pid is not None):
            f_process = run.start("process", _find_process, target, shell_env)
            process = run.wait("process", f_process, budget)
        service_env = process.effective_environment() if process is not None else None
        env = service_environment(shell_env, service_env)

        # The native child starts now and probes the driver while the rest is read; it gets
        # the libraries to load once they are resolved (its start-up is off the critical path).
        native_child = start_native(env)
        stack.callback(abandon_child, native_child)
        python_path = _python_for(target, spec, request)
        f_python = run.start("python", collect_python_env, python_path, env) if python_path else None
        f_driver = run.start("driver", collect_driver, env)
        f_device = run.start("device", collect_device, env)

        python: PythonEnvFacts | None = run.wait("python", f_python, budget) if f_python else None
        onnxruntime, torch = _onnxruntime_and_torch(run, target if own_library else None, python, budget)
        libraries = _libraries(run, request, target, python, onnxruntime, env)

        f_native = run.start(
            "native",
            collect_native,
            native_requests(libraries, onnxruntime),
            env,
            sys.executable,
            started=native_child,
        )
        native = run.wait("native", f_native, budget)
        platform_facts = run.wait("platform", f_platform, budget)
        driver = run.wait("driver", f_driver, budget)
        device = run.wait("device", f_device, budget)
        log = run.wait("log", f_log, budget) if f_log is not None else None

    return EnvironmentSnapshot(
        target=target,
        process=process,
        log=log,
        platform=platform_facts,
        python=python,
        onnxruntime=onnxruntime,
        torch=torch,
        driver=driver,
        device=device,
        libraries=libraries,
        native=native,
        environment=relevant_environment(env),
        collectors=tuple(run.outcomes),
    )


def _evidence_alone(
    run: _Collection, target: TargetFacts, spec: TargetSpec, budget: float
) -> EnvironmentSnapshot:
    """The snapshot of a target whose evidence comes from elsewhere (TargetProfile.inspects_machine
    False: a log read on another machine): the target and its log, and nothing of this machine
    (no driver, library, interpreter, device, platform or environment), so that no finding can
    be about the machine the tool happens to run on."""
    log = run.wait("log", run.start("log", _collect_log, target, spec), budget)
    return EnvironmentSnapshot(target=target, log=log, collectors=tuple(run.outcomes))


def _onnxruntime_and_torch(
    run: _Collection, bareun: TargetFacts | None, python: PythonEnvFacts | None, budget: float
) -> tuple[OrtFacts | None, TorchFacts | None]:
    """ONNX Runtime's facts (from a Bareun libPath, else from the interpreter) and torch's."""
    from fallback_doctor.core.readers.collect.onnxruntime import collect_onnxruntime
    from fallback_doctor.core.readers.collect.torch import collect_torch

    onnxruntime = torch = None
    if bareun is not None:
        if bareun.lib_ort is not None and bareun.lib_ort.core_library is not None:
            from fallback_doctor.core.readers.targets.libpath import lib_path_ort_facts

            f_ort = run.start("onnxruntime", lib_path_ort_facts, bareun.lib_ort)
            onnxruntime = run.wait("onnxruntime", f_ort, budget)
    elif python is not None:
        f_ort = run.start("onnxruntime", collect_onnxruntime, python)
        onnxruntime = run.wait("onnxruntime", f_ort, budget)
    if python is not None:
        f_torch = run.start("torch", collect_torch, python)
        torch = run.wait("torch", f_torch, budget)
    return onnxruntime, torch


def _libraries(
    run: _Collection,
    request: CollectRequest,
    target: TargetFacts | None,
    python: PythonEnvFacts | None,
    onnxruntime: OrtFacts | None,
    env: Mapping[str, str],
) -> LibraryFacts | None:
    """How the loader resolves the GPU libraries, for the interpreter's and the target's folders."""
    from fallback_doctor.core.readers.collect.libraries import collect_libraries

    provider_libraries = (
        [(lib.provider, lib.path) for lib in onnxruntime.provider_libraries] if onnxruntime else []
    )
    extra_dirs = request.extra_library_dirs
    if target is not None and target.lib_path:
        extra_dirs = (*extra_dirs, target.lib_path)
    f_libraries = run.start(
        "libraries",
        collect_libraries,
        site_packages=python.site_packages if python else (),
        provider_libraries=provider_libraries,
        env=env,
        platform=python.platform if python else sys.platform,
        extra_dirs=extra_dirs,
    )
    return run.wait("libraries", f_libraries, request.timeout_s)


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` runs here (one of another user's counts). By hand: ``ps -p PID``."""
    import os

    if os.path.isdir("/proc/self"):
        return os.path.isdir(f"/proc/{pid}")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _resolve(
    run: _Collection,
    resolve: Callable[[TargetSpec, Mapping[str, str]], TargetFacts],
    not_found: type[Exception],
    spec: TargetSpec,
    env: Mapping[str, str],
) -> TargetFacts | None:
    """Resolve the target first (everything else depends on it); a usage error propagates."""
    if run.progress is not None:
        run.progress("target")
    if spec.pid is not None and not process_exists(spec.pid):
        raise not_found(f"--pid {spec.pid}: no such process (it is not running, or not visible here)")
    started = time.monotonic()
    try:
        target = resolve(spec, env)
    except not_found:
        raise
    except Exception as error:  # noqa: BLE001 - a broken profile must not stop the rest
        run.outcomes.append(
            CollectorOutcome("target", False, _describe(error), (time.monotonic() - started) * 1000)
        )
        return None
    run.outcomes.append(CollectorOutcome("target", True, None, (time.monotonic() - started) * 1000))
    return target


def _python_for(target: TargetFacts | None, spec: TargetSpec, request: CollectRequest) -> str | None:
    """The interpreter to read: the target's; for Bareun and log targets only one named with --python."""
    if target is None:
        return spec.python or request.python
    if probe_of(target.kind) == Probe.PYTHON:
        return target.python or spec.python or request.python
    return spec.python


def _find_process(target: TargetFacts, shell_env: Mapping[str, str]) -> ProcessFacts | None:
    """The running server (``--pid``, else found by executable, library or port), read-only."""
    from fallback_doctor.core.readers.collect.find_process import find_server_process
    from fallback_doctor.core.readers.collect.process import collect_process

    pid = find_server_process(target, target.pid)
    if pid is None:
        return None
    return collect_process(pid, shell_env=shell_env)


def _collect_log(target: TargetFacts, spec: TargetSpec) -> LogFacts | None:
    """The target's logs, diagnosed (core/readers/collect/log.py)."""
    from fallback_doctor.core.readers.collect.log import collect_log

    return collect_log(target, spec)


_NATIVE_PREFIXES = ("libcudart.so", "libcudnn.so", "cudart64_", "cudnn64_")


def native_requests(libraries: LibraryFacts | None, onnxruntime: OrtFacts | None) -> list[str]:
    """The libraries whose own version the native child should read: the ones the loader takes.

    The CUDA runtime and cuDNN are loaded by the path the resolver found (so the child
    reads the very copy the application would get); the driver library is always tried.
    """
    wanted: list[str] = []
    if libraries is not None:
        for report in libraries.reports:
            for resolution in report.resolutions:
                path = resolution.path
                if path and resolution.name.startswith(_NATIVE_PREFIXES) and path not in wanted:
                    wanted.append(path)
    return wanted
