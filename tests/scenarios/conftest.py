"""Fixtures for the scenario tests: real environments, built lazily once per pinned set.

``stack(name)`` builds (or reuses) a scenario environment from ``scenario_stacks.STACKS``;
``ort(scenario_id, ...)`` runs ONNX Runtime itself there; ``diagnosis(scenario_id, ...)`` runs
``fallback-doctor diagnose --json`` there. All three are session-wide and memoised, so a
scenario's environment is built at most once and each child runs once per distinct request.
The build times are printed in the terminal summary.

Run only these: ``pytest -m scenario tests/scenarios``; build ahead of time:
``python scripts/prepare_test_stacks.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

_BUILD_TIMES: dict[str, float] = {}
_RUN_TIMES: dict[str, float] = {}


@pytest.fixture(scope="session")
def stack() -> Callable[[str], stacks.Stack]:
    """Build (or reuse) a scenario environment by name; a build failure fails the test."""

    def get(name: str) -> stacks.Stack:
        st = stacks.STACKS[name]
        if name not in _BUILD_TIMES:
            try:
                _, seconds = stacks.build(st)
            except stacks.StackBuildError as exc:
                pytest.fail(f"could not build scenario stack {name!r}:\n{exc}", pytrace=False)
            _BUILD_TIMES[name] = seconds
        return st

    return get


@pytest.fixture(scope="session")
def ort(stack: Callable[[str], stacks.Stack]) -> Callable[..., runs.OrtRun]:
    """ONNX Runtime itself in a scenario: ``ort(scenario_id, providers=..., preload=...)``."""
    memo: dict[tuple[Any, ...], runs.OrtRun] = {}

    def get(
        scenario_id: str,
        *,
        providers: tuple[str, ...] = (runs.CUDA, runs.CPU),
        preload: bool = False,
        ld_path: str | None = None,
    ) -> runs.OrtRun:
        key = (scenario_id, providers, preload, ld_path)
        if key not in memo:
            sc = runs.SCENARIOS[scenario_id]
            st = stack(sc.stack)
            env = sc.env()
            if ld_path is not None:
                env["LD_LIBRARY_PATH"] = ld_path
            started = time.monotonic()
            memo[key] = runs.run_ort(st, env, providers=providers, preload=preload)
            _RUN_TIMES[f"ort {scenario_id}"] = time.monotonic() - started
        return memo[key]

    return get


@pytest.fixture(scope="session")
def diagnosis(stack: Callable[[str], stacks.Stack]) -> Callable[..., runs.Diagnosis]:
    """``fallback-doctor diagnose --python <env> --json [extra]`` in a scenario, memoised."""
    memo: dict[tuple[str, ...], runs.Diagnosis] = {}

    def get(scenario_id: str, *extra: str) -> runs.Diagnosis:
        key = (scenario_id, *extra)
        if key not in memo:
            sc = runs.SCENARIOS[scenario_id]
            st = stack(sc.stack)
            started = time.monotonic()
            memo[key] = runs.run_diagnose(st, sc.env(), *extra)
            _RUN_TIMES[" ".join(("diagnose", *key))] = time.monotonic() - started
        return memo[key]

    return get


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how long each environment took to build and each child to run."""
    if not _BUILD_TIMES and not _RUN_TIMES:
        return
    terminalreporter.section("scenario stacks")
    for name, seconds in _BUILD_TIMES.items():
        state = "reused (marker matched)" if seconds == 0 else f"built in {seconds:.1f} s"
        terminalreporter.write_line(f"{name:22} {state}")
    for name, seconds in sorted(_RUN_TIMES.items()):
        terminalreporter.write_line(f"{name:50} {seconds:5.1f} s")
