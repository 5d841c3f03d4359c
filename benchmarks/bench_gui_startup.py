"""Time from starting `python -m fallback_doctor.gui` to the wizard's first paint (window shown).

    .venv/bin/python benchmarks/bench_gui_startup.py [--runs 5]

Each run is a fresh interpreter (offscreen Qt unless DISPLAY is set): it records the time at
the top of the process, opens the wizard as ``fallback-doctor gui`` does, and prints the time at
which the window's first paint pass is over (the first paint event of the window, then the next
turn of the event loop: its children are painted in that pass). The peer is timed the same way.
Also says which heavy modules were imported by then
(none of onnxruntime, pyqtgraph, pynvml, numpy should be).

The peer, run alternately in the same run: a bare QWidget's first paint in a fresh
interpreter (importing PySide6 and showing one window), the floor any Qt window pays here.
Aim: at most 0.3 s from launch. The last line is the result line (benchmarks/_common.py).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import result_line, rounds, row

AIM_S = 0.3

PEER = r"""
import time, json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv[:1])
window = QWidget()
result = {}
def painted():
    result["paint_wall"] = time.time()
    app.quit()
class Watch(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "seen" not in result:
            result["seen"] = 1
            QTimer.singleShot(0, painted)  # after the whole window's paint pass
        return False
watch = Watch()
window.installEventFilter(watch)
window.resize(900, 640)
window.show()
QTimer.singleShot(10000, app.quit)
app.exec()
print(json.dumps(result))
"""

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
def painted():
    result["paint_s"] = time.perf_counter() - started
    result["paint_wall"] = time.time()
    app.quit()
class Watch(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "seen" not in result:
            result["seen"] = 1
            QTimer.singleShot(0, painted)  # after the whole window's paint pass (its children too)
        return False
watch = Watch()
wizard.installEventFilter(watch)  # the window only, as the peer: a filter on every child cost ~50 ms
wizard.show()
QTimer.singleShot(10000, app.quit)
app.exec()
result["heavy"] = [m for m in ("onnxruntime", "pyqtgraph", "pynvml", "numpy") if m in sys.modules]
wizard.shutdown()
print(json.dumps(result))
"""


def _launch(code: str, settings: str, env: dict[str, str]) -> dict[str, float]:
    launched = time.time()
    out = (
        subprocess.run(
            [sys.executable, "-c", code, settings],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    data: dict[str, float] = json.loads(out)
    data["from_launch"] = data["paint_wall"] - launched
    return data


def main() -> int:
    """Run the child and the peer alternately; print the first-paint times and their medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=rounds(7, 3))
    args = parser.parse_args()
    env = dict(os.environ)
    if not env.get("DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    times = []
    walls = []
    peers = []
    heavy: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        settings = os.path.join(folder, "s.ini")
        _launch(CHILD, settings, env)  # warm-up: bytecode, fonts
        for index in range(args.runs):
            if index % 2:
                peers.append(_launch(PEER, settings, env)["from_launch"])
            data = _launch(CHILD, settings, env)
            if not index % 2:
                peers.append(_launch(PEER, settings, env)["from_launch"])
            times.append(data["paint_s"])
            walls.append(data["from_launch"])
            heavy = data["heavy"]  # type: ignore[assignment]
    print("first paint after imports start (s):", ", ".join(f"{t:.3f}" for t in times))
    print("first paint after process launch (s):", ", ".join(f"{t:.3f}" for t in walls))
    print("a bare QWidget's first paint after launch (s):", ", ".join(f"{t:.3f}" for t in peers))
    now, peer = statistics.median(walls), statistics.median(peers)
    print(f"median from launch: {now:.3f} s (bare Qt window: {peer:.3f} s)")
    print(f"median: {statistics.median(times):.3f} s; heavy modules imported by then: {heavy or 'none'}")
    print(
        result_line(
            "gui_startup",
            [
                row(
                    "first paint of the wizard from launch vs a bare Qt window's (offscreen)",
                    round(now * 1000, 1),
                    round(peer * 1000, 1),
                    aim=f"at most {AIM_S * 1000:.0f} ms",
                    met=now <= AIM_S,
                    note=f"median of {args.runs}; heavy modules by then: {', '.join(heavy) or 'none'}",
                )
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
