"""``fallback-doctor check``: is the running server on the GPU? Cheap enough to run every minute.

It only reads: the target's configuration (which provider is asked for), the running process
(/proc/PID/maps: is the CUDA provider library mapped, which libcudart and libcudnn; NVML: does it
hold GPU memory) and the log lines since the last start-up. It never loads a CUDA library and
never runs an inference. The readers are core's own (core/readers/collect/process.py,
core/readers/collect/log.py) and the findings core/judgement/checks' (config, process, log), ranked
as ``diagnose`` ranks them.

The answer follows the Nagios plugin convention: OK 0, WARNING 1, CRITICAL 2, UNKNOWN 3, and one
status line with performance data. By hand: ``grep -E 'providers_cuda|cudart|cudnn' /proc/PID/maps``,
``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from fallback_doctor.core.language.texts import label, words_of, words_text
from fallback_doctor.core.model.facts.logs import LogFacts
from fallback_doctor.core.model.facts.process import ProcessFacts
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.result import Finding, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.targets.registry import find_profile
from fallback_doctor.core.readers.targets.spec import TargetSpec
from fallback_doctor.core.views.escape import visible_line


class State(IntEnum):
    """The Nagios plugin states; the value is the exit status."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


@dataclass(frozen=True)
class WatchResult:
    """What one check found: the state, the sentence, the facts behind the performance data."""

    state: State
    code: str
    """What decided the state: on_gpu, cpu_configured, on_cpu, fell_back, no_onnxruntime,
    no_gpu_memory, gpu_unconfirmed, log_problem, not_running, unreadable, target_error, crashed;
    for a log read alone (``--target log``), log_clean too."""
    message: str
    app: str
    configured_provider: str | None = None
    process: ProcessFacts | None = None
    """The process the state was decided by (the worst of the workers, where there are several)."""
    processes: tuple[ProcessFacts, ...] = ()
    """Every process looked at: the server, or its workers that have ONNX Runtime mapped."""
    first_cause: Finding | None = None
    findings: tuple[Finding, ...] = ()
    duration_s: float = 0.0
    checked_at: float = field(default_factory=time.time)

    @property
    def cuda_provider_loaded(self) -> bool:
        """Whether the process has mapped the CUDA provider library."""
        return self.process is not None and self.process.cuda_provider_mapped

    @property
    def gpu_memory_mib(self) -> int | None:
        """The GPU memory the process holds (0 when NVML lists it not), None when not known."""
        if self.process is None:
            return None
        memory = self.process.gpu_memory
        if memory.status == "holds":
            return memory.used_mib or 0
        return 0 if memory.status == "none" else None

    def mapped_names(self, *families: str) -> tuple[str, ...]:
        """The file names of the mapped libraries of these families (``cudart``, ``cudnn``)."""
        if self.process is None:
            return ()
        wanted = {family.lower() for family in families}
        return tuple(lib.name for lib in self.process.mapped_libraries if lib.family.lower() in wanted)


def _text(key: str, lang: str, **params: object) -> str:
    """A status line's words in ``lang``; a parameter that is catalogue words in ``lang`` too,
    data (a name, a path, a system's own message) as written."""
    return label(key, lang, **{name: words_text(value, lang) for name, value in params.items()})


def app_name(target: TargetFacts | None, process: ProcessFacts | None, name: str | None) -> str:
    """What the status line calls the server: ``--name``, ``bareun``, else the executable's name."""
    if name:
        return name
    profile = find_profile(target.kind) if target is not None else None
    if profile is not None and profile.server_name:
        return profile.server_name
    if process is not None:
        command = process.executable or (process.cmdline[0] if process.cmdline else "")
        if command:
            return os.path.basename(command)
    return "server"


def _libraries(process: ProcessFacts) -> str:
    """The CUDA runtime and cuDNN the process mapped: ``libcudart.so.12, libcudnn.so.9``."""
    names = [lib.name for family in ("cudart", "cudnn") for lib in process.mapped_libraries
             if lib.family.lower() == family]  # fmt: skip
    return ", ".join(dict.fromkeys(names)) or "no libcudart or libcudnn mapped"


def _memory_phrase(process: ProcessFacts, lang: str) -> str:
    memory = process.gpu_memory
    if memory.status == "holds":
        return _text("watch.memory.holds", lang, mib=memory.used_mib or 0)
    return _text("watch.memory.unknown", lang, reason=memory.reason_words or memory.reason or memory.status)


def _findings(snapshot: EnvironmentSnapshot) -> tuple[Finding, ...]:
    """The configuration, process and log checks over the partial snapshot, ranked like diagnose."""
    from fallback_doctor.core.flow.diagnosis import run_checks
    from fallback_doctor.core.judgement.checks import config, log, process
    from fallback_doctor.core.judgement.judge import SettleContext, settle_findings

    checks = (*config.CHECKS, *process.CHECKS, *log.CHECKS)
    target = snapshot.target
    context = SettleContext(config_path=target.config_path if target else None)
    return tuple(settle_findings(run_checks(snapshot, checks), context))


