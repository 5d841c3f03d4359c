"""``fallback-doctor test-inference``: the CPU baseline and the GPU retry on the application's own runtime.

``test-inference [--target auto|python|bareun] [--bareun-root DIR] [--python PATH] [--model FILE]
[--dim NAME=VALUE ...] [--runs N] [--provider cuda|tensorrt] [--lib-path DIR ...] [--json]``

A Python target: the probe runs under the application's interpreter (``--python``), strategy by
strategy (as is, ``onnxruntime.preload_dlls()``, library folders first). A Bareun target: the
probe drives the ONNX Runtime library in its ``libPath`` through the C API. Prints the CPU baseline
beside the GPU retry (p50/p95/p99, speed-up, outputs equal, providers active, nodes per provider),
the verdict and ONNX Runtime's own words. Exit 0 when an inference ran on the GPU, 1 when it did
not (or the probe failed), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from fallback_doctor.cli.common import UsageError, default_language
from fallback_doctor.core.document import to_jsonable
from fallback_doctor.core.evidence_words import evidence_value
from fallback_doctor.core.frozen import default_python
from fallback_doctor.core.inference.findings import gpu_verified, inference_findings, stage_words
from fallback_doctor.core.inference.model_info import ModelInfo
from fallback_doctor.core.inference.result import ProbeRequest, ProbeResult, SessionRun
from fallback_doctor.core.inference.run import (
    PROVIDERS,
    InferenceSetupError,
    plan_inference,
    provider_key,
)
from fallback_doctor.core.inference.sampled import run_sampled_inference
from fallback_doctor.core.model import Finding
from fallback_doctor.core.remedy import remedy_terminal
from fallback_doctor.core.targets.resolve import TargetNotFound, resolve_target
from fallback_doctor.core.targets.spec import TargetKind, TargetSpec
from fallback_doctor.core.texts import label


def add_parser(subparsers: Any) -> None:
    """Register ``test-inference`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "test-inference",
        help="run a test inference: CPU baseline, then the GPU retry on the application's own runtime",
        description="Run a CPU baseline and a GPU retry in an isolated probe with the application's own "
        "ONNX Runtime, and say whether the inference really ran on the GPU.",
    )
    parser.add_argument(
        "--target",
        choices=[TargetKind.AUTO.value, TargetKind.PYTHON.value, TargetKind.BAREUN.value],
        default=TargetKind.AUTO.value,
        help="auto (Bareun when installed, else the Python environment), python or bareun",
    )
    parser.add_argument("--python", metavar="PATH", help="the application's Python interpreter")
    parser.add_argument("--bareun-root", metavar="DIR", help="the Bareun installation")
    parser.add_argument("--config", metavar="FILE", help="the application's configuration file")
    parser.add_argument("--model", metavar="FILE", help="an .onnx model (default: the bundled test encoder)")
    parser.add_argument(
        "--dim",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="value of a symbolic dimension (repeatable), e.g. --dim batch=4",
    )
    parser.add_argument(
        "--runs",
        type=_positive,
        default=None,
        help="timed runs per session, exactly N "
        "(default: up to 20, fewer once the median is known within 2%%)",
    )
    parser.add_argument("--warmup", type=_non_negative, default=3, help="warm-up runs (default 3)")
    parser.add_argument("--provider", choices=sorted(PROVIDERS), default=None, help="GPU provider to try")
    parser.add_argument(
        "--lib-path",
        metavar="DIR",
        action="append",
        default=None,
        help="a library folder for the 'library folders first' strategy (repeatable)",
    )
    parser.add_argument("--threads", type=_positive, default=2, help="thread cap of the probe (default 2)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds in all (default 120)")
    parser.add_argument("--json", action="store_true", help="print the result and findings as JSON")
    parser.add_argument("--lang", choices=("en", "ko"), default=None, help="language of the text output")
    parser.set_defaults(handler=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def parse_dims(items: list[str]) -> dict[str, int]:
    """``["batch=4", "seq=64"]`` -> ``{"batch": 4, "seq": 64}``; a usage error otherwise."""
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise UsageError(f"--dim {item}: expected NAME=VALUE with a positive integer, e.g. --dim batch=4")
        dims[name.strip()] = int(value)
    return dims


def run(args: argparse.Namespace) -> int:
    """Run the test inference on the target; print text or JSON; 0 GPU verified, 1 not, 2 usage."""
    env = dict(os.environ)
    if args.python and not os.path.exists(args.python):
        raise UsageError(f"--python {args.python}: no such file")
    if args.model and not os.path.isfile(args.model):
        raise UsageError(f"--model {args.model}: no such file")
    spec = TargetSpec(
        kind=TargetKind(args.target), python=args.python, bareun_root=args.bareun_root, config=args.config
    )
    try:
        target = resolve_target(spec, env)
        plan = plan_inference(
            Path(args.model) if args.model else None,
            dims=parse_dims(args.dim),
            providers=PROVIDERS[provider_key(target.requested_provider, args.provider)],
            runs=20 if args.runs is None else args.runs,
            warmup=args.warmup,
            threads=args.threads,
            steady=args.runs is None,
        )
        python = args.python or target.python or default_python()
        result = run_sampled_inference(
            target, plan, python=python, env=env, timeout_s=args.timeout, lib_dirs=args.lib_path
        )
    except (TargetNotFound, InferenceSetupError) as error:
        raise UsageError(str(error)) from None
    info, request, model = plan.info, plan.request, plan.model
    findings = inference_findings(result)
    lang = args.lang or default_language()
    if args.json:
        document = {
            "schema": 1,
            "target": {"kind": target.kind, "python": target.python, "lib_path": target.lib_path},
            "model": {
                "path": str(model),
                "inputs": [value.describe() for value in info.inputs],
                "dims": request.dims,
                "nodes": len(info.nodes),
                "matmul_flops_per_batch": info.matmul_flops(request.dims),
            },
            "verdict": "gpu_verified" if gpu_verified(result) else result.verdict.value,
            "result": result.to_json(),
            "findings": [_finding_json(f, lang) for f in findings],
        }
        json.dump(document, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(result, findings, info, request, lang))
    return 0 if gpu_verified(result) else 1


def _finding_json(finding: Finding, lang: str) -> dict[str, Any]:
    texts = finding.texts.get(lang) or {}
    return {
        "id": finding.id,
        "cause": finding.cause,
        "layer": finding.layer.value,
        "severity": finding.severity.value,
        "title": texts.get("title", finding.title),
        "detail": texts.get("detail", finding.detail),
        "fix": texts.get("fix", finding.remediation.summary if finding.remediation else ""),
        "commands": list(finding.remediation.commands) if finding.remediation else [],
        "steps": to_jsonable(finding.remediation.steps) if finding.remediation else [],
        "verify": texts.get("verify") or (finding.remediation.verify if finding.remediation else None),
        "evidence": [{"label": e.label, "value": e.value, "source": e.source} for e in finding.evidence],
    }


def _cell(session: SessionRun | None, attribute: str) -> str:
    if session is None or session.latency is None:
        return "-"
    return f"{getattr(session.latency, attribute):.1f}"


def render_text(
    result: ProbeResult, findings: list[Finding], info: ModelInfo, request: ProbeRequest, lang: str
) -> str:
    """The side-by-side table, the strategies, the verdict and the quoted evidence."""
    lines = _head_lines(result, info, request)
    lines.extend(_comparison_lines(result))
    lines.extend(_strategy_lines(result, lang))
    lines.append("")
    verdict = "gpu_verified" if gpu_verified(result) else result.verdict.value
    lines.append(f"Verdict:  {verdict}")
    lines.extend(_finding_lines(findings, lang))
    cost = result.cost
    lines.append("")
    lines.append(
        "Probe cost: process start "
        + _seconds(cost.process_start_s)
        + ", import "
        + _seconds(cost.import_s)
        + ", CPU session "
        + _seconds(cost.cpu_session_create_s)
        + ", GPU session "
        + _seconds(cost.gpu_session_create_s)
        + ", first child in all "
        + _seconds(cost.total_s)
    )
    return "\n".join(lines) + "\n"


def _head_lines(result: ProbeResult, info: ModelInfo, request: ProbeRequest) -> list[str]:
    runtime = result.runtime
    lines = [f"Runtime:  ONNX Runtime {runtime.ort_version or '?'} at {runtime.ort_location or '?'}"]
    if runtime.interpreter:
        lines.append(f"Python:   {runtime.interpreter} ({runtime.python_version or '?'})")
    flops = info.matmul_flops(request.dims)
    dims = ", ".join(f"{k}={v}" for k, v in request.dims.items()) or "fixed"
    lines.append(
        f"Model:    {Path(request.model).name} ({len(info.nodes)} nodes; {dims}"
        + (f"; {flops / 1e9:.2f} GFLOPs per batch" if flops else "")
        + ")"
    )
    return lines


def _comparison_lines(result: ProbeResult) -> list[str]:
    cpu = result.cpu
    as_is = result.as_is
    gpu = as_is.gpu if as_is is not None else None
    lines = ["", f"{'':24}{'CPU baseline':>16}{'GPU retry':>16}"]
    for name, attribute in (
        ("p50 latency (ms)", "p50_ms"),
        ("p95 latency (ms)", "p95_ms"),
        ("p99 latency (ms)", "p99_ms"),
    ):
        lines.append(f"{name:24}{_cell(cpu, attribute):>16}{_cell(gpu, attribute):>16}")
    speedup = "-"
    on_gpu = gpu is not None and any(p != "CPUExecutionProvider" for p in gpu.active_providers)
    if cpu and gpu and cpu.latency and gpu.latency and gpu.latency.p50_ms > 0:
        # A ratio of two CPU runs is noise, not a speed-up.
        speedup = f"{cpu.latency.p50_ms / gpu.latency.p50_ms:.2f}x" if on_gpu else "none (CPU)"
    lines.append(f"{'speed-up':24}{'':>16}{speedup:>16}")
    equal = "-"
    if gpu is not None and gpu.comparison is not None:
        equal = "yes" if gpu.comparison.equal else "NO"
        if gpu.comparison.bitwise_equal:
            equal += " (bitwise)"
    lines.append(f"{'outputs equal':24}{'':>16}{equal:>16}")
    lines.append(f"{'providers active':24}{_providers(cpu):>16}{_providers(gpu):>16}")
    lines.append(f"{'nodes per provider':24}{_placement(cpu):>16}{_placement(gpu):>16}")
    return lines


def _strategy_lines(result: ProbeResult, lang: str) -> list[str]:
    lines: list[str] = []
    if result.strategies:
        lines.append("")
        lines.append(label("test_inference.strategies", lang))
        for strategy in result.strategies:
            if strategy.skipped:
                state = f"{label('test_inference.skipped', lang)}: {evidence_value(strategy.skipped, lang)}"
            else:
                state = stage_words(strategy.stage, lang)
            if strategy.failure is not None:
                state += f" — {evidence_value(strategy.failure.sentence, lang)}"
            lines.append(f"  {strategy.name.value:16} {state}")
    if result.series is not None:
        lines.append("")
        lines.append(label("test_inference.sampling", lang))
        for sentence in result.series.get("sentences") or ():
            lines.append(f"  {sentence}")
    return lines


def _finding_lines(findings: list[Finding], lang: str) -> list[str]:
    lines: list[str] = []
    for finding in findings:
        texts = finding.texts.get(lang) or {"title": finding.title, "detail": finding.detail}
        lines.append("")
        lines.append(f"[{finding.severity.value}] {texts.get('title')}")
        lines.append(f"  {texts.get('detail')}")
        if finding.remediation is not None:
            fix = texts.get("fix") or finding.remediation.summary
            if fix:
                lines.append(f"  {label('report.fix', lang)}: {fix}")
            # Every step as the report prints it (code as code, commands with their comments in
            # the report's language), so a fix that says "the lines below" has them below.
            lines.extend(remedy_terminal(to_jsonable(finding.remediation), lang, "    "))
            verify = texts.get("verify") or finding.remediation.verify
            if verify:
                lines.append(f"  {label('report.verify', lang)}: {verify}")
    return lines


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f} s"


def _providers(session: SessionRun | None) -> str:
    if session is None:
        return "-"
    return ",".join(p.replace("ExecutionProvider", "") for p in session.active_providers) or "none"


def _placement(session: SessionRun | None) -> str:
    if session is None or not session.nodes_per_provider:
        return "-"
    return ",".join(
        f"{p.replace('ExecutionProvider', '')}:{n}" for p, n in session.nodes_per_provider.items()
    )
