"""Collect the target interpreter's import path and installed distributions.

The application's interpreter runs core/readers/probes/python_env_child.py by path (it does not
have our package), with the environment the command was started with, and prints JSON.
By hand: ``/path/to/python -m site`` and ``/path/to/python -m pip list -v``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.model.facts.python_env import Distribution, PythonEnvFacts
from fallback_doctor.core.readers.collect.early import python_env_argv, take_python_env
from fallback_doctor.core.readers.collect.errors import CollectError
from fallback_doctor.core.readers.probes.runner import finish_child, run_child

_DOING = "listing the installed packages"
MAX_LISTING = 32 * 1024 * 1024
"""Most bytes the listing may print: a real one is well under a MiB; an interpreter that floods
its output is stopped here, while it is read (memory stays bounded whatever it prints)."""


def collect_python_env(python: str, env: Mapping[str, str], timeout_s: float = 15.0) -> PythonEnvFacts:
    """The interpreter's version, prefix, import path and every installed distribution.

    Runs the self-contained child script under ``python`` (nothing is imported there but
    the standard library). Raises CollectError with a sentence when the interpreter cannot
    be started, crashes, times out or prints something that is not the expected JSON.
    By hand: ``/path/to/python -m site; /path/to/python -m pip list -v``.
    """
    started = take_python_env(python, env)
    if started is not None:
        outcome = finish_child(started, timeout_s=timeout_s, max_output=MAX_LISTING)
    else:
        argv = python_env_argv(python)
        outcome = run_child(argv, env=env, timeout_s=timeout_s, max_output=MAX_LISTING)
    if outcome.returncode is None and not outcome.timed_out and outcome.flooded is None:
        raise CollectError(f"could not start the interpreter {python}: {outcome.stderr.strip()}")
    if not outcome.ok:
        raise CollectError(
            f"{outcome.sentence(_DOING)} with the interpreter {python}{_stderr_tail(outcome.stderr)}",
            outcome.outside,
        )
    return parse_python_env(outcome.stdout, python)


def _stderr_tail(stderr: str, limit: int = 600) -> str:
    text = stderr.strip()
    if not text:
        return ""
    lines = text.splitlines()
    return ": " + " | ".join(lines[-4:])[-limit:]


def parse_python_env(stdout: str, python: str = "the interpreter") -> PythonEnvFacts:
    """Turn the child's JSON output into PythonEnvFacts; CollectError when it is not that."""
    data = _last_json_object(stdout)
    if data is None:
        shown = stdout.strip()[:200] or "nothing"
        raise CollectError(f"{python} printed no package listing (it printed: {shown!r})")
    try:
        return PythonEnvFacts(
            executable=str(data.get("executable") or python),
            version=str(data["version"]),
            prefix=str(data["prefix"]),
            platform=str(data["platform"]),
            machine=str(data.get("machine") or ""),
            site_packages=tuple(str(path) for path in data.get("site_packages", [])),
            distributions=tuple(_distribution(item) for item in data.get("distributions", [])),
            sys_path=tuple(str(path) for path in data.get("sys_path", [])),
            base_prefix=_optional_str(data.get("base_prefix")),
            user_site=_optional_str(data.get("user_site")),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise CollectError(f"{python} printed an incomplete package listing ({error!r} missing)") from None


def _last_json_object(stdout: str) -> dict[str, Any] | None:
    """The JSON object on the last line that holds one (a sitecustomize may print before it)."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "distributions" in value:
            return value
    return None


def _distribution(item: Any) -> Distribution:
    return Distribution(
        name=str(item["name"]),
        version=str(item.get("version") or ""),
        location=str(item["location"]),
        metadata_dir=_optional_str(item.get("metadata_dir")),
    )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)
