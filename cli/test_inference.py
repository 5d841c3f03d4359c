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

from fallback_doctor.cli.common import UsageError, default_language
from fallback_doctor.cli.test_inference_model import add_model_arguments, checked_model
from fallback_doctor.cli.test_inference_text import render_text
from fallback_doctor.core.door import (
    AUTO,
    LANGUAGES,
    PROVIDERS,
    Finding,
    InferenceSetupError,
    TargetNotFound,
    TargetSpec,
    default_python,
    gpu_verified,
    inference_findings,
    kinds_help,
    plan_inference,
    provider_key,
    resolve_target,
    run_sampled_inference,
    target_kinds,
    to_jsonable,
    words_of,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``test-inference`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "test-inference",
        help="run a test inference: CPU baseline, then the GPU retry on the application's own runtime",
        description="Run a CPU baseline and a GPU retry in an isolated probe with the application's own "
        "ONNX Runtime, and say whether the inference really ran on the GPU.",
    )
    parser.add_argument(
        "--target",
        choices=target_kinds(probed=True),
        default=AUTO,
        help=kinds_help(probed=True),
    )
    parser.add_argument(
        "--lib-dir", metavar="DIR", help="--target native: the application's ONNX Runtime library folder"
    )
    parser.add_argument("--python", metavar="PATH", help="the application's Python interpreter")
    parser.add_argument("--bareun-root", metavar="DIR", help="the Bareun installation")
    parser.add_argument("--config", metavar="FILE", help="the application's configuration file")
    add_model_arguments(parser)
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
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="language of the text output")
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


def run(args: argparse.Namespace) -> int:
    """Run the test inference on the target; print text or JSON; 0 GPU verified, 1 not, 2 usage."""
    env = dict(os.environ)
    if args.python and not os.path.exists(args.python):
        raise UsageError(f"--python {args.python}: no such file")
    model, dims = checked_model(args)
    spec = TargetSpec(
        kind=args.target,
        python=args.python,
        bareun_root=args.bareun_root,
        config=args.config,
        lib_dir=args.lib_dir,
    )
    try:
        target = resolve_target(spec, env)
        plan = plan_inference(
            Path(model) if model else None,
            dims=dims,
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
    info, request = plan.info, plan.request
    findings = inference_findings(result)
    lang = args.lang or default_language()
    if args.json:
        document = {
            "schema": 1,
            "target": {"kind": target.kind, "python": target.python, "lib_path": target.lib_path},
            "model": {
                "path": str(plan.model),
                "inputs": [value.describe() for value in info.inputs],
                "dims": request.dims,
                "dims_used": [
                    {"name": c.name, "value": c.value, "source": c.source} for c in plan.inputs.choices
                ],
                "shapes": request.shapes,
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
        sys.stdout.write(render_text(result, findings, info, plan, lang))
    return 0 if gpu_verified(result) else 1


def _finding_json(finding: Finding, lang: str) -> dict[str, object]:
    texts = words_of(finding, lang)
    return {
        "id": finding.id,
        "cause": finding.cause,
        "layer": finding.layer.value,
        "severity": finding.severity.value,
        "title": texts["title"],
        "detail": texts["detail"],
        "fix": texts["fix"],
        "commands": list(finding.remediation.commands) if finding.remediation else [],
        "steps": to_jsonable(finding.remediation.steps) if finding.remediation else [],
        "verify": texts["verify"] or None,
        "evidence": [{"label": e.label, "value": e.value, "source": e.source} for e in finding.evidence],
    }
