"""The quick diagnosis's critical path: when each child and collector starts and ends (a profile).

    .venv/bin/python benchmarks/trace_quick.py [--python PATH] [--runs 5] [--full]

Runs ``fallback-doctor diagnose --quick --json`` as a fresh process under a small harness that
stamps (wall clock, milliseconds after the parent started the process): the interpreter being
up, the launcher imported, every child spawned (subprocess.Popen) and reaped, every collector's
start and end (core/readers/collect/run.py), and the exit. Prints the median timeline of ``--runs`` runs
so that what waits on what can be read off, and the peer (print_debug_info) beside it.
Not a benchmark (the harness itself costs a little); the figures for the table come from
bench_diagnose_quick.py. Bytecode goes to a private PYTHONPYCACHEPREFIX, as in the benchmark.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_environment, peer_argv

HARNESS = r"""
import time, sys, json
T = [("interpreter up", time.time())]
import subprocess, threading
_lock = threading.Lock()
def stamp(what):
    with _lock:
        T.append((what, time.time()))
def short(argv):
    argv = list(argv)
    script = next((a for a in argv[1:] if a.endswith(".py")), argv[-1])
    return script.rsplit("/", 1)[-1]
_init = subprocess.Popen.__init__
def _popen(self, args, *a, **k):
    _init(self, args, *a, **k)
    self._trace_name = short(args)
    stamp("spawn " + self._trace_name)
subprocess.Popen.__init__ = _popen
_wait = subprocess.Popen._wait
def _reaped(self, *a, **k):
    code = _wait(self, *a, **k)
    if not getattr(self, "_trace_reaped", False) and self.returncode is not None:
        self._trace_reaped = True
        stamp("reap " + getattr(self, "_trace_name", "?"))
    return code
subprocess.Popen._wait = _reaped
_run = threading.Thread.run
def _thread_run(self):
    stamp("start " + self.name)
    try:
        _run(self)
    finally:
        stamp("end " + self.name)
threading.Thread.run = _thread_run
import io, contextlib
class Out(io.StringIO):
    def write(self, text):
        if not self.tell():
            stamp("report output begins (checks done)")
        return super().write(text)
import atexit
def _dump():
    stamp("exit handlers run (no module teardown after this)")
    sys.stderr.write("TRACE " + json.dumps(T) + "\n")
    sys.stderr.flush()
import fallback_doctor.launcher as launcher
atexit.register(_dump)
stamp("launcher imported")
sys.argv = ["fallback-doctor", *sys.argv[1:]]
out = Out()
with contextlib.redirect_stdout(out):
    code = launcher.main()  # as the program: the same exit as the console script
stamp("report written")
sys.exit(code)
"""


def _one(python: str, env: dict[str, str]) -> list[tuple[str, float]]:
    argv = [sys.executable, "-c", HARNESS, "diagnose", "--quick", "--json", "--python", python]
    launched = time.time()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    ended = time.time()
    line = next(x for x in done.stderr.splitlines() if x.startswith("TRACE "))
    events = [(what, (at - launched) * 1000) for what, at in json.loads(line[6:])]
    return [*events, ("process exited", (ended - launched) * 1000)]


def main() -> int:
    """Print the median timeline of the quick diagnosis and the peer's median wall time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the application's interpreter")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = bench_environment()
    _one(args.python, env)  # compiles the bytecode into the private prefix
    subprocess.run(peer_argv(args.python), capture_output=True, env=env, check=False)
    stamps: dict[str, list[float]] = defaultdict(list)
    order: list[str] = []
    peer: list[float] = []
    for _ in range(args.runs):
        seen: dict[str, int] = defaultdict(int)
        for what, at in _one(args.python, env):
            seen[what] += 1
            key = what if seen[what] == 1 else f"{what} #{seen[what]}"
            if key not in order:
                order.append(key)
            stamps[key].append(at)
        started = time.perf_counter()
        subprocess.run(peer_argv(args.python), capture_output=True, env=env, check=False)
        peer.append((time.perf_counter() - started) * 1000)
    for key in sorted(order, key=lambda k: statistics.median(stamps[k])):
        print(f"{statistics.median(stamps[key]):8.1f} ms  {key}")
    print(f"{statistics.median(peer):8.1f} ms  peer: print_debug_info() exited (median of {len(peer)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
