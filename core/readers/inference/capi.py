"""Test inference through ONNX Runtime's C API: the native application's own library, in a child.

A native application (the Bareun server) loads ``libonnxruntime.so`` itself; the GPU retry must
exercise that very library. The child (core/readers/probes/ort_capi_child.py, the standard library and
ctypes only) loads the library in ``lib_path`` and drives it through its C API; this module runs it
with the target's environment and a timeout, reads its JSON lines and turns them into a
:class:`~fallback_doctor.core.readers.inference.result.ProbeResult`. A crash, a hang, a flood or garbage
on stdout becomes a :class:`~fallback_doctor.core.readers.inference.result.ProbeFailure` in words, with
the phases finished before it and what ONNX Runtime had written to stderr until then.

By hand, the same as running a small C program against the library:
``LD_LIBRARY_PATH=<libPath> ./probe`` calling ``OrtGetApiBase()->GetApi(ORT_API_VERSION)``,
``SessionOptionsAppendExecutionProvider_CUDA_V2`` and ``CreateSession``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.platform.frozen import probe_argv
from fallback_doctor.core.readers.inference.jsonable import from_jsonable
from fallback_doctor.core.readers.inference.loader_env import lib_first_env
from fallback_doctor.core.readers.inference.result import (
    FailureKind,
    ModelRun,
    PhaseMark,
    ProbeCost,
    ProbeFailure,
    ProbeResult,
    RuntimeInfo,
    Stage,
    StrategyName,
    StrategyResult,
)
from fallback_doctor.core.readers.inference.run_words import doing_words, said_words
from fallback_doctor.core.readers.probes.protocol import json_lines
from fallback_doctor.core.readers.probes.runner import ChildOutcome, run_child, signal_name

_TAIL = 4000
_LOG_LINES = 40

_ORT_LINE = re.compile(r"\[(W|E|F):onnxruntime")


def child_script() -> Path:
    """The path of the self-contained C-API child (run by path, never imported)."""
    return Path(__file__).resolve().parent.parent / "probes" / "ort_capi_child.py"


def lib_path_first_env(env: Mapping[str, str], directories: Sequence[str]) -> dict[str, str]:
    """``env`` with ``directories`` first on the loader path (LD_LIBRARY_PATH; PATH on Windows).

    The "libPath first" strategy: what the application's start script does when it puts its own
    library folder ahead of everything else. By hand: ``LD_LIBRARY_PATH=<libPath>:$LD_LIBRARY_PATH``.
    """
    return lib_first_env(env, directories)


def run_capi_probe(
    lib_path: str,
    model: str,
    request: Mapping[str, object],
    env: Mapping[str, str],
    timeout_s: float,
    *,
    python: str = sys.executable,
    on_phase: Callable[[str, str, float, bool | None], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ProbeResult:
    """Run the CPU baseline and the GPU retry on the ONNX Runtime library ``lib_path`` via its C API.

    ``request`` holds the fields of ``ProbeRequest`` (runs, warmup, dims, providers, strict,
    threads, nice, strategy, baseline_dir, ...); ``env`` is the environment the application's
    library sees (its LD_LIBRARY_PATH decides which CUDA libraries the provider finds: pass
    :func:`lib_path_first_env` for the "libPath first" strategy). The child is killed with its
    process group at ``timeout_s``; a crash or a timeout becomes a failure sentence naming the
    phase ("the probe crashed with SIGSEGV while creating the CUDA session").

    Live: ``on_phase(name, "start" | "end", wall-clock time, ok)`` hears each phase when the child
    reports it (the time is when its line arrived here: the child keeps only its own clock), and
    ``on_start(pid)`` gets the child's PID as soon as it runs (a sampler follows it).

    By hand: ``LD_LIBRARY_PATH=<libPath> python ort_capi_child.py < request.json``.
    """
    with tempfile.TemporaryDirectory(prefix="gfd-capi-") as work_dir:
        child_request = dict(request)
        child_request.update(lib_path=str(lib_path), model=str(model), work_dir=work_dir)
        outcome = run_child(
            probe_argv(python, child_script(), flags=("-I", "-S")),
            env=dict(env),
            timeout_s=timeout_s,
            stdin_text=json.dumps(child_request),
            on_start=on_start,
            on_stdout_line=_live_listener(on_phase) if on_phase is not None else None,
        )
        result = parse_capi_output(outcome, child_request, work_dir)
        from fallback_doctor.core.readers.inference.python_probe import child_outputs

        prefix = str(child_request.get("strategy") or "capi")
        return dataclasses.replace(result, outputs=result.outputs + child_outputs(prefix, outcome))


def _live_listener(on_phase: Callable[[str, str, float, bool | None], None]) -> Callable[[str], None]:
    """The child's begin/end lines of whole phases, to ``on_phase`` as they arrive."""

    def listen(line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict) or not isinstance(event.get("phase"), str):
            return
        if event.get("event") == "begin" and event.get("step") == "phase":
            on_phase(event["phase"], "start", time.time(), None)
        elif event.get("event") == "end":
            ok = event.get("ok")
            on_phase(event["phase"], "end", time.time(), ok if isinstance(ok, bool) else None)

    return listen


