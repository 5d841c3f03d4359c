"""Test-inference probe child: run by the APPLICATION's interpreter, in the application's environment.

SELF-CONTAINED: Python 3.8+, the standard library, onnxruntime and numpy (the application's own),
and probe_shared.py from beside it (what both probes share). It never imports fallback_doctor.
The request (JSON, the fields of ProbeRequest in fallback_doctor/core/inference/result.py) comes
on stdin; progress and the result go to stdout as JSON lines, one object per line::

    {"event": "hello", "pid": 123, "wall": 1718000000.1, ...}
    {"event": "phase", "name": "cpu.session", "state": "start", "t": 0.41, "wall": ...}
    {"event": "phase", "name": "cpu.session", "state": "end", "ok": true, "t": 0.45, "wall": ...}
    {"event": "result", "result": {...ProbeResult JSON...}}

So a crash says where it happened: the last phase started and not ended. Everything else the
process writes (ONNX Runtime's C++ log on fd 2, its Python "EP Error" banner on fd 1) goes to a
temporary file via os.dup2 at the file-descriptor level, is read back per phase and quoted in the
result; the protocol has its own duplicate of the original stdout.

By default the probe lowers its priority (nice) and caps ONNX Runtime's threads, because it may
run beside a production server. A technician can run it by hand::

    echo '{"model": "encoder.onnx", "dims": {"batch": 16, "seq": 128}}' | python ort_python_child.py

TEST ONLY: ``test_mode`` ("crash", "hang", "flood", "garbage") makes the child misbehave on
purpose, and only when the environment also has FALLBACK_DOCTOR_PROBE_TEST=1 (set by the tests).
"""

from __future__ import annotations

import os
import sys

# Run by path, by the application's interpreter (never installed): this folder's python_child
# package and probe_shared.py (run_python_probe copies all three into the probe's work folder)
# are made importable, and the package's parts import each other relatively.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    import importlib

    importlib.import_module("python_child.main").run()
