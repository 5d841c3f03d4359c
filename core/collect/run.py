"""Collect every layer's facts into one EnvironmentSnapshot, each collector fault-isolated.

Independent collectors run side by side in threads; each has a time bound, and an
exception or an overrun becomes "could not collect: why" while the rest goes on.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fallback_doctor.core.facts.python_env import PythonEnvFacts
from fallback_doctor.core.snapshot import CollectorOutcome, EnvironmentSnapshot

T = TypeVar("T")

Progress = Callable[[str], None]

_ENV_ALLOW = re.compile(
    r"^(CUDA_\w*|NVIDIA_\w*|CUDNN_\w*|ORT_\w*|TENSORRT_\w*|TRT_\w*|LD_LIBRARY_PATH|LD_PRELOAD|PATH"
    r"|PYTHONPATH|PYTHONHOME|VIRTUAL_ENV|CONDA_PREFIX|LANG|LC_\w+|BAREUN_\w*|WSL_DISTRO_NAME)$"
)


@dataclass(frozen=True)
class CollectRequest:
    """What to collect: the target's interpreter and the environment it runs with."""

    python: str = sys.executable
    env: Mapping[str, str] = field(default_factory=dict)
    extra_library_dirs: tuple[str, ...] = ()
    timeout_s: float = 20.0


def relevant_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that change how CUDA libraries are found and which GPU is visible."""
    return {key: value for key, value in sorted(env.items()) if _ENV_ALLOW.match(key)}


class _Collection:
    """Runs collectors with fault isolation and records how each went."""

    def __init__(self, pool: ThreadPoolExecutor, progress: Progress | None) -> None:
        self.pool = pool
        self.progress = progress
        self.outcomes: list[CollectorOutcome] = []

    def start(self, name: str, func: Callable[..., T], *args: Any, **kwargs: Any) -> Future[tuple[T, float]]:
        if self.progress is not None:
            self.progress(name)
        return self.pool.submit(functools.partial(_timed, func, *args, **kwargs))

    def wait(self, name: str, future: Future[Any], timeout_s: float) -> Any:
        started = time.monotonic()
        try:
            value, duration = future.result(timeout=timeout_s)
        except FutureTimeout:
            self.outcomes.append(
                CollectorOutcome(name, False, f"did not finish within {timeout_s:.0f} s", timeout_s * 1000)
            )
            return None
        except Exception as error:  # noqa: BLE001 - a collector's failure is a fact, not a crash
            elapsed = (time.monotonic() - started) * 1000
            self.outcomes.append(CollectorOutcome(name, False, _describe(error), elapsed))
            return None
        self.outcomes.append(CollectorOutcome(name, True, None, duration * 1000))
        return value


def _timed(func: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    started = time.monotonic()
    value = func(*args, **kwargs)
    return value, time.monotonic() - started


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def collect_snapshot(request: CollectRequest, progress: Progress | None = None) -> EnvironmentSnapshot:
    """Collect the facts of every layer for the target described by ``request``."""
    # Imported here so that importing this module stays cheap for the GUI's start-up.
    from fallback_doctor.core.collect.device import collect_device
    from fallback_doctor.core.collect.driver import collect_driver
    from fallback_doctor.core.collect.libraries import collect_libraries
    from fallback_doctor.core.collect.native import collect_native
    from fallback_doctor.core.collect.onnxruntime import collect_onnxruntime
    from fallback_doctor.core.collect.platform import collect_platform
    from fallback_doctor.core.collect.python_env import collect_python_env
    from fallback_doctor.core.collect.torch import collect_torch

    env = dict(request.env)
    budget = request.timeout_s
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="collect") as pool:
        run = _Collection(pool, progress)
        f_python = run.start("python", collect_python_env, request.python, env)
        f_platform = run.start("platform", collect_platform)
        f_driver = run.start("driver", collect_driver, env)
        f_device = run.start("device", collect_device, env)

        python: PythonEnvFacts | None = run.wait("python", f_python, budget)
        onnxruntime = torch = None
        if python is not None:
            f_ort = run.start("onnxruntime", collect_onnxruntime, python)
            f_torch = run.start("torch", collect_torch, python)
            onnxruntime = run.wait("onnxruntime", f_ort, budget)
            torch = run.wait("torch", f_torch, budget)

        provider_libraries = (
            [(lib.provider, lib.path) for lib in onnxruntime.provider_libraries] if onnxruntime else []
        )
        f_libraries = run.start(
            "libraries",
            collect_libraries,
            site_packages=python.site_packages if python else (),
            provider_libraries=provider_libraries,
            env=env,
            platform=python.platform if python else sys.platform,
            extra_dirs=request.extra_library_dirs,
        )
        libraries = run.wait("libraries", f_libraries, budget)

        f_native = run.start(
            "native", collect_native, native_requests(libraries, onnxruntime), env, sys.executable
        )
        native = run.wait("native", f_native, budget)
        platform_facts = run.wait("platform", f_platform, budget)
        driver = run.wait("driver", f_driver, budget)
        device = run.wait("device", f_device, budget)

    return EnvironmentSnapshot(
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


_NATIVE_PREFIXES = ("libcudart.so", "libcudnn.so", "cudart64_", "cudnn64_")


def native_requests(libraries: Any, onnxruntime: Any) -> list[str]:
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