def parse_capi_output(
    outcome: ChildOutcome, request: Mapping[str, object], work_dir: str | None = None
) -> ProbeResult:
    """Read the child's JSON lines into a ProbeResult; whatever it printed before dying still counts."""
    events, garbage = json_lines(outcome.stdout)
    cost = _cost(outcome, events)
    final = next((e for e in reversed(events) if e.get("event") == "result"), None)
    if final is not None and isinstance(final.get("result"), dict):
        try:
            result = ProbeResult.from_json(final["result"])
        except (TypeError, ValueError) as error:
            garbage.append(f"the result could not be read: {error}")
        else:
            ours = {k: v for k, v in _cost_dict(cost).items() if v is not None}
            merged = {**_cost_dict(result.cost), **ours}
            notes = result.notes
            if outcome.truncated:
                notes += ("the probe wrote more output than is kept; only its end was read",)
            return dataclasses.replace(result, cost=ProbeCost(**merged), notes=notes)
    return _partial_result(outcome, request, events, garbage, cost, work_dir)


def _cost_dict(cost: ProbeCost) -> dict[str, float | None]:
    return {
        "process_start_s": cost.process_start_s,
        "import_s": cost.import_s,
        "cpu_session_create_s": cost.cpu_session_create_s,
        "gpu_session_create_s": cost.gpu_session_create_s,
        "total_s": cost.total_s,
    }


def _cost(outcome: ChildOutcome, events: list[dict[str, Any]]) -> ProbeCost:
    """The whole run as we measured it; process start = our total minus the child's own clock."""
    last_t = max((float(e["t"]) for e in events if isinstance(e.get("t"), int | float)), default=None)
    start = outcome.duration_s - last_t if last_t is not None and outcome.ok else None
    return ProbeCost(process_start_s=start, total_s=outcome.duration_s)


def _phases(events: list[dict[str, Any]]) -> tuple[list[PhaseMark], str | None, str | None, str | None]:
    """PhaseMarks from begin/end lines; the open phase, its last step, and its stderr file."""
    marks: list[PhaseMark] = []
    open_phase: str | None = None
    last_step: str | None = None
    log_file: str | None = None
    for event in events:
        kind = event.get("event")
        phase = event.get("phase")
        if kind == "begin" and event.get("step") == "phase" and isinstance(phase, str):
            marks.append(PhaseMark(phase, float(event.get("t", 0.0))))
            open_phase, last_step, log_file = phase, None, event.get("log")
        elif kind == "begin" and isinstance(phase, str):
            last_step = str(event.get("step"))
            if open_phase != phase:
                open_phase, log_file = phase, None
        elif kind == "end" and isinstance(phase, str):
            for index in range(len(marks) - 1, -1, -1):
                if marks[index].name == phase and marks[index].end_s is None:
                    marks[index] = PhaseMark(
                        phase, marks[index].start_s, float(event.get("t", 0.0)), bool(event.get("ok"))
                    )
                    break
            open_phase, last_step, log_file = None, None, None
    return marks, open_phase, last_step, log_file


def _read_log(path: str | None, work_dir: str | None) -> list[str]:
    """What ONNX Runtime wrote to stderr in the unfinished phase (the child's capture file)."""
    if not path or not work_dir or os.path.dirname(os.path.abspath(path)) != os.path.abspath(work_dir):
        return []
    try:
        text = read_regular_text(path, 4 * 1024 * 1024)
    except OSError:
        return []
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip() for line in text.splitlines() if line.strip()]
    important = [line for line in lines if _ORT_LINE.search(line)]
    return (important + [line for line in lines[-10:] if line not in important])[-_LOG_LINES:]


