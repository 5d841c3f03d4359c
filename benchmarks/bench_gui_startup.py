"""Time from starting `python -m fallback_doctor.gui` to the wizard's first paint (window shown).

    .venv/bin/python benchmarks/bench_gui_startup.py [--runs 5]

Each run is a fresh interpreter (offscreen Qt unless DISPLAY is set): it records the time at
the top of the process, opens the wizard as ``fallback-doctor gui`` does, and prints the time of
the first paint event of the window. Also says which heavy modules were imported by then
(none of onnxruntime, pyqtgraph, pynvml, numpy should be).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time
started = time.perf_counter()
import json, sys
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from fallback_doctor.gui.app import make_application
app = make_application()
from fallback_doctor.gui.wizard import DoctorWizard
settings = QSettings(sys.argv[1], QSettings.Format.IniFormat)
wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
result = {}
class Watch(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "paint_s" not in result:
            result["paint_s"] = time.perf_counter() - started
            result["paint_wall"] = time.time()
            QTimer.singleShot(0, app.quit)
        return False
watch = Watch()
for widget in [wizard, *wizard.findChildren(QObject)]:
    if hasattr(widget, "installEventFilter"):
        widget.installEventFilter(watch)
wizard.show()
QTimer.singleShot(10000, app.quit)
app.exec()
result["heavy"] = [m for m in ("onnxruntime", "pyqtgraph", "pynvml", "numpy") if m in sys.modules]
wizard.shutdown()
print(json.dumps(result))
"""


def main() -> int:
    """Run the child a few times; print the first-paint times and their median."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = dict(os.environ)
    if not env.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    times = []
    walls = []
    heavy: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.runs):
            launched = time.time()
            out = (
                subprocess.run(
                    [sys.executable, "-c", CHILD, os.path.join(folder, "s.ini")],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=60,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            data = json.loads(out)
            times.append(data["paint_s"])
            walls.append(data["paint_wall"] - launched)
            heavy = data["heavy"]
    print("first paint after imports start (s):", ", ".join(f"{t:.3f}" for t in times))
    print("first paint after process launch (s):", ", ".join(f"{t:.3f}" for t in walls))
    print(f"median from launch: {statistics.median(walls):.3f} s")
    print(f"median: {statistics.median(times):.3f} s; heavy modules imported by then: {heavy or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
