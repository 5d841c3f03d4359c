"""Run by a scenario environment's own interpreter: what ONNX Runtime itself does there.

    ENV/bin/python tests/scenarios/ort_child.py MODEL [--preload] [--providers A,B,...]

Prints one line ``ORT_CHILD_RESULT <JSON>`` last on stdout (version, available providers, the
session's providers, the outputs, any exception). ONNX Runtime's own log lines go to stderr,
except the Python API's "EP Error ... Falling back" block, which it prints on stdout.
Standard library plus what the environment has (onnxruntime, numpy).
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    """Import onnxruntime, ask for CUDA then CPU, run the Add model once, report as JSON."""
    result: dict[str, object] = {}
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if "--providers" in sys.argv:
        providers = sys.argv[sys.argv.index("--providers") + 1].split(",")
    try:
        import onnxruntime as ort

        result["version"] = ort.__version__
        result["available"] = ort.get_available_providers()
        if "--preload" in sys.argv and hasattr(ort, "preload_dlls"):
            ort.preload_dlls()
        session = ort.InferenceSession(sys.argv[1], providers=providers)
        result["session_providers"] = session.get_providers()
        import numpy as np

        one = np.ones((1, 4), dtype=np.float32)
        result["output"] = session.run(None, {"X": one, "Y": one})[0].tolist()
    except Exception as exc:  # noqa: BLE001 - reported, not handled
        result["exception"] = f"{type(exc).__name__}: {exc}"
    sys.stdout.flush()
    print("ORT_CHILD_RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
