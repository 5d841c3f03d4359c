"""The wizard's steps, run in a child process: ``python -m fallback_doctor.core.flow.step_child``.

Qt-free. The wizard starts this module in its own process group for every step (the static
inspection, the CPU baseline, the GPU retry), writes one JSON request on its stdin and reads JSON
lines from its stdout: ``{"event": "progress", ...}`` and ``{"event": "phase", ...}`` while it
runs, then ``{"event": "result", "data": ...}`` or ``{"event": "error", "message": ...}``. Cancel
kills this process and every process below it (the probe children), which a thread could not do.

The results are plain JSON: for ``"diagnose"`` the static document (``diagnose --quick --json``),
for ``"cpu"`` and ``"gpu"`` a step outcome (core/flow/steps.py ``StepOutcome``) that the wizard adds to
its document with ``apply_step``, as `diagnose` does. By hand: ``fallback-doctor diagnose --json``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from fallback_doctor.core.platform.frozen import default_python


def _emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def target_spec(target: dict[str, Any]) -> Any:
    """The core's TargetSpec from the wizard's target dict (kind, python, bareun_root, config, logs …)."""
    from fallback_doctor.core.readers.targets.spec import TargetSpec

    pid = target.get("pid")
    return TargetSpec(
        kind=str(target.get("kind") or "auto"),
        python=target.get("python") or None,
        bareun_root=target.get("bareun_root") or None,
        config=target.get("config") or None,
        logs=tuple(target.get("logs") or ()),
        log_text=target.get("log_text") or None,
        pid=int(pid) if pid else None,
        lib_dir=target.get("lib_dir") or None,
    )


def start_environment(target: dict[str, Any]) -> dict[str, str]:
    """The environment the application starts with, as the technician gave it on page 1
    (``start_env``: ``KEY=VALUE`` lines, an env file's text, or a unit's ``Environment=`` lines):
    the step's child takes it as its own, so the collectors, the loader checks and the probes see
    what the application sees, and "Check again" sees a fix made there. By hand:
    ``env $(cat app.env | xargs) python -c 'import onnxruntime'``."""
    import shlex

    from fallback_doctor.core.readers.collect.systemd import parse_env_file

    lines = []
    for raw in str(target.get("start_env") or "").splitlines():
        line = raw.strip()
        if line.startswith("Environment="):  # a systemd unit's line: "Environment=A=1 "B=two words""
            try:
                lines.extend(shlex.split(line.removeprefix("Environment=")))
            except ValueError:
                continue
        else:
            lines.append(line)
    return parse_env_file("\n".join(lines))


def run_inspection(target: dict[str, Any]) -> dict[str, Any]:
    """The static document of the target (what ``fallback-doctor diagnose --quick --json`` prints)."""
    from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, inspect_target
    from fallback_doctor.core.readers.collect.run import CollectRequest

    spec = target_spec(target)
    python = spec.python or default_python()
    request = DiagnoseRequest(
        collect=CollectRequest(python=python, env=dict(os.environ), target=spec),
        quick=False,
        target={"kind": str(spec.kind), "python": python},
    )
    document, _snapshot = inspect_target(request, lambda name: _emit("progress", what=name))
    return document


def run_probe(target: dict[str, Any], options: dict[str, Any], gpu: bool) -> dict[str, Any]:
    """The CPU baseline (``gpu`` False) or the GPU retry on the target's own ONNX Runtime, as an outcome."""
    import dataclasses

    from fallback_doctor.core.flow.step_run import WIZARD_SETTINGS, wizard_step
    from fallback_doctor.core.readers.targets.resolve import resolve_target

    known = {f.name for f in dataclasses.fields(WIZARD_SETTINGS)}
    chosen = {k: v for k, v in options.items() if k in known}
    if "runs" in chosen:  # a number of runs asked for is run exactly (as `diagnose --runs N`)
        chosen.setdefault("steady", False)
    settings = dataclasses.replace(WIZARD_SETTINGS, **chosen)
    spec = target_spec(target)
    resolved = resolve_target(spec, dict(os.environ), load_library=False)

    def on_phase(name: str, edge: str, at: float, ok: bool | None) -> None:
        _emit("phase", name=name, edge=edge, at=at, ok=ok)

    outcome = wizard_step(
        resolved,
        spec.python,
        gpu=gpu,
        settings=settings,
        on_phase=on_phase,
        progress=lambda what: _emit("progress", what=what),
    )
    return outcome.to_json()


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
        os.environ.update(start_environment(target))  # this child is the step's alone
        if step == "diagnose":
            data = run_inspection(target)
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
