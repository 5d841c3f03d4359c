"""Fake interpreters that misbehave: they hang, flood, crash, fork, and leave setsid grandchildren.

Each is an executable script (a shebang to this test run's Python) written into a folder, used as
``--python`` or given to the collectors. The ones that start processes write every pid they start
to ``pids.txt`` beside themselves, so a test can check that none of them survives.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

BODIES = {
    "hang": "import time\ntime.sleep(3600)\n",
    "flood": (
        "import sys\nchunk = b'x' * (1024 * 1024)\n"
        "for _ in range(1024):\n    sys.stdout.buffer.write(chunk)\n"
    ),
    "endless": "import sys\nchunk = b'y' * 65536\nwhile True:\n    sys.stdout.buffer.write(chunk)\n",
    "newlines": "import sys\nchunk = b'\\n' * 65536\nwhile True:\n    sys.stdout.buffer.write(chunk)\n",
    "crash": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "garbage": "print('{not json')\nprint('\\x1b]0;PWNED\\x07')\n",
    "fork": (
        "import os, sys, time\n"
        "open(PIDS, 'a').write(f'{os.getpid()}\\n')\n"
        "for _ in range(3):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(3600)\n"
        "        os._exit(0)\n"
        "    open(PIDS, 'a').write(f'{pid}\\n')\n"
        "time.sleep(3600)\n"
    ),
    "setsid": (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    grand = os.fork()\n"
        "    if grand == 0:\n"
        "        time.sleep(3600)\n"
        "        os._exit(0)\n"
        "    open(PIDS, 'a').write(f'{grand}\\n')\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "time.sleep(0.2)\n"
        "print('{\"distributions\": []}')\n"
    ),
    "setsid_env_cleared": (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen(['/bin/sh', '-c', 'sleep 3600'], env={}, start_new_session=True)\n"
        "open(PIDS, 'a').write(f'{child.pid}\\n')\n"
        "os._exit(0)\n"
    ),
}


def make(folder: Path, name: str) -> Path:
    """The fake interpreter ``name`` (one of BODIES) as an executable file in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"python-{name}"
    pids = folder / f"{name}.pids.txt"
    path.write_text(
        f"#!{sys.executable}\nPIDS = {str(pids)!r}\n{BODIES[name]}",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def pids_of(folder: Path, name: str) -> list[int]:
    """Every pid the fake interpreter ``name`` wrote down."""
    path = folder / f"{name}.pids.txt"
    if not path.is_file():
        return []
    return [int(line) for line in path.read_text(encoding="utf-8").split() if line.strip()]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count: it is only waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids still alive after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    left = [pid for pid in pids if alive(pid)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if alive(pid)]
    for pid in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    return left