def _gpu_name(request: Mapping[str, Any]) -> str:
    providers = [str(p) for p in request.get("providers") or ("CUDAExecutionProvider",)]
    first = next((p for p in providers if p != "CPUExecutionProvider"), "CUDAExecutionProvider")
    return "TensorRT" if first.startswith("Tensorrt") else "CUDA"


def _failure_words(
    outcome: ChildOutcome, doing: dict[str, Any], garbage: list[str], errored: bool
) -> tuple[FailureKind, dict[str, object] | None]:
    """How the C-API child failed and the sentence as catalogue words (None: the child's own
    error message, shown as written)."""
    words: dict[str, object] | None
    if outcome.outside is not None:
        kind, words = FailureKind.OUTSIDE, outcome.sentence_words(doing)
    elif outcome.timed_out:
        kind, words = FailureKind.TIMEOUT, outcome.sentence_words(doing)
    elif outcome.returncode is None:
        detail = outcome.stderr.strip()[:300]
        words = said_words(
            "evidence.probe.with_detail", sentence=outcome.sentence_words(doing), detail=detail
        )
        kind = FailureKind.START
    elif outcome.returncode < 0:
        kind, words = FailureKind.CRASH, outcome.sentence_words(doing)
    elif outcome.truncated:
        kind, words = FailureKind.FLOOD, said_words("evidence.probe.more_than_kept", doing=doing)
    elif garbage:
        kind = FailureKind.GARBAGE
        words = said_words("evidence.probe.garbage", doing=doing, garbage=repr(garbage[0][:200]))
    elif errored:
        kind, words = FailureKind.ERROR, None  # the child's own message, as written
    elif outcome.returncode == 0:
        kind, words = FailureKind.EXIT, said_words("evidence.probe.no_result", doing=doing)
    else:
        kind, words = FailureKind.EXIT, outcome.sentence_words(doing)
    return kind, words


def _partial_result(
    outcome: ChildOutcome,
    request: Mapping[str, object],
    events: list[dict[str, Any]],
    garbage: list[str],
    cost: ProbeCost,
    work_dir: str | None,
) -> ProbeResult:
    """No result line: a crash, a timeout, a flood, garbage, or a child that never started."""
    marks, open_phase, last_step, log_file = _phases(events)
    doing = doing_words(open_phase, _gpu_name(request), "evidence.doing.capi", "evidence.doing.import_capi")
    if last_step and last_step != "phase":
        doing = said_words("evidence.doing.step", doing=doing, step=last_step)
    error_event = next((e for e in reversed(events) if e.get("event") == "error"), None)
    kind, words = _failure_words(outcome, doing, garbage, error_event is not None)
    sentence = words_text(words) if words is not None else str((error_event or {}).get("error"))
    crashed = outcome.returncode is not None and outcome.returncode < 0
    signal = signal_name(-(outcome.returncode or 0)) if crashed else None
    failure = ProbeFailure(
        kind=kind,
        sentence=sentence,
        words=words,
        phase=open_phase,
        returncode=outcome.returncode,
        signal=signal,
        stdout_tail=outcome.stdout[-_TAIL:],
        stderr_tail=outcome.stderr[-_TAIL:],
    )
    runtime_event = next((e for e in reversed(events) if e.get("event") == "runtime"), None)
    runtime = RuntimeInfo(ort_location=str(request.get("lib_path") or "") or None)
    if runtime_event is not None and isinstance(runtime_event.get("runtime"), dict):
        try:
            runtime = from_jsonable(RuntimeInfo, runtime_event["runtime"])
        except (TypeError, ValueError):
            pass
    model_event = next((e for e in reversed(events) if e.get("event") == "model"), None)
    model: ModelRun | None = None
    if model_event is not None and isinstance(model_event.get("model"), dict):
        model = _model(model_event["model"])
    reached = Stage.RUNTIME_LOADED if runtime_event is not None else Stage.NOTHING
    strategy = StrategyResult(
        name=StrategyName(str(request.get("strategy") or StrategyName.AS_IS.value)),
        stage=reached,
        description=f"the C API of {request.get('lib_path')}, driven through ctypes",
        failure=failure,
    )
    return ProbeResult(
        kind="capi",
        completed=False,
        runtime=runtime,
        model=model,
        strategies=(strategy,),
        failure=failure,
        phases=tuple(marks),
        cost=cost,
        notes=(),
        log_excerpt=tuple(_read_log(log_file, work_dir)),
    )


def _model(data: Mapping[str, object]) -> ModelRun | None:
    try:
        return from_jsonable(ModelRun, data)
    except (TypeError, ValueError):
        return None
