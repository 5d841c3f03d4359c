"""NudeNet (nudenet 3.0.8, the YOLOv8 detector ``best.onnx`` from its wheel) running as a service.

``python nudenet_app.py IMAGE [SECONDS]``: NudeNet's own ``NudeDetector()`` asks ONNX Runtime for
every provider the installed package has (``C.get_available_providers()`` in its code: TensorRT
and CUDA first on onnxruntime-gpu). The app draws a test picture with OpenCV into IMAGE (NudeNet
reads images from files), runs the detector on it, prints ``ready``, the providers the session
got and how many boxes it found, then sleeps so ``diagnose --pid`` can look at it. ONNX Runtime's
warnings go to stderr, which the tests keep as the application's log.
"""

from __future__ import annotations

import sys
import time

import cv2
import numpy as np
from nudenet import NudeDetector

image = np.full((240, 320, 3), 200, np.uint8)
cv2.circle(image, (160, 110), 60, (90, 120, 170), -1)
cv2.rectangle(image, (100, 170), (220, 240), (60, 60, 160), -1)
cv2.imwrite(sys.argv[1], image)
detector = NudeDetector()
found = detector.detect(sys.argv[1])
print("ready", ",".join(detector.onnx_session.get_providers()), len(found), flush=True)
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 300)
