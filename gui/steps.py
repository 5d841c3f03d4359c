"""The wizard's steps, run in a child process: ``python -m fallback_doctor.gui.steps``.

Qt-free. The wizard starts this module in its own process group for every step (the
diagnosis, the CPU baseline, the GPU retry), writes one JSON request on its stdin and reads
JSON lines from its stdout: ``{"event": "progress", ...}`` while it runs, then
``{"event": "result", "data": ...}`` or ``{"event": "error", "message": ...}``. Cancel kills
this process and every process below it (the probe children), which a thread could not do.

The results are plain JSON: the report document (``diagnose --json``), and for the test
inference the probe's result with its findings (the ``inference`` part the wizard adds to the
document). By hand, the same: ``fallback-doctor diagnose --json`` and
``fallback-doctor test-inference --json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

PROBE_DEFAULTS: dict[str, Any] = {"runs": 10, "warmup": 2, "dims": {}, "threads": 2, "timeout_s": 180.0}
"""The wizard's test inference: fewer timed runs than the CLI (the technician is waiting)."""


def _emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def target_spec(target: dict[str, Any]) -> Any:
    """The core's TargetSpec from the wizard's target dict (kind, python, bareun_root, config, logs …)."""
    from fallback_doctor.core.targets.spec import TargetKind, TargetSpec

    pid = target.get("pid")
    return TargetSpec(
        kind=TargetKind(target.get("kind") or "auto"),
        python=target.get("python") or None,
        bareun_root=target.get("bareun_root") or None,
        config=target.get("config") or None,
        logs=tuple(target.get("logs") or ()),
        log_text=target.get("log_text") or None,
        pid=int(pid) if pid else None,
    )


def run_diagnose(target: dict[str, Any], quick: bool) -> dict[str, Any]:
    """The report document of the target (what ``fallback-doctor diagnose --json`` prints)."""
    from fallback_doctor.core.collect.run import CollectRequest
    from fallback_doctor.core.diagnosis import DiagnoseRequest, diagnose
    from fallback_doctor.core.report import diagnosis_document

    spec = target_spec(target)
    python = spec.python or sys.executable
    request = DiagnoseRequest(
        collect=CollectRequest(python=python, env=dict(os.environ), target=spec),
        quick=quick,
        target={"kind": spec.kind.value, "python": python},
    )
    diagnosis = diagnose(request, lambda name: _emit("progress", what=name))
    return diagnosis_document(diagnosis)


def run_probe(target: dict[str, Any], options: dict[str, Any], gpu: bool) -> dict[str, Any]:
    """The test inference on the target's own ONNX Runtime: the CPU baseline only, or with the GPU retry.

    Returns ``{"verdict", "gpu_verified", "result", "findings", "model", "started"}``; findings
    are in the report document's shape (texts in every language).
    """
    import dataclasses

    from fallback_doctor.core.inference.findings import gpu_verified, inference_findings
    from fallback_doctor.core.inference.result import StrategyName
    from fallback_doctor.core.inference.run import PROVIDERS, plan_inference, provider_key
    from fallback_doctor.core.report import to_jsonable
    from fallback_doctor.core.targets.resolve import resolve_target

    settings = {**PROBE_DEFAULTS, **options}
    env = dict(os.environ)
    spec = target_spec(target)
    resolved = resolve_target(spec, env, load_library=False)
    plan = plan_inference(
        None,
        dims={str(k): int(v) for k, v in (settings.get("dims") or {}).items()},
        providers=PROVIDERS[provider_key(resolved.requested_provider)],
        runs=int(settings["runs"]),
        warmup=int(settings["warmup"]),
        threads=int(settings["threads"]),
    )
    model, info = plan.model, plan.info
    request = dataclasses.replace(plan.request, gpu_retry=gpu, strict=gpu)
    started = time.time()

    def on_phase(name: str, edge: str, at: float, ok: bool | None) -> None:
        _emit("phase", name=name, edge=edge, at=at, ok=ok)

    timeout = float(settings["timeout_s"])
    if resolved.kind == "bareun":
        from fallback_doctor.core.inference import capi

        library = (resolved.lib_ort.core_library if resolved.lib_ort else None) or resolved.lib_path
        if not library:
            raise ValueError("the Bareun configuration names no libPath: nothing to test")
        result = capi.run_capi_probe(library, request.model, request.to_json(), env, timeout)
    else:
        from fallback_doctor.core.inference.python_probe import run_python_probe

        python = spec.python or resolved.python or sys.executable
        strategies = tuple(StrategyName) if gpu else (StrategyName.AS_IS,)
        result = run_python_probe(
            python, request, env=env, timeout_s=timeout, strategies=strategies, on_phase=on_phase
        )
    findings = [to_jsonable(f) for f in inference_findings(result)] if gpu else []
    verified = bool(gpu and gpu_verified(result))
    return {
        "verdict": "gpu_verified" if verified else (result.verdict.value if gpu else "cpu_baseline"),
        "gpu_verified": verified,
        "result": result.to_json(),
        "findings": findings,
        "model": {
            "path": str(model),
            "name": model.name,
            "nodes": len(info.nodes),
            "dims": dict(request.dims),
            "runs": request.runs,
            "warmup": request.warmup,
        },
        "started": started,
        "gpu_retry": gpu,
    }


def main() -> int:
    """Read one request on stdin, run it, print the result as a JSON line."""
    try:
        request = json.loads(sys.stdin.read() or "{}")
        step = request.get("step")
        if hasattr(os, "nice"):
            # Below the window's priority: on a machine with few cores the busy probe must not starve
            # the event loop (the window stays responsive; the latencies are the same on an idle machine).
            os.nice(5)
        target = request.get("target") or {}
        if step == "diagnose":
            data = run_diagnose(target, bool(request.get("quick")))
        elif step in {"cpu", "gpu"}:
            data = run_probe(target, request.get("options") or {}, gpu=step == "gpu")
        else:
            raise ValueError(f"unknown step {step!r}")
    except Exception as error:  # noqa: BLE001 - the wizard shows it in words
        name = type(error).__name__
        _emit("error", kind=name, message=f"{error}" if name == "TargetNotFound" else f"{name}: {error}")
        return 1
    _emit("result", data=data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
