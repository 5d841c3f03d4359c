"""Benchmark: peak memory and time on the worst inputs of issue 10 (not a test).

Each case runs in a fresh interpreter (so its peak resident memory is its own, read from
``ru_maxrss``): package listings from fake interpreters that flood (1 GiB), print endless
newlines, or leave a setsid grandchild holding the pipe; redaction of an escape-dense and a
hit-dense log and of 8 MiB of short lines; an export with every log at its bound; a gzip bomb
as a bundle member. Aims: under 300 MB and under 5 s each. ``GFD_BENCH_QUICK=1`` makes the inputs
smaller. The last line is the JSON result (benchmarks convention: docs/performance.md).

    .venv/bin/python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICK = os.environ.get("GFD_BENCH_QUICK") == "1"
MIB = 2 if QUICK else 4
"""MiB of each redaction input: the per-log bound of a bundle (Limits.log)."""

_PRELUDE = """
import os, resource, sys, time
sys.path.insert(0, {fakes!r})
started = time.perf_counter()
"""
_REPORT = """
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"RESULT {{elapsed:.3f}} {{peak:.1f}}")
"""

CASES: dict[str, str] = {
    "package listing: a fake interpreter printing 1 GiB": """
from fake_interpreters import make
from fallback_doctor.core.readers.collect.python_env import collect_python_env
try:
    collect_python_env(str(make(__import__('pathlib').Path(sys.argv[1]), 'flood')), dict(os.environ), 60)
except Exception as error:
    print(error, file=sys.stderr)
""",
    "package listing: endless newlines": """
from fake_interpreters import make
from fallback_doctor.core.readers.collect.python_env import collect_python_env
try:
    collect_python_env(str(make(__import__('pathlib').Path(sys.argv[1]), 'newlines')), dict(os.environ), 60)
except Exception as error:
    print(error, file=sys.stderr)
""",
    "package listing: a setsid grandchild holding the pipe": """
from fake_interpreters import make
from fallback_doctor.core.readers.probes.runner import run_child
run_child([str(make(__import__('pathlib').Path(sys.argv[1]), 'setsid'))], timeout_s=60)
""",
    "redaction: {mib} MiB escape-dense log (JSON escapes, %XX, secrets on every line)": """
from fallback_doctor.core.redaction.redact import Redactor
line = 'msg {{"path": "\\\\/home\\\\/alice\\\\/x", "p": "\\\\u0070assword=hunter2", "q": "%2Fhome%2Fbob"}}\\n'
text = line * ({mib} * 1024 * 1024 // len(line))
started = time.perf_counter()
redactor = Redactor(use_local_identity=False); redactor.learn(text); redactor.redact(text)
""",
    "redaction: {mib} MiB hit-dense log (an IP, a host and a user on every line)": """
from fallback_doctor.core.redaction.redact import Redactor
line = '2025-01-01 10:00:00 [I:onnxruntime:Default, session.cc:1 Run] ok host=node7 user=al 10.1.2.3\\n'
text = line * ({mib} * 1024 * 1024 // len(line))
started = time.perf_counter()
redactor = Redactor(use_local_identity=False); redactor.learn(text); redactor.redact(text)
""",
    "redaction: {mib} MiB of short lines (x and newline)": """
from fallback_doctor.core.redaction.redact import Redactor
text = 'x\\n' * ({mib} * 1024 * 1024 // 2)
started = time.perf_counter()
redactor = Redactor(use_local_identity=False); redactor.learn(text); redactor.redact(text)
""",
    "export: 8 logs, each at the 4 MiB bound": """
sys.path.insert(0, {benchmarks!r})
from bench_redact import make_text
from fallback_doctor.core.bundle.export import prepare_bundle
from fallback_doctor.core.bundle.preview import BundleOptions, ExtraMember
from fallback_doctor.core.bundle.write import build_bundle_bytes
log = make_text(4, 50)
extras = [ExtraMember(f"server-{{n}}.log", log, "log", f"/var/log/server-{{n}}.log") for n in range(8)]
started = time.perf_counter()
preview = prepare_bundle({{"schema": "gpu-fallback-doctor/report", "findings": []}}, extras,
    BundleOptions(use_local_identity=False))
build_bundle_bytes(preview)
""",
    "bundle member: a gzip bomb (1 GiB of zeros, 1 MB compressed)": """
import zlib
compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
chunk = bytes(16 * 1024 * 1024)
bomb = b"".join(compressor.compress(chunk) for _ in range(64)) + compressor.flush()
from fallback_doctor.core.bundle.export import prepare_bundle
from fallback_doctor.core.bundle.preview import BundleOptions, ExtraMember
started = time.perf_counter()
prepare_bundle({{}}, [ExtraMember("bomb.log.gz", bomb, "log")], BundleOptions(use_local_identity=False))
""",
}


def run_case(name: str, body: str, folder: Path) -> tuple[float, float, str]:
    """(seconds, peak MiB, stderr tail) of one case in a fresh interpreter."""
    fakes = str(ROOT / "tests" / "hostile")
    code = (
        _PRELUDE.format(fakes=fakes)
        + textwrap.dedent(body.format(mib=MIB, benchmarks=str(ROOT / "benchmarks")))
        + _REPORT.format()
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=600, check=False
    )
    line = next((item for item in done.stdout.splitlines() if item.startswith("RESULT ")), None)
    if line is None:
        return float("nan"), float("nan"), done.stderr[-300:]
    _, seconds, peak = line.split()
    return (
        float(seconds),
        float(peak),
        done.stderr.strip().splitlines()[-1][:160] if done.stderr.strip() else "",
    )


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
        for index, (template, body) in enumerate(CASES.items()):
            name = template.format(mib=MIB)
            case_folder = Path(folder, str(index))
            case_folder.mkdir()
            seconds, peak, said = run_case(name, body, case_folder)
            print(f"{name}: {seconds:.2f} s, peak {peak:.0f} MiB" + (f"  ({said})" if said else ""))
            rows.append(
                {
                    "what": f"{name}: time",
                    "now": round(seconds, 3),
                    "peer": None,
                    "unit": "s",
                    "ratio": None,
                    "aim": "under 5 s",
                    "met": seconds < 5,
                    "note": said,
                }
            )
            rows.append(
                {
                    "what": f"{name}: peak memory",
                    "now": round(peak, 1),
                    "peer": None,
                    "unit": "MiB",
                    "ratio": None,
                    "aim": "under 300 MB",
                    "met": peak < 300,
                    "note": "ru_maxrss of a fresh interpreter (about 20 MiB of it is Python itself)",
                }
            )
    print(json.dumps({"benchmark": "hostile", "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