def _cause_phrase(finding: Finding | None, log: LogFacts | None, lang: str) -> str:
    """The first cause in a few words: the library the log says is missing, else the finding's title."""
    if finding is None:
        return "the CUDA provider library is not loaded"
    if finding.id.startswith("log.") and log is not None:
        for candidate in log.causes:
            library = candidate.fields.get("library")
            if candidate.cause == finding.cause and library:
                return _text("watch.library_missing", lang, library=library)
    return words_of(finding, lang)["title"]


def _judge(
    snapshot: EnvironmentSnapshot, findings: tuple[Finding, ...], app: str, lang: str
) -> tuple[State, str, str, Finding | None]:
    """(state, code, sentence, first cause) from the process facts and the ranked findings."""
    target, process = snapshot.target, snapshot.process
    assert target is not None and process is not None
    pid = process.pid
    if target.wants_cpu:
        provider = target.requested_provider or "cpu"
        return (
            State.OK,
            "cpu_configured",
            _text("watch.cpu_configured", lang, app=app, provider=provider),
            None,
        )
    if not process.onnxruntime_mapped:
        return State.WARNING, "no_onnxruntime", _text("watch.no_onnxruntime", lang, app=app, pid=pid), None
    from fallback_doctor.core.judgement.judge import first_cause

    first = first_cause(findings)  # core's first cause (core/judgement/judge.py), the one every surface shows
    error = first if first is not None and first.severity == Severity.ERROR else None
    if not process.cuda_provider_mapped:
        cause = _cause_phrase(error, snapshot.log, lang)
        return State.CRITICAL, "on_cpu", _text("watch.on_cpu", lang, app=app, cause=cause), error
    # ONNX Runtime keeps the provider library mapped after the CUDA session failed and it fell
    # back (seen with onnxruntime-gpu 1.23.2 without a driver): a mapped provider proves nothing.
    if snapshot.log is not None and snapshot.log.fallback:
        cause = _cause_phrase(error, snapshot.log, lang) if error else _text("watch.fell_back", lang)
        return State.CRITICAL, "fell_back", _text("watch.on_cpu", lang, app=app, cause=cause), error
    if process.gpu_memory.status == "none":
        return State.WARNING, "no_gpu_memory", _text("watch.no_gpu_memory", lang, app=app), error
    memory = _memory_phrase(process, lang)
    if process.gpu_memory.status != "holds":
        libraries = _libraries(process)
        message = _text("watch.gpu_unconfirmed", lang, app=app, memory=memory, libraries=libraries)
        return State.WARNING, "gpu_unconfirmed", message, error
    if error is not None:
        cause = _cause_phrase(error, snapshot.log, lang)
        return State.WARNING, "log_problem", _text("watch.log_problem", lang, app=app, cause=cause), error
    message = _text("watch.ok_gpu", lang, app=app, memory=memory, libraries=_libraries(process))
    return State.OK, "on_gpu", message, None


def _reads_log_alone(target: TargetFacts) -> bool:
    """A target whose evidence comes from elsewhere (TargetProfile.inspects_machine False: a
    customer's log read on the technician's laptop): no process of this machine is its."""
    profile = find_profile(target.kind)
    return profile is not None and not profile.inspects_machine


def _judge_log_alone(
    target: TargetFacts, spec: TargetSpec, app: str, lang: str, read_log: bool
) -> tuple[State, str, str, Finding | None, tuple[Finding, ...]]:
    """A log read alone: CRITICAL when it fell back (or names a cause that makes it fall back),
    WARNING for a lesser problem, OK when it shows none, UNKNOWN when no log was read. No process
    is looked for, no memory map read, NVML not asked. By hand: ``fallback-doctor explain-log FILE``."""
    from fallback_doctor.core.judgement.judge import first_cause
    from fallback_doctor.core.readers.collect.log import collect_log

    log = collect_log(target, spec) if read_log else None
    if log is None or not log.sources:
        why = "; ".join(f"{path}: {reason}" for path, reason in (log.unreadable if log else ()))
        message = _text("watch.log_alone.unread", lang, why=why or "--no-log")
        return State.UNKNOWN, "unreadable", message, None, ()
    findings = _findings(EnvironmentSnapshot(target=target, log=log))
    first = first_cause(findings)  # only a finding whose role can make ONNX Runtime fall back
    if log.fallback or first is not None:
        cause = _cause_phrase(first, log, lang) if first is not None else _text("watch.fell_back", lang)
        message = _text("watch.log_alone.on_cpu", lang, app=app, cause=cause)
        return State.CRITICAL, "fell_back", message, first, findings
    warning = next((f for f in findings if f.severity == Severity.WARNING), None)
    if warning is not None:
        message = _text("watch.log_alone.problem", lang, app=app, cause=_cause_phrase(warning, log, lang))
        return State.WARNING, "log_problem", message, None, findings
    return State.OK, "log_clean", _text("watch.log_alone.clean", lang, app=app), None, findings


