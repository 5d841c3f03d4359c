"""Run a child process with a hard timeout, kill its whole process group, say what happened.

Everything that loads CUDA, cuDNN or ONNX Runtime natively runs through here: a missing
cuDNN sub-library aborts the process that loads it, and a driver call can hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_OUTPUT_LIMIT = 4 * 1024 * 1024
"""Keep at most this many bytes of each stream: a child that floods its output cannot exhaust us."""


@dataclass(frozen=True)
class ChildOutcome:
    """What a child process did: its exit, its output, and a sentence for people."""

    argv: tuple[str, ...]
    returncode: int | None
    """The exit status; negative for a signal (POSIX); None when it was killed at the timeout."""
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when the child exited by itself with status 0."""
        return self.returncode == 0 and not self.timed_out

    def sentence(self, doing: str = "running") -> str:
        """What happened, in words: "the probe crashed with SIGSEGV while loading …"."""
        if self.timed_out:
            return f"the probe did not finish within {self.duration_s:.0f} s while {doing}, and was stopped"
        if self.returncode is None:
            return f"the probe could not be started while {doing}"
        if self.returncode < 0:
            return f"the probe crashed with {signal_name(-self.returncode)} while {doing}"
        if self.returncode != 0:
            return f"the probe exited with status {self.returncode} while {doing}"
        return f"the probe finished {doing}"


def signal_name(number: int) -> str:
    """SIGSEGV for 11, and so on; "signal N" for numbers without a name here."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float,
    stdin_text: str | None = None,
    cwd: str | None = None,
) -> ChildOutcome:
    """Run ``argv`` to completion or until ``timeout_s``, then kill its process group.

    The child gets its own session (POSIX) or process group (Windows) so that a
    timeout kills it and every process it started. Output is decoded as UTF-8 with
    replacement; each stream is capped so a flood cannot exhaust memory.
    """
    start = time.monotonic()
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            **kwargs,  # type: ignore[call-overload]
        )
    except OSError as error:
        return ChildOutcome(tuple(argv), None, "", str(error), False, time.monotonic() - start)
    timed_out = False
    try:
        out, err = process.communicate(
            input=stdin_text.encode("utf-8") if stdin_text is not None else None,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_process_group(process)
        out, err = process.communicate()
    finally:
        # A child that exited may have left grandchildren in its group: never leave one behind.
        kill_process_group(process, only_group=True)
    truncated = len(out) > _OUTPUT_LIMIT or len(err) > _OUTPUT_LIMIT
    return ChildOutcome(
        argv=tuple(argv),
        returncode=None if timed_out else process.returncode,
        stdout=out[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace"),
        stderr=err[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace"),
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        truncated=truncated,
    )


def kill_process_group(process: subprocess.Popen[bytes], *, only_group: bool = False) -> None:
    """Kill the child and everything in its process group; ignore what is already gone."""
    if sys.platform == "win32":
        if not only_group and process.poll() is None:
            process.kill()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not only_group and process.poll() is None:
        process.kill()
