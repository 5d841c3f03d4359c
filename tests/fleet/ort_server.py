"""A small inference server for the check tests, run by a scenario environment's own interpreter.

    ENV/bin/python ort_server.py MODEL READY_FILE [--providers A,B]

Imports onnxruntime, creates a session asking for CUDA then the CPU (ONNX Runtime's own log lines
go to stderr and stdout, which the test sends to the server's log file), runs the model once,
writes the session's providers to READY_FILE, and then serves nothing until its stdin closes.
Standard library plus what the environment has (onnxruntime, numpy).
"""

import sys


def main() -> int:
    """Load, create the session, run once, say ready, wait."""
    import numpy as np
    import onnxruntime as ort

    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if "--providers" in sys.argv:
        providers = sys.argv[sys.argv.index("--providers") + 1].split(",")
    session = ort.InferenceSession(sys.argv[1], providers=providers)
    one = np.ones((1, 4), dtype=np.float32)
    session.run(None, {"X": one, "Y": one})
    sys.stdout.flush()
    sys.stderr.flush()
    with open(sys.argv[2], "w") as ready:
        ready.write(",".join(session.get_providers()))
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
