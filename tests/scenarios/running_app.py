"""A small ONNX Runtime application that keeps running, as a server does (started by the tests).

``python running_app.py MODEL PROVIDERS [SECONDS]``: creates one InferenceSession asking for
PROVIDERS (comma-separated, in order), runs it once, prints ``ready`` and the session's providers
on stdout, then sleeps (default 300 s) so that ``diagnose --pid`` can look at it. ONNX Runtime's
own warnings go to stderr, which the tests keep as the application's log.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import onnxruntime as ort

model, providers = sys.argv[1], sys.argv[2].split(",")
try:
    session = ort.InferenceSession(model, providers=providers)
    feeds = {
        item.name: np.ones([d if isinstance(d, int) else 1 for d in item.shape], dtype=np.float32)
        for item in session.get_inputs()
    }
    session.run(None, feeds)
    print("ready", ",".join(session.get_providers()), flush=True)
except Exception as exc:  # noqa: BLE001 - the application keeps running, as a server would
    print("ready failed", type(exc).__name__, exc, flush=True)
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 300)
