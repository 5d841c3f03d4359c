"""Findings from a test inference (the CPU baseline and the GPU retry of core/inference).

``inference_findings(result)`` turns a :class:`ProbeResult` into findings: the GPU retry fell back
to the CPU (ONNX Runtime's own warning quoted, the strict run's error quoted, the cause read from
the quote), no session at all, nodes left on the CPU, outputs that differ, a probe that crashed or
timed out (a probe-layer finding), a strategy that gets further ("it works if you do X"), and the
GPU verified. For Python applications the remediation carries the start-up guard.

By hand: ``python -c "import onnxruntime as o; s = o.InferenceSession('m.onnx',
providers=['CUDAExecutionProvider', 'CPUExecutionProvider']); print(s.get_providers())"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fallback_doctor.core.language.evidence_text import code_step, commented, said
from fallback_doctor.core.language.texts import label, label_ref, make_finding
from fallback_doctor.core.model.causes import Cause, layer_of
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import CodeStep, Commented, Finding, Layer, Severity, Words
from fallback_doctor.core.readers.inference.result import (
    FailureKind,
    ProbeResult,
    SessionRun,
    Stage,
    StrategyName,
    StrategyResult,
    Verdict,
    stage_rank,
)
from fallback_doctor.core.readers.inference.run_words import (
    nodes_words,
    record_said,
    runtime_text,
    session_evidence,
    short_line,
    strategy_evidence,
)
from fallback_doctor.core.readers.probes.outside import interrupted_finding

FINDINGS: tuple[FindingSpec, ...] = (
    # The three below carry the cause the probe found, at run time (their layer follows it).
    FindingSpec("inference.fell_back", None, None, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("inference.fell_back_native", None, None, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("inference.failed", None, None, Severity.ERROR, role=Role.CAUSE),
    FindingSpec("inference.gpu_verified", Cause.UNKNOWN, Layer.PROBE, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("inference.partial_placement", Cause.UNKNOWN, Layer.PROBE, Severity.WARNING, role=Role.CAUSE),
    FindingSpec("inference.outputs_differ", Cause.UNKNOWN, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT),
    FindingSpec("inference.probe_failed", Cause.PROBE_FAILED, Layer.PROBE, Severity.ERROR, role=Role.CONTEXT),
    FindingSpec(
        "inference.unusable_model", Cause.CONFIG_INVALID, Layer.PROBE, Severity.WARNING, role=Role.CONTEXT
    ),
    FindingSpec("inference.strategy_further", Cause.UNKNOWN, Layer.LOADER, Severity.INFO, role=Role.CONTEXT),
    FindingSpec(
        "inference.gpu_memory_others", Cause.UNKNOWN, Layer.RESOURCES, Severity.INFO, role=Role.CAUSE
    ),
    FindingSpec(
        "inference.gpu_busy_before", Cause.UNKNOWN, Layer.RESOURCES, Severity.INFO, role=Role.CONTEXT
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_CPU = "CPUExecutionProvider"

#: The guard for a Python application: turn a silent fallback into a loud start-up error. Code
#: steps (shown as code, never with "$"): check the providers after creating the session, or make
#: ONNX Runtime itself refuse to fall back (session.disable_cpu_ep_fallback, ONNX Runtime's
#: session options: https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html).
PYTHON_GUARD: tuple[CodeStep, ...] = (
    code_step(
        "session = onnxruntime.InferenceSession(model, providers=[...])\n"
        'assert "CUDAExecutionProvider" in session.get_providers(), session.get_providers()',
        "remedy.code_where.creates_session",
        1,
    ),
    code_step(
        "so = onnxruntime.SessionOptions()\n"
        'so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")\n'
        "session = onnxruntime.InferenceSession(model, sess_options=so, providers=[...])",
        "remedy.code_where.creates_session",
        2,
    ),
)

#: What a quoted ONNX Runtime message says about the cause, most specific first.
_QUOTE_CAUSES: tuple[tuple[str, Cause], ...] = (
    (r"libcudnn\w*\.so|cudnn\w*64_\d+\.dll|CUDNN_STATUS|cuDNN failure", Cause.CUDNN_MISSING),
    (r"libnvinfer|nvinfer\w*\.dll|install TensorRT", Cause.TENSORRT_MISSING),
    (r"libcuda\.so\.1|nvcuda\.dll", Cause.DRIVER_MISSING),
    (r"driver version is insufficient|CUDA failure 35", Cause.DRIVER_TOO_OLD),
    (r"no CUDA-capable device|CUDA failure 100", Cause.NO_GPU_VISIBLE),
    (r"no kernel image is available|CUDA failure 209", Cause.UNSUPPORTED_ARCH),
    (r"out of memory|CUDA failure 2\b", Cause.OUT_OF_MEMORY),
    (
        r"lib(cublas\w*|cudart|cufft|curand|nvrtc|nvJitLink)\.so|(cublas\w*|cudart|cufft|curand)64_\d+\.dll",
        Cause.CUDA_RUNTIME_MISSING,
    ),
    (r"not in available provider names", Cause.EP_NOT_IN_BUILD),
    (r"which depends on .* which is missing|LoadLibrary failed", Cause.WINDOWS_DLL_LOAD_ERROR),
)


def stage_words(stage: Stage, lang: str = "en") -> str:
    """A stage in words, for people, in ``lang`` (labels/stages.json's ``reached.stage.*``)."""
    return label(f"reached.stage.{Stage(stage).value}", lang)


def cause_from_quote(lines: Iterable[str]) -> Cause:
    """The cause code a quoted ONNX Runtime message points at (UNKNOWN when none matches)."""
    text = "\n".join(lines)
    for pattern, cause in _QUOTE_CAUSES:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return cause
    return Cause.UNKNOWN


def gpu_verified(result: ProbeResult) -> bool:
    """True only when an inference really ran on the GPU (as is): the verdict ``gpu_verified``."""
    as_is = result.as_is
    return (
        as_is is not None
        and as_is.gpu is not None
        and as_is.gpu.verdict == Verdict.GPU_ACTIVE
        and stage_rank(as_is.stage) >= stage_rank(Stage.INFERENCE_ON_GPU)
    )


def _ms(session: SessionRun | None) -> str:
    if session is None or session.latency is None:
        return "n/a"
    return f"{session.latency.p50_ms:.1f}"


def _quote(session: SessionRun, limit: int = 2) -> str | Words:
    lines = [short_line(line) for line in session.ort_messages if line.strip()]
    if not lines:
        return Words("evidence.nothing_printed")
    return " / ".join(f'"{line}"' for line in lines[:limit])


def inference_findings(result: ProbeResult, *, python_app: bool | None = None) -> list[Finding]:
    """Findings from one test inference; ``python_app`` (default: the probe's kind) adds the guard."""
    if python_app is None:
        python_app = result.kind == "python"
    guard = PYTHON_GUARD if python_app else ()
    findings: list[Finding] = []
    findings.extend(_failure_findings(result))
    findings.extend(_busy_before_findings(result))
    as_is = result.as_is
    gpu = as_is.gpu if as_is is not None else None
    cpu = result.cpu
    if gpu is not None:
        findings.extend(_gpu_findings(result, gpu, cpu, guard))
    if as_is is not None and not gpu_verified(result):
        findings.extend(_strategy_findings(result, as_is))
    from fallback_doctor.core.readers.inference.findings_now import now_findings

    findings.extend(now_findings(result))
    return findings


def _failure_findings(result: ProbeResult) -> list[Finding]:
    failure = result.failure
    if failure is None:
        return []
    if failure.kind == FailureKind.OUTSIDE:
        return [interrupted_finding(failure.sentence, failure.stderr_tail)]
    if failure.kind == FailureKind.UNUSABLE_MODEL:
        return [
            make_finding(
                "inference.unusable_model",
                Cause.CONFIG_INVALID,
                Layer.PROBE,
                Severity.WARNING,
                params={"reason": failure.sentence},
                evidence=(said("evidence.model", value=result.model.path if result.model else "?"),),
            )
        ]
    evidence = [record_said("evidence.what_happened", failure.sentence, failure.words)]
    if failure.phase:
        evidence.append(said("evidence.phase", value=failure.phase))
    if failure.signal:
        evidence.append(said("evidence.signal", value=failure.signal))
    evidence.extend(said("evidence.ort_said", value=short_line(line)) for line in result.log_excerpt[-6:])
    if failure.stderr_tail.strip():
        evidence.append(said("evidence.probe_stderr_end", value=failure.stderr_tail.strip()[-800:]))
    if failure.stdout_tail.strip() and failure.kind in (FailureKind.GARBAGE, FailureKind.FLOOD):
        evidence.append(said("evidence.probe_stdout_end", value=failure.stdout_tail.strip()[-300:]))
    return [
        make_finding(
            "inference.probe_failed",
            Cause.PROBE_FAILED,
            layer_of(Cause.PROBE_FAILED),
            Severity.ERROR,
            params={"sentence": failure.sentence, "runtime": runtime_text(result)},
            evidence=tuple(evidence),
        )
    ]


def _busy_before_findings(result: ProbeResult) -> list[Finding]:
    """Other processes held GPU memory before the probe started: a later out-of-memory is theirs.

    By hand: ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
    """
    before = result.gpu_before
    if before is None or not before.read or not before.processes:
        return []
    listed = [
        f"PID {p.pid} on GPU {p.gpu_index}: " + ("? MiB" if p.used_mib is None else f"{p.used_mib:.0f} MiB")
        for p in before.processes
    ]
    return [
        make_finding(
            "inference.gpu_busy_before",
            Cause.UNKNOWN,
            Layer.RESOURCES,
            Severity.INFO,
            params={
                "count": len({p.pid for p in before.processes}),
                "total_mib": f"{before.total_mib:.0f}",
                "processes": "; ".join(listed),
            },
            evidence=tuple(
                said(
                    "evidence.gpu_pid",
                    value=line,
                    source_id="evidence.source.nvml_before",
                    index=p.gpu_index,
                    pid=p.pid,
                )
                for p, line in zip(before.processes, listed, strict=True)
            ),
        )
    ]


def _gpu_findings(
    result: ProbeResult, gpu: SessionRun, cpu: SessionRun | None, guard: tuple[CodeStep, ...]
) -> list[Finding]:
    findings = _verdict_findings(result, gpu, cpu, guard)
    findings.extend(_comparison_findings(gpu, cpu))
    return findings


def _verdict_findings(
    result: ProbeResult, gpu: SessionRun, cpu: SessionRun | None, guard: tuple[CodeStep, ...]
) -> list[Finding]:
    findings: list[Finding] = []
    provider = next((p for p in gpu.requested_providers if p != _CPU), "CUDAExecutionProvider")
    quote_lines = list(gpu.ort_messages) + ([gpu.strict.error] if gpu.strict and gpu.strict.error else [])
    if gpu.verdict == Verdict.FELL_BACK_TO_CPU:
        cause = cause_from_quote(quote_lines)
        findings.append(
            make_finding(
                "inference.fell_back" if guard else "inference.fell_back_native",
                cause,
                layer_of(cause),
                Severity.ERROR,
                params={
                    "provider": provider,
                    "requested": ", ".join(gpu.requested_providers),
                    "runtime": runtime_text(result),
                    "active": ", ".join(gpu.active_providers) or "no provider",
                    "nodes": nodes_words(gpu),
                    "quote": _quote(gpu),
                    "strict": short_line(gpu.strict.error)
                    if gpu.strict and gpu.strict.error
                    else Words("evidence.not_run"),
                    "cpu_p50": _ms(cpu),
                    "gpu_p50": _ms(gpu),
                    "python": result.runtime.interpreter or "python",
                },
                evidence=session_evidence(result, gpu, "gpu_retry"),
                steps=guard,
            )
        )
    elif gpu.verdict == Verdict.FAILED:
        cause = cause_from_quote([*quote_lines, gpu.error or ""])
        findings.append(
            make_finding(
                "inference.failed",
                cause,
                layer_of(cause),
                Severity.ERROR,
                params={
                    "runtime": runtime_text(result),
                    "requested": ", ".join(gpu.requested_providers),
                    "error": short_line(gpu.error) if gpu.error else Words("evidence.unknown_error"),
                    "quote": _quote(gpu),
                },
                evidence=session_evidence(result, gpu, "gpu_retry"),
            )
        )
    elif gpu.verdict == Verdict.GPU_ACTIVE and gpu_verified(result):
        findings.extend(_verified_findings(result, gpu, cpu, guard))
    return findings


def _verified_findings(
    result: ProbeResult, gpu: SessionRun, cpu: SessionRun | None, guard: tuple[CodeStep, ...]
) -> list[Finding]:
    findings: list[Finding] = []
    speedup = "n/a"
    if cpu is not None and cpu.latency is not None and gpu.latency is not None and gpu.latency.p50_ms > 0:
        speedup = f"{cpu.latency.p50_ms / gpu.latency.p50_ms:.1f}"
    equal = "not compared"
    if gpu.comparison is not None:
        equal = "equal within tolerance" if gpu.comparison.equal else "DIFFERENT"
    findings.append(
        make_finding(
            "inference.gpu_verified",
            Cause.UNKNOWN,
            Layer.PROBE,
            Severity.INFO,
            params={
                "provider": ", ".join(p for p in gpu.active_providers if p != _CPU),
                "gpu_p50": _ms(gpu),
                "cpu_p50": _ms(cpu),
                "runtime": runtime_text(result),
                "nodes": nodes_words(gpu),
                "speedup": speedup,
                "equal": equal,
            },
            evidence=session_evidence(result, gpu, "gpu_run"),
            steps=guard,
        )
    )
    cpu_nodes = gpu.nodes_per_provider.get(_CPU, 0)
    if cpu_nodes:
        findings.append(
            make_finding(
                "inference.partial_placement",
                Cause.UNKNOWN,
                Layer.PROBE,
                Severity.WARNING,
                params={
                    "cpu_nodes": cpu_nodes,
                    "total_nodes": sum(gpu.nodes_per_provider.values()),
                    "provider": ", ".join(p for p in gpu.active_providers if p != _CPU),
                    "strict": short_line(gpu.strict.error)
                    if gpu.strict and gpu.strict.error
                    else Words("evidence.no_error"),
                },
                evidence=session_evidence(result, gpu, "gpu_run"),
            )
        )
    return findings


def _comparison_findings(gpu: SessionRun, cpu: SessionRun | None) -> list[Finding]:
    findings: list[Finding] = []
    if (
        gpu.comparison is not None
        and not gpu.comparison.equal
        and gpu.latency is not None
        and cpu is not None
    ):
        findings.append(
            make_finding(
                "inference.outputs_differ",
                Cause.UNKNOWN,
                Layer.PROBE,
                Severity.WARNING,
                params={
                    "detail": gpu.comparison.detail or "outputs differ",
                    "atol": gpu.comparison.tolerance_abs,
                    "rtol": gpu.comparison.tolerance_rel,
                },
                evidence=(
                    said("evidence.max_abs_diff", value=str(gpu.comparison.max_abs_diff)),
                    said("evidence.max_rel_diff", value=str(gpu.comparison.max_rel_diff)),
                ),
            )
        )
    memory = gpu.gpu_memory
    if memory is not None and memory.others_bytes:
        findings.append(
            make_finding(
                "inference.gpu_memory_others",
                Cause.UNKNOWN,
                Layer.RESOURCES,
                Severity.INFO,
                params={
                    "others": _gib(memory.others_bytes),
                    "total": _gib(memory.total_bytes),
                    "probe": _gib(memory.probe_bytes),
                },
            )
        )
    return findings


def _gib(value: int | None) -> str:
    return "unknown" if value is None else f"{value / 2**30:.2f} GiB"


_DESCRIPTIONS = {
    StrategyName.AS_IS: Words("evidence.strategy_said.as_is"),
    StrategyName.PRELOAD_DLLS: Words("evidence.strategy_said.preload_dlls"),
}
"""What a strategy did (the probe child's description of it), in the catalogue's words."""


def _strategy_findings(result: ProbeResult, as_is: StrategyResult) -> list[Finding]:
    findings: list[Finding] = []
    best = result.best_strategy
    if best is None or best.name == StrategyName.AS_IS or stage_rank(best.stage) <= stage_rank(as_is.stage):
        return findings
    how = {
        StrategyName.PRELOAD_DLLS: Words("evidence.how.preload_call"),
        StrategyName.LIB_PATH_FIRST: "; ".join(f"export {k}={v}" for k, v in best.environment.items())
        or Words("evidence.how.lib_first"),
    }.get(best.name, best.description)
    quote = _quote(best.gpu) if best.gpu is not None else Words("evidence.no_gpu_retry")
    commands: tuple[str | Commented, ...] = ()
    if best.name == StrategyName.LIB_PATH_FIRST:
        commands = tuple(f"export {k}={v}" for k, v in best.environment.items())
    elif best.name == StrategyName.PRELOAD_DLLS:
        preload = "import onnxruntime; onnxruntime.preload_dlls()"
        commands = (commented(preload, "remedy.comment.before_session", gap="  "),)
    findings.append(
        make_finding(
            "inference.strategy_further",
            Cause.UNKNOWN,
            Layer.LOADER,
            Severity.INFO,
            params={
                "strategy": best.name.value,
                "stage": label_ref(f"reached.stage.{best.stage.value}"),
                "as_is_stage": label_ref(f"reached.stage.{as_is.stage.value}"),
                "description": _DESCRIPTIONS.get(best.name) or best.description or best.name.value,
                "quote": quote,
                "how": how,
            },
            evidence=tuple(strategy_evidence(s) for s in result.strategies),
            commands=commands,
        )
    )
    return findings
