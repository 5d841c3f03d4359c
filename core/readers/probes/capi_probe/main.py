"""The C-API probe child's entry: read the request, run the probe, write the result."""

from __future__ import annotations

import json
import os
import sys
import time

from .api import Request
from .gpu import GpuProbe
from .output import emit, now


def test_misbehaviour(mode: str | None) -> None:
    """TEST ONLY: hang, flood or print garbage on purpose (crash is done inside the GPU retry)."""
    if mode == "hang":
        emit({"event": "begin", "phase": "gpu.session", "step": "TEST: hanging on purpose", "t": now()})
        time.sleep(3600)
    elif mode == "flood":
        line = "x" * 1023 + "\n"
        for _ in range(8 * 1024):
            sys.stdout.write(line)
        sys.stdout.flush()
        sys.exit(0)
    elif mode == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
        sys.exit(0)


def main() -> int:
    """Read the request, run the probe, write the result."""
    try:
        request: Request = json.loads(sys.stdin.read() or "{}")
    except ValueError as error:
        emit({"event": "error", "kind": "error", "error": "the request is not JSON: %s" % error})
        return 2
    emit({"event": "hello", "pid": os.getpid(), "python": sys.version.split()[0], "t": now()})
    nice = int(request.get("nice", 0) or 0)
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    test_misbehaviour(request.get("test_mode"))
    probe = GpuProbe(request)
    result: dict[str, object] = {"kind": "capi", "schema": 1, "completed": False}
    strategy: dict[str, object] = {
        "name": request.get("strategy") or "as_is",
        "stage": "nothing",
        "description": "the C API of %s, driven through ctypes" % request.get("lib_path"),
    }
    try:
        if probe.load():
            strategy["stage"] = "runtime_loaded"
            cpu = probe.cpu_baseline()
            result["cpu"] = cpu
            usable = probe.model is not None and probe.result_failure is None and not cpu.get("error")
            if usable and request.get("gpu_retry", True):
                gpu = probe.gpu_retry()
                strategy["gpu"] = gpu
                strategy["stage"] = gpu["stage"]
            result["completed"] = usable
    finally:
        probe.finish()
    result.update(
        runtime=probe.runtime,
        model=probe.model,
        strategies=[strategy],
        failure=probe.result_failure,
        phases=probe.phases,
        cost=probe.cost,
        notes=probe.notes,
        log_excerpt=probe.log_excerpt[:40],
    )
    emit({"event": "result", "result": result})
    emit({"event": "done", "t": now()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