def run_check(
    spec: TargetSpec,
    env: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    lang: str = "en",
    read_log: bool = True,
) -> WatchResult:
    """Check the running server of ``spec`` once; every failure is a state, nothing raises.

    ``env`` is the environment the check runs in (the server's own is read from /proc).
    """
    from fallback_doctor.core.readers.collect.find_process import find_server_process
    from fallback_doctor.core.readers.collect.log import collect_log
    from fallback_doctor.core.readers.collect.process import collect_process
    from fallback_doctor.core.readers.targets.profile import TargetNotFound
    from fallback_doctor.core.readers.targets.resolve import resolve_target

    started = time.monotonic()
    shell = dict(os.environ if env is None else env)

    def done(state: State, code: str, message: str, **rest: object) -> WatchResult:
        return WatchResult(state, code, message, duration_s=time.monotonic() - started, **rest)  # type: ignore[arg-type]

    try:
        target = resolve_target(spec, shell, load_library=False)
    except (TargetNotFound, OSError, ValueError) as error:
        return done(
            State.UNKNOWN, "target_error", _text("watch.target_error", lang, error=error), app=name or "?"
        )
    provider = target.requested_provider
    if _reads_log_alone(target):
        app = name or _text("watch.log_alone.app", lang)
        state, code, message, first, findings = _judge_log_alone(target, spec, app, lang, read_log)
        return done(state, code, message, app=app, configured_provider=provider, first_cause=first,
                    findings=findings)  # fmt: skip
    pid = find_server_process(target, spec.pid)
    if pid is None:
        app = app_name(target, None, name)
        return done(State.UNKNOWN, "not_running", _text("watch.not_running", lang, app=app), app=app,
                    configured_provider=provider)  # fmt: skip
    process = collect_process(pid, shell_env=shell)
    app = app_name(target, process, name)
    if process.error:
        return done(State.UNKNOWN, "not_running", _text("watch.not_running", lang, app=app), app=app,
                    configured_provider=provider, process=process)  # fmt: skip
    if not process.maps_read:
        why = next((limit.error for limit in process.read_limits if limit.what == "maps"), "not readable")
        message = _text("watch.unreadable", lang, app=app, pid=pid, why=why)
        return done(
            State.UNKNOWN, "unreadable", message, app=app, configured_provider=provider, process=process
        )
    log = collect_log(target, spec) if read_log else None
    processes = [process]
    if not process.onnxruntime_mapped:
        from fallback_doctor.core.watch.workers import onnxruntime_workers

        workers = [collect_process(child, shell_env=shell) for child in onnxruntime_workers(pid)]
        processes = [worker for worker in workers if worker.maps_read] or processes
    judged = []
    for examined in processes:
        snapshot = EnvironmentSnapshot(target=target, process=examined, log=log)
        findings = _findings(snapshot)
        judged.append((_judge(snapshot, findings, app, lang), examined, findings))
    (state, code, message, cause), worst, findings = max(judged, key=lambda item: _WORSE[item[0][0]])
    if worst is not process:
        message += " " + _text("watch.workers", lang, count=len(processes), parent=pid, pid=worst.pid)
    return done(state, code, message, app=app, configured_provider=provider, process=worst,
                processes=tuple(processes), first_cause=cause, findings=findings)  # fmt: skip


_WORSE = {State.OK: 0, State.UNKNOWN: 1, State.WARNING: 2, State.CRITICAL: 3}
"""Which of several workers' states the check reports: the worst."""


def _perf_value(value: int | float | None) -> str:
    return "U" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def status_line(result: WatchResult) -> str:
    """``CRITICAL - bareun on the CPU: … | cuda_provider_loaded=0 gpu_memory_mib=0 …``.

    One line, encodable as UTF-8: control characters, bidirectional overrides and lone
    surrogates (a ``--name`` that is not UTF-8) are shown as escapes (core/views/escape.py).
    """
    process = result.process
    read = process is not None and process.maps_read
    perf = {
        "cuda_provider_loaded": int(result.cuda_provider_loaded) if read else None,
        "onnxruntime_loaded": int(process.onnxruntime_mapped) if process is not None and read else None,
        "gpu_memory_mib": result.gpu_memory_mib,
    }
    data = " ".join(f"{key}={_perf_value(value)}" for key, value in perf.items())
    data += f" time={result.duration_s:.3f}s"
    # Outside text (a --name, a library's or the configuration's words) is shown, not obeyed.
    message = visible_line(" ".join(result.message.split())).replace("|", "/")
    return f"{result.state.name} - {message} | {data}"
