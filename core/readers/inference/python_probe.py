"""Test inference for a Python application: its own interpreter, its own ONNX Runtime, in a child.

The child (core/readers/probes/ort_python_child.py: standard library, onnxruntime and numpy only) runs the
CPU baseline and the GPU retry; this module runs it through ``runner.run_child`` (timeout, process
group killed), once per library strategy:

1. as is: the application's environment unchanged (CPU baseline + GPU retry);
2. ``onnxruntime.preload_dlls()`` first (ONNX Runtime 1.21+): the CUDA/cuDNN wheels' libraries;
3. library folders first on the loader path (``LD_LIBRARY_PATH``): a re-exec with that environment.

Each strategy is graded by the furthest :class:`Stage` it reached. A crash, a hang, a flood or
garbage on stdout becomes a :class:`ProbeFailure` in words, with the phase it happened in and what
ONNX Runtime had written (the child's capture file) as evidence. By hand::

    echo '{"model": "encoder.onnx"}' | /path/to/app/python ort_python_child.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.result import Words
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.readers.inference.loader_env import lib_first_env, python_lib_dirs
from fallback_doctor.core.readers.inference.result import (
    FailureKind,
    PhaseMark,
    ProbeCost,
    ProbeFailure,
    ProbeOutput,
    ProbeRequest,
    ProbeResult,
    RuntimeInfo,
    Stage,
    StrategyName,
    StrategyResult,
    stage_rank,
)
from fallback_doctor.core.readers.inference.run_words import doing_words, said_words
from fallback_doctor.core.readers.probes.protocol import json_lines
from fallback_doctor.core.readers.probes.runner import ChildOutcome, run_child, signal_name

TEST_ENV = "FALLBACK_DOCTOR_PROBE_TEST"
"""TEST ONLY: the child honours ``ProbeRequest.test_mode`` only with this variable set to 1."""

DEFAULT_TIMEOUT_S = 120.0
"""The whole test inference (every strategy together) ends within this, unless told otherwise."""
TENSORRT_TIMEOUT_S = 900.0
"""Building a TensorRT engine can take minutes: the TensorRT-first retry gets a longer timeout."""
MIN_STRATEGY_S = 10.0
"""A later strategy is not started with less time than this left; it is skipped, saying why."""

_TAIL = 4000
_LOG_LINES = 60

_PYTHON_PROBE = "evidence.doing.python"
"""The words for what the Python probe was doing when no phase of its own was open."""

PhaseListener = Callable[[str, str, float, bool | None], None]
"""Called with (phase name, "start" | "end", wall-clock time, ok) for each phase of each child,
as the child reports it (live, from a reader thread), not after the child has ended."""

StartListener = Callable[[int], None]
"""Called with the PID of each probe child as soon as it has started (a sampler follows it)."""


def child_script() -> Path:
    """The path of the self-contained Python child (copied and run by path, never imported)."""
    return Path(__file__).resolve().parent.parent / "probes" / "ort_python_child.py"


def stage_child(work: str) -> Path:
    """The child copied into ``work`` with what it imports (probe_shared.py, python_child/)."""
    probes = child_script().parent
    shutil.copyfile(probes / "probe_shared.py", Path(work) / "probe_shared.py")
    shutil.copytree(
        probes / "python_child", Path(work) / "python_child", ignore=shutil.ignore_patterns("*.pyc")
    )
    return Path(shutil.copy(child_script(), work))


def run_python_probe(
    python: str,
    request: ProbeRequest,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    strategies: Sequence[StrategyName] = tuple(StrategyName),
    lib_dirs: Sequence[str] | None = None,
    on_phase: PhaseListener | None = None,
    on_start: StartListener | None = None,
) -> ProbeResult:
    """The CPU baseline and the GPU retry with the application's interpreter, strategy by strategy.

    ``env`` is the application's environment (default: ours). The first strategy (as is) runs the
    CPU baseline too; later ones compare with its stored outputs. Later strategies run only while
    none has reached inference on the GPU. ``lib_dirs``: the folders the "library folders first"
    strategy puts first (default: the environment's ``site-packages/nvidia/*/lib``). ``on_phase``
    hears each phase as it starts and ends; ``on_start`` each child's PID as soon as it runs.
    ``timeout_s`` bounds the whole run, every strategy together (default DEFAULT_TIMEOUT_S, or
    TENSORRT_TIMEOUT_S for TensorRT first): a later strategy gets what is left, or is skipped.

    By hand: ``echo '{"model": "m.onnx"}' | <python> core/readers/probes/ort_python_child.py``.
    """
    if os.sep in python or (os.altsep and os.altsep in python):
        python = os.path.abspath(python)  # the child runs in a work folder: a relative path would break
    base_env = dict(os.environ if env is None else env)
    if timeout_s is None:
        trt = bool(request.providers) and request.providers[0].startswith("Tensorrt")
        timeout_s = TENSORRT_TIMEOUT_S if trt else DEFAULT_TIMEOUT_S
    merged: ProbeResult | None = None
    collected: list[StrategyResult] = []
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="gfd-probe-") as work:
        script = stage_child(work)
        baseline_dir = str(Path(work) / "baseline")
        for index, name in enumerate(strategies):
            left = deadline - time.monotonic()
            skipped = _skip_reason(merged, collected, left, timeout_s)
            prepared = None if skipped else _strategy_env(name, base_env, python, lib_dirs)
            if skipped or isinstance(prepared, Words):
                why = skipped or prepared
                assert isinstance(why, Words)
                collected.append(StrategyResult(name=name, skipped=words_text(why), skipped_words=why))
                continue
            assert prepared is not None
            child_env, changes = prepared
            child_request = dataclasses.replace(
                request,
                strategy=name,
                cpu_baseline=request.cpu_baseline and index == 0,
                baseline_dir=baseline_dir,
            )
            result = run_child_once(
                python,
                script,
                child_request,
                env=child_env,
                timeout_s=max(1.0, left),
                work=work,
                on_phase=on_phase,
                on_start=on_start,
            )
            collected.append(_strategy_of(result, name, changes))
            merged = result if merged is None else _merge(merged, result, name)
    if merged is None:
        merged = ProbeResult(kind="python", runtime=RuntimeInfo(interpreter=python))
    return dataclasses.replace(merged, strategies=tuple(collected))


_NOT_GPU_PROVIDERS = frozenset({"CPUExecutionProvider", "AzureExecutionProvider"})
"""Providers a library strategy cannot turn into a GPU run."""


def _skip_reason(
    merged: ProbeResult | None, collected: list[StrategyResult], left: float, timeout_s: float
) -> Words | None:
    """Why the next strategy is not run: no interpreter, already on the GPU, or no time left."""
    if merged is not None and merged.failure is not None and merged.failure.kind == FailureKind.START:
        return Words("evidence.skip.no_interpreter")
    if any(stage_rank(s.stage) >= stage_rank(Stage.INFERENCE_ON_GPU) for s in collected):
        return Words("evidence.skip.not_needed")
    runtime = merged.runtime if merged is not None else None
    if runtime is not None and runtime.available_providers and not runtime.plugin_eps:
        gpu = [p for p in runtime.available_providers if p not in _NOT_GPU_PROVIDERS]
        if not gpu:
            listed = ", ".join(runtime.available_providers)
            return Words("evidence.skip.no_gpu_provider", {"listed": listed})
    if collected and left < MIN_STRATEGY_S:
        return Words("evidence.skip.time_used_up", {"seconds": f"{timeout_s:.0f}"})
    return None


def _strategy_env(
    name: StrategyName, base_env: Mapping[str, str], python: str, lib_dirs: Sequence[str] | None
) -> tuple[dict[str, str], dict[str, str]] | Words:
    """(the child's environment, the changes it makes), or why the strategy cannot be tried."""
    child_env = dict(base_env)
    if name == StrategyName.PRELOAD_DLLS and lib_dirs is None and not python_lib_dirs(python):
        return Words("evidence.skip.no_nvidia_wheel")
    if name != StrategyName.LIB_PATH_FIRST:
        return child_env, {}
    dirs = list(lib_dirs) if lib_dirs is not None else python_lib_dirs(python)
    if not dirs:
        return Words("evidence.skip.no_folder")
    child_env = lib_first_env(child_env, dirs)
    variable = "PATH" if sys.platform == "win32" else "LD_LIBRARY_PATH"
    if child_env[variable] == base_env.get(variable):
        return Words("evidence.skip.already_first", {"variable": variable, "dirs": os.pathsep.join(dirs)})
    return child_env, {variable: child_env[variable]}


def _strategy_of(result: ProbeResult, name: StrategyName, changes: dict[str, str]) -> StrategyResult:
    strategy = result.strategies[0] if result.strategies else StrategyResult(name=name)
    if changes:
        strategy = dataclasses.replace(strategy, environment=changes)
    if result.failure is not None and strategy.failure is None:
        strategy = dataclasses.replace(strategy, failure=result.failure)
    return strategy


def _merge(merged: ProbeResult, result: ProbeResult, name: StrategyName) -> ProbeResult:
    return dataclasses.replace(
        merged,
        notes=merged.notes + result.notes,
        outputs=merged.outputs + result.outputs,
        phases=merged.phases + tuple(_shift(result.phases, f"{name.value}.")),
    )


def _shift(phases: Sequence[PhaseMark], prefix: str) -> list[PhaseMark]:
    return [dataclasses.replace(mark, name=prefix + mark.name) for mark in phases]


def run_child_once(
    python: str,
    script: Path,
    request: ProbeRequest,
    *,
    env: Mapping[str, str],
    timeout_s: float,
    work: str,
    on_phase: PhaseListener | None = None,
    on_start: StartListener | None = None,
) -> ProbeResult:
    """One child run for one strategy: spawn, wait (or kill at the timeout), read its JSON lines.

    With ``on_phase`` / ``on_start`` the lines are read as they come: each phase reaches
    ``on_phase`` when the child reports it, the PID reaches ``on_start`` when the child starts.
    """
    capture = Path(work) / f"capture-{request.strategy.value}.log"
    child_env = dict(env)
    if request.test_mode:
        child_env[TEST_ENV] = "1"
    else:
        child_env.pop(TEST_ENV, None)
    threads = str(max(1, request.threads))
    child_env.setdefault("OMP_NUM_THREADS", threads)
    child_env.setdefault("MKL_NUM_THREADS", threads)
    child_env.setdefault("OPENBLAS_NUM_THREADS", threads)
    started_wall = time.time()
    live = on_phase is not None or on_start is not None
    seen: list[int] = []

    def started(pid: int) -> None:
        seen.append(pid)
        if on_start is not None:
            on_start(pid)

    outcome = run_child(
        [python, str(script), "--capture", str(capture)],
        env=child_env,
        timeout_s=timeout_s,
        stdin_text=json.dumps(request.to_json()),
        cwd=work,
        on_start=started if live else None,
        on_stdout_line=_live_listener(on_phase, started, seen) if live else None,
    )
    try:
        captured = read_regular_text(capture, 4 * 1024 * 1024)
    except OSError:
        captured = ""
    result = parse_child_output(outcome, request, captured, started_wall, None if live else on_phase)
    return dataclasses.replace(
        result, outputs=result.outputs + child_outputs(request.strategy.value, outcome, captured)
    )


OUTPUT_TAIL = 16 * 1024
"""How much of the end of each stream of each child a result keeps (for the bundle)."""


def child_outputs(prefix: str, outcome: ChildOutcome, captured: str = "") -> tuple[ProbeOutput, ...]:
    """The ends of a child's stdout and stderr (with what ONNX Runtime wrote to its captured fd 2)."""
    stderr = outcome.stderr + (("\n--- captured fd 2 ---\n" + captured) if captured else "")
    return (
        ProbeOutput(f"{prefix}.stdout.txt", outcome.stdout[-OUTPUT_TAIL:]),
        ProbeOutput(f"{prefix}.stderr.txt", stderr[-OUTPUT_TAIL:]),
    )


def _live_listener(
    on_phase: PhaseListener | None, on_start: StartListener, seen: list[int]
) -> Callable[[str], None]:
    """A stdout-line listener: phase lines to ``on_phase``; the child's own PID (its hello line)
    to ``on_start`` when it differs from the spawned one (an interpreter behind a wrapper)."""

    def listen(line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        kind = event.get("event")
        if kind == "phase" and on_phase is not None and isinstance(event.get("wall"), int | float):
            ok = event.get("ok")
            on_phase(
                str(event.get("name")),
                str(event.get("state")),
                float(event["wall"]),
                ok if isinstance(ok, bool) else None,
            )
        elif kind == "hello":
            pid = event.get("pid")
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and pid not in seen:
                on_start(pid)

    return listen


def parse_child_output(
    outcome: ChildOutcome,
    request: ProbeRequest,
    captured: str = "",
    started_wall: float | None = None,
    on_phase: PhaseListener | None = None,
) -> ProbeResult:
    """The child's JSON lines as a ProbeResult; without a result line, a failure in words."""
    events, garbage = json_lines(outcome.stdout)
    if on_phase is not None:
        for event in events:
            if event.get("event") == "phase" and isinstance(event.get("wall"), int | float):
                ok = event.get("ok")
                on_phase(
                    str(event.get("name")),
                    str(event.get("state")),
                    float(event["wall"]),
                    ok if isinstance(ok, bool) else None,
                )
    hello = next((e for e in events if e.get("event") == "hello"), None)
    process_start = None
    if hello is not None and started_wall is not None and isinstance(hello.get("wall"), int | float):
        process_start = max(0.0, float(hello["wall"]) - started_wall)
    final = next((e for e in reversed(events) if e.get("event") == "result"), None)
    if final is not None and isinstance(final.get("result"), dict) and not outcome.truncated:
        try:
            result = ProbeResult.from_json(final["result"])
        except (TypeError, ValueError) as error:
            garbage.append(f"the result could not be read: {error}")
        else:
            cost = dataclasses.replace(result.cost, process_start_s=process_start, total_s=outcome.duration_s)
            return dataclasses.replace(result, cost=cost)
    return _failed_result(outcome, request, events, garbage, captured, process_start)


def _open_phase(events: list[dict[str, Any]]) -> tuple[list[PhaseMark], str | None]:
    marks: list[PhaseMark] = []
    stack: list[str] = []
    for event in events:
        if event.get("event") != "phase":
            continue
        name = str(event.get("name"))
        at = float(event.get("t", 0.0))
        if event.get("state") == "start":
            marks.append(PhaseMark(name, at))
            stack.append(name)
        elif event.get("state") == "end":
            for index in range(len(marks) - 1, -1, -1):
                if marks[index].name == name and marks[index].end_s is None:
                    marks[index] = PhaseMark(name, marks[index].start_s, at, bool(event.get("ok")))
                    break
            if name in stack:
                stack.remove(name)
    return marks, (stack[-1] if stack else None)


def _gpu_name(request: ProbeRequest) -> str:
    first = next((p for p in request.providers if p != "CPUExecutionProvider"), "CUDAExecutionProvider")
    return "TensorRT" if first.startswith("Tensorrt") else "CUDA"


def _log_lines(captured: str) -> list[str]:
    lines = [_strip_ansi(line).rstrip() for line in captured.splitlines() if line.strip()]
    important = [
        line for line in lines if "onnxruntime" in line and ("[E:" in line or "[W:" in line or "[F:" in line)
    ]
    tail = [line for line in lines[-10:] if line not in important and "[V:" not in line and "[I:" not in line]
    return (important + tail)[-_LOG_LINES:]


def _strip_ansi(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\x1b" and text[index + 1 : index + 2] == "[":
            end = index + 2
            while end < len(text) and (text[end].isdigit() or text[end] == ";"):
                end += 1
            index = end + 1
            continue
        out.append(text[index])
        index += 1
    return "".join(out)


def _failed_result(
    outcome: ChildOutcome,
    request: ProbeRequest,
    events: list[dict[str, Any]],
    garbage: list[str],
    captured: str,
    process_start: float | None,
) -> ProbeResult:
    """No usable result line: a crash, a timeout, a flood, garbage, an error, or no start at all."""
    marks, open_phase = _open_phase(events)
    gpu = _gpu_name(request)
    doing = doing_words(open_phase, gpu, _PYTHON_PROBE, "evidence.doing.import")
    error_event = next((e for e in reversed(events) if e.get("event") == "error"), None)
    if outcome.outside is not None:
        kind, words = FailureKind.OUTSIDE, outcome.sentence_words(doing)
    elif outcome.timed_out:
        kind, words = FailureKind.TIMEOUT, outcome.sentence_words(doing)
    elif outcome.returncode is None:
        kind = FailureKind.START
        detail = outcome.stderr.strip()[:300]
        words = said_words(
            "evidence.probe.with_detail", sentence=outcome.sentence_words(doing), detail=detail
        )
    elif outcome.returncode < 0:
        kind, words = FailureKind.CRASH, outcome.sentence_words(doing)
    elif outcome.truncated:
        kind, words = FailureKind.FLOOD, said_words("evidence.probe.more_than_kept_ignored", doing=doing)
    elif garbage:
        kind = FailureKind.GARBAGE
        words = said_words("evidence.probe.garbage", doing=doing, garbage=repr(garbage[0][:200]))
    elif error_event is not None:
        kind = FailureKind.ERROR
        phase = error_event.get("phase") or open_phase
        where = doing_words(str(phase), gpu, _PYTHON_PROBE, "evidence.doing.import")
        words = said_words("evidence.probe.failed_while", doing=where, error=str(error_event.get("message")))
    elif outcome.returncode == 0:
        kind, words = FailureKind.EXIT, said_words("evidence.probe.no_result", doing=doing)
    else:
        kind, words = FailureKind.EXIT, outcome.sentence_words(doing)
    code = outcome.returncode
    failure = ProbeFailure(
        kind=kind,
        sentence=words_text(words),
        words=words,
        phase=open_phase,
        returncode=code,
        signal=signal_name(-code) if code is not None and code < 0 else None,
        stdout_tail=outcome.stdout[-_TAIL:],
        stderr_tail=(outcome.stderr + _strip_ansi(captured))[-_TAIL:],
    )
    imported = any(m.name == "import" and m.ok for m in marks)
    strategy = StrategyResult(
        name=request.strategy,
        stage=Stage.RUNTIME_LOADED if imported else Stage.NOTHING,
        failure=failure,
    )
    hello = next((e for e in events if e.get("event") == "hello"), None)
    runtime = RuntimeInfo(
        interpreter=str(hello.get("executable")) if hello else None,
        python_version=str(hello.get("python")) if hello else None,
        pid=int(hello["pid"]) if hello and isinstance(hello.get("pid"), int) else None,
    )
    return ProbeResult(
        kind="python",
        completed=False,
        runtime=runtime,
        strategies=(strategy,),
        failure=failure,
        phases=tuple(marks),
        cost=ProbeCost(process_start_s=process_start, total_s=outcome.duration_s),
        log_excerpt=tuple(_log_lines(captured)),
    )
