"""Run the native child probe (core/readers/probes/native_child.py) and turn its report into NativeFacts.

Loading libcuda, the CUDA runtime and cuDNN happens only in that child: a missing cuDNN
sub-library aborts the process that loads it, and cuInit can hang on a sick driver.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fallback_doctor.core.model.facts.native import LoadAttempt, NativeFacts
from fallback_doctor.core.platform.frozen import probe_argv
from fallback_doctor.core.readers.probes.protocol import json_lines
from fallback_doctor.core.readers.probes.runner import (
    ChildOutcome,
    StartedChild,
    finish_child,
    run_child,
    start_child,
)

_STDERR_LIMIT = 8000


def child_script() -> Path:
    """The path of the self-contained child script (run by path, never imported)."""
    return Path(__file__).resolve().parent.parent / "probes" / "native_child.py"


def collect_native(
    requests: Sequence[str],
    env: Mapping[str, str],
    python: str = sys.executable,
    timeout_s: float = 10.0,
    *,
    started: StartedChild | None = None,
) -> NativeFacts:
    """Load libcuda and the requested libraries in a child process and report what each did.

    ``requests`` are library names or paths (libcudart.so.12, /…/libcudnn.so.9); the child
    runs under ``python`` with the target's ``env`` (its LD_LIBRARY_PATH and
    CUDA_VISIBLE_DEVICES decide what loads and what is seen). A crash or a timeout becomes
    the outcome sentence, with every step the child finished before it.

    By hand: `python -c "import ctypes; ctypes.CDLL('libcuda.so.1').cuInit(0)"` and
    `LD_DEBUG=libs python -c "import ctypes; ctypes.CDLL('libcudart.so.12')"`.
    """
    request = json.dumps({"libraries": list(requests), "libcuda": True})
    if started is not None:
        return parse_child_output(finish_child(started, timeout_s=timeout_s, stdin_text=request), python)
    outcome = run_child(
        probe_argv(python, child_script(), flags=("-I", "-S")),
        env=dict(env),
        timeout_s=timeout_s,
        stdin_text=request,
    )
    return parse_child_output(outcome, python)


def start_native(env: Mapping[str, str], python: str = sys.executable) -> StartedChild:
    """Start the native child now: it probes the driver at once and waits for the libraries.

    Pass the result to ``collect_native(..., started=...)`` once the libraries are resolved.
    One the launcher started before the imports (core/readers/collect/early.py) is taken when its
    interpreter and environment are these.
    """
    from fallback_doctor.core.readers.collect.early import take_native

    early = take_native(python, env)
    if early is not None:
        return early
    return start_child(
        probe_argv(python, child_script(), "--driver-first", flags=("-I", "-S")), env=dict(env), stdin_text=""
    )


def parse_child_output(outcome: ChildOutcome, python: str | None = None) -> NativeFacts:
    """Read the child's JSON lines; whatever it printed before dying still counts."""
    events, garbage = _events(outcome.stdout)
    libcuda: LoadAttempt | None = None
    cu_driver_version: int | None = None
    cu_init: int | None = None
    cu_init_name: str | None = None
    device_count: int | None = None
    devices: tuple[tuple[str, int, int], ...] = ()
    attempts: list[LoadAttempt] = []
    pending: str | None = None
    provisional = False
    done = False
    for event in events:
        kind = event.get("event")
        if kind == "begin":
            pending = str(event.get("step"))
            continue
        if kind == "libcuda":
            libcuda = _attempt(event.get("attempt"))
            cu_driver_version = _int(event.get("cu_driver_version"))
        elif kind == "cu_init":
            cu_init = _int(event.get("result"))
            cu_init_name = _str(event.get("name"))
        elif kind == "cu_devices":
            device_count = _int(event.get("count"))
            devices = tuple(
                (str(item[0]), int(item[1]), int(item[2]))
                for item in event.get("devices") or ()
                if isinstance(item, list) and len(item) == 3
            )
        elif kind in ("loaded", "attempt"):
            attempt = _attempt(event.get("attempt"))
            if attempt is None:
                continue
            if kind == "attempt" and provisional:
                attempts.pop()
            attempts.append(attempt)
            provisional = kind == "loaded"
            if provisional:
                # A "loaded" line is followed by version calls: the step is still running.
                continue
        elif kind == "done":
            done = True
        pending = None if kind != "hello" else pending
    crashed_step = None if done else pending
    sentence = _outcome_sentence(outcome, done, crashed_step, garbage)
    return NativeFacts(
        outcome=sentence,
        libcuda=libcuda,
        cu_driver_version=cu_driver_version,
        cu_init_result=cu_init,
        attempts=tuple(attempts),
        stderr=outcome.stderr[-_STDERR_LIMIT:],
        cu_init_error_name=cu_init_name,
        cu_device_count=device_count,
        cu_devices=devices,
        crashed_step=crashed_step,
        timed_out=outcome.timed_out,
        returncode=outcome.returncode,
        outside=outcome.outside,
        python=python,
    )


def _outcome_sentence(outcome: ChildOutcome, done: bool, step: str | None, garbage: list[str]) -> str:
    if done and outcome.ok:
        return "ok"
    doing = step or "probing the native libraries"
    if outcome.timed_out or outcome.returncode != 0:
        return outcome.sentence(doing)
    # Exit status 0 without the final line: the output is not ours (a wrapper script, a
    # library constructor printing to stdout, an interpreter that is not Python).
    sample = garbage[0][:200] if garbage else outcome.stdout.strip()[:200]
    if sample:
        return f"the probe's output could not be read while {doing}: {sample!r}"
    return f"the probe printed nothing while {doing}"


def _events(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    # Whitespace around a line is the child's padding, not part of the protocol.
    return json_lines("\n".join(line.strip() for line in stdout.splitlines()), require=None)


def _attempt(raw: Any) -> LoadAttempt | None:
    if not isinstance(raw, dict):
        return None
    return LoadAttempt(
        name=str(raw.get("name", "")),
        loaded=bool(raw.get("loaded")),
        path=_str(raw.get("path")),
        error=_str(raw.get("error")),
        version=_int(raw.get("version")),
        kind=str(raw.get("kind") or "library"),
        version_rc=_int(raw.get("version_rc")),
        driver_version=_int(raw.get("driver_version")),
        cudart_version=_int(raw.get("cudart_version")),
        missing_companions=tuple(str(item) for item in raw.get("missing_companions") or ()),
        skipped=_str(raw.get("skipped")),
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
