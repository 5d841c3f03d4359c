"""RapidOCR (rapidocr-onnxruntime 1.4.4, its own PP-OCR models from its wheel) running as a service.

``python rapidocr_app.py cuda|cpu [SECONDS]``: ``cuda`` sets RapidOCR's own ``use_cuda`` options
(det, cls, rec), ``cpu`` keeps its defaults (``use_cuda: false`` in its config.yaml: the CPU
pinned by the framework). It reads one image with text drawn by OpenCV, prints ``ready`` and
what it read, then sleeps so ``diagnose --pid`` can look at it. Its log (RapidOCR's and ONNX
Runtime's warnings) goes to stderr.
"""

from __future__ import annotations

import sys
import time

import cv2
import numpy as np
from rapidocr_onnxruntime import RapidOCR

use_cuda = sys.argv[1] == "cuda"
engine = RapidOCR(det_use_cuda=use_cuda, cls_use_cuda=use_cuda, rec_use_cuda=use_cuda)
image = np.full((96, 480, 3), 255, np.uint8)
cv2.putText(image, "GPU 2026", (20, 64), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3)
result, _ = engine(image)
print("ready", " ".join(str(line[1]) for line in result or ()), flush=True)
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 300)
