"""Run a child process with a hard timeout, end it and all it started, say what happened.

Everything that loads CUDA, cuDNN or ONNX Runtime natively runs through here: a missing
cuDNN sub-library aborts the process that loads it, and a driver call can hang. Output is read
while the child runs and capped as it is read (:mod:`pipes`); when the child ends, everything
it started ends too, ``setsid`` grandchildren included (:mod:`reaper`), and the run does not
wait for a grandchild that holds the pipe open.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fallback_doctor.core.platform.frozen import target_environment
from fallback_doctor.core.readers.probes.outside import BUSY, KILLED, killed_from_outside, pressure
from fallback_doctor.core.readers.probes.pipes import OUTPUT_LIMIT, Tail, feed, pump
from fallback_doctor.core.readers.probes.reaper import (
    TOKEN_NAME,
    become_subreaper,
    kill_leftovers,
    kill_process_group,
    new_token,
    register,
    sent_by_us,
    unregister,
)

__all__ = [
    "ChildOutcome",
    "StartedChild",
    "abandon_child",
    "finish_child",
    "kill_process_group",
    "run_child",
    "signal_name",
    "start_child",
]

_OUTPUT_LIMIT = OUTPUT_LIMIT
_GRACE_S = 0.5
"""How long the output may still come once the child has exited (then what holds the pipe is killed)."""


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
    flooded: int | None = None
    """Set (to the bound, in bytes) when the child printed more than it may and was stopped."""
    outside: str | None = None
    """core/readers/probes/outside.py: "killed" (a signal the tool did not send, not a crash), "busy"
    (out of time on a machine too busy to run it), None otherwise."""
    pressure: str | None = None
    """How busy the machine was, in words, when the child ran out of its time."""
    retried: bool = False
    """The child was run again once because something outside ended its first run."""

    @property
    def ok(self) -> bool:
        """True when the child exited by itself with status 0."""
        return self.returncode == 0 and not self.timed_out

    def sentence_words(self, doing: object = None) -> dict[str, object]:
        """:meth:`sentence` as catalogue words ``{id, params}`` (``doing``: words too), shown in the
        reader's language; the same English as :meth:`sentence`."""
        doing = doing if doing is not None else _said("evidence.doing.running")
        again = _said("evidence.probe.again") if self.retried else ""
        if self.flooded is not None:
            bound = f"{self.flooded / (1024 * 1024):.0f} MiB"
            return _said("evidence.probe.flooded", bound=bound, doing=doing)
        seconds = f"{self.duration_s:.0f}"
        if self.outside == BUSY:
            return _said(
                "evidence.probe.busy", seconds=seconds, doing=doing, pressure=self.pressure, again=again
            )
        if self.outside == KILLED and self.returncode is not None:
            signal = signal_name(-self.returncode)
            return _said("evidence.probe.killed", signal=signal, doing=doing, again=again)
        if self.timed_out:
            return _said("evidence.probe.timed_out", seconds=seconds, doing=doing)
        if self.returncode is None:
            return _said("evidence.probe.not_started", doing=doing)
        if self.returncode < 0:
            return _said("evidence.probe.crashed", signal=signal_name(-self.returncode), doing=doing)
        if self.returncode != 0:
            return _said("evidence.probe.exited", status=self.returncode, doing=doing)
        return _said("evidence.probe.finished", doing=doing)

    def sentence(self, doing: str = "running") -> str:
        """What happened, in words: "the probe crashed with SIGSEGV while loading …"."""
        if self.flooded is not None:
            bound = f"{self.flooded / (1024 * 1024):.0f} MiB"
            return f"the probe printed more than {bound} while {doing}, and was stopped"
        again = " (twice: it was run again once)" if self.retried else ""
        if self.outside == BUSY:
            return (
                f"the machine was too busy to finish in {self.duration_s:.0f} s while {doing}"
                f" ({self.pressure}){again}: not a fault of the libraries"
            )
        if self.outside == KILLED and self.returncode is not None:
            return (
                f"the probe was killed from outside with {signal_name(-self.returncode)} while {doing}"
                f"{again}: not by this tool and not a crash of the libraries"
            )
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
    on_start: Callable[[int], None] | None = None,
    on_stdout_line: Callable[[str], None] | None = None,
    max_output: int | None = None,
) -> ChildOutcome:
    """Run ``argv`` to completion or until ``timeout_s``, then end it and everything it started.

    The child gets its own session (POSIX) or process group (Windows); its descendants carry a
    token in their environment and are re-parented to us (Linux subreaper), so a timeout, an
    exit or a signal of ours ends them all. Output is decoded as UTF-8 with replacement; each
    stream keeps its last 4 MiB; ``max_output`` (bytes of standard output) stops a child that
    prints more (``flooded``).

    Live progress: ``on_start(pid)`` is called once the child exists (a sampler follows that
    PID), ``on_stdout_line(line)`` for each complete line of its standard output as it arrives
    (without the newline; read on a thread while the child runs). A callback that raises is
    ignored: the child is still waited for, or killed at the timeout, as without callbacks.
    By hand: ``timeout -s KILL 180 python probe.py``.
    """
    child = start_child(argv, env=env, stdin_text=stdin_text, cwd=cwd)
    outcome = _supervise(child, timeout_s, on_start, on_stdout_line, max_output)
    if outcome.outside is None:
        return outcome
    # Ended from outside (a signal, a busy machine): once more, and say it if it happens again.
    again = start_child(argv, env=env, stdin_text=stdin_text, cwd=cwd)
    return dataclasses.replace(
        _supervise(again, timeout_s, on_start, on_stdout_line, max_output), retried=True
    )


@dataclass
class StartedChild:
    """A child started ahead of time (``start_child``), to be waited for by ``finish_child``."""

    argv: tuple[str, ...]
    process: subprocess.Popen[bytes] | None
    started: float
    stdin_text: str | None = None
    error: str | None = None
    """Why it could not be started (then ``process`` is None)."""
    token: str = ""
    """The token its descendants carry in their environment."""
    start_ticks: int = 0
    """When it started (clock ticks since boot): what it left behind started after."""
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    """As it was started with (a run again after an interruption from outside starts it so)."""


def start_child(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
    cwd: str | None = None,
) -> StartedChild:
    """Start ``argv`` now, in a session of its own; ``finish_child`` waits for it with a timeout.

    Starting early lets a child's own start-up overlap with the parent's work.
    """
    started = time.monotonic()
    token = new_token()
    become_subreaper()
    try:
        process = _spawn(argv, env, stdin_text, cwd, token)
    except (OSError, ValueError) as error:
        return StartedChild(tuple(argv), None, started, stdin_text, str(error), token, env=env, cwd=cwd)
    ticks = register(process, token)
    return StartedChild(
        tuple(argv), process, started, stdin_text, token=token, start_ticks=ticks, env=env, cwd=cwd
    )


def abandon_child(child: StartedChild) -> None:
    """Kill a started child that will not be finished (and all it started); wait for it."""
    process = child.process
    if process is None:
        return
    if process.returncode is None:
        kill_process_group(process)
        with contextlib.suppress(OSError, ValueError):
            process.communicate(timeout=5)
    _end(process, child.token, child.start_ticks)


def finish_child(
    child: StartedChild, *, timeout_s: float, stdin_text: str | None = None, max_output: int | None = None
) -> ChildOutcome:
    """Wait for a started child until ``timeout_s`` after its start, then end it and all it started.

    ``stdin_text`` is written now (the child must have been started with a ``stdin_text``,
    even an empty one, so that its standard input is a pipe).
    """
    if stdin_text is not None:
        # The work is handed over now: the timeout counts from here, not from the early start.
        child.stdin_text = stdin_text
        child.started = time.monotonic()
    outcome = _supervise(child, timeout_s, None, None, max_output)
    if outcome.outside is None:
        return outcome
    again = run_child(
        child.argv, env=child.env, timeout_s=timeout_s, stdin_text=child.stdin_text, cwd=child.cwd
    )
    return dataclasses.replace(again, retried=True)


def _spawn(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    stdin_text: str | None,
    cwd: str | None,
    token: str,
) -> subprocess.Popen[bytes]:
    """Popen in a session (POSIX) or process group (Windows) of its own, every stream a pipe."""
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    child_env = dict(os.environ if env is None else env)
    child_env[TOKEN_NAME] = token
    # No child writes bytecode into the application's environment (issue 28): the tool
    # changes none of the target's files. (``-I`` ignores this; those children get ``-B``.)
    child_env["PYTHONDONTWRITEBYTECODE"] = "1"
    process: subprocess.Popen[bytes] = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=target_environment(child_env),
        cwd=cwd,
        **kwargs,  # type: ignore[call-overload]
    )
    return process


def _supervise(
    child: StartedChild,
    timeout_s: float,
    on_start: Callable[[int], None] | None,
    on_stdout_line: Callable[[str], None] | None,
    max_output: int | None,
) -> ChildOutcome:
    """Read the child's output on threads while waiting for it; end it and its descendants."""
    process = child.process
    if process is None:
        return ChildOutcome(child.argv, None, "", child.error or "", False, time.monotonic() - child.started)
    out, err = Tail(max_output), Tail()
    threads = _readers(process, out, err, on_stdout_line, child.stdin_text)
    timed_out = False
    busy = None
    try:
        if on_start is not None:
            try:
                on_start(process.pid)
            except Exception:  # noqa: BLE001 - a listener must not leave the child running
                pass
        timed_out = _wait(process, child.started + timeout_s, out)
        if timed_out and not out.over.is_set():
            busy = pressure(process.pid, time.monotonic() - child.started)
    finally:
        # Whether it exited, timed out, flooded or we were interrupted: nothing it started stays.
        kill_process_group(process, only_group=not timed_out and not out.over.is_set())
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            process.wait(timeout=5)
        grace = time.monotonic() + _GRACE_S
        for thread in threads:
            thread.join(max(0.0, grace - time.monotonic()))
        _end(process, child.token, child.start_ticks)
        for thread in threads:
            thread.join(5.0)
    flooded = max_output if out.over.is_set() else None
    returncode = None if timed_out or flooded else process.returncode
    outside = KILLED if killed_from_outside(returncode) and not sent_by_us(process.pid) else None
    if busy is not None and busy.busy and flooded is None:
        outside = BUSY
    return ChildOutcome(
        argv=child.argv,
        returncode=returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out and flooded is None,
        duration_s=time.monotonic() - child.started,
        truncated=out.total > OUTPUT_LIMIT or err.total > OUTPUT_LIMIT,
        flooded=flooded,
        outside=outside,
        pressure=None if busy is None else busy.words(),
    )


def _readers(
    process: subprocess.Popen[bytes],
    out: Tail,
    err: Tail,
    on_stdout_line: Callable[[str], None] | None,
    stdin_text: str | None,
) -> list[threading.Thread]:
    assert process.stdout is not None and process.stderr is not None
    threads = [
        threading.Thread(target=pump, args=(process.stdout, out, on_stdout_line), daemon=True),
        threading.Thread(target=pump, args=(process.stderr, err, None), daemon=True),
    ]
    if stdin_text is not None and process.stdin is not None:
        data = stdin_text.encode("utf-8", errors="surrogateescape")
        threads.append(threading.Thread(target=feed, args=(process.stdin, data), daemon=True))
    for thread in threads:
        thread.start()
    return threads


def _wait(process: subprocess.Popen[bytes], deadline: float, out: Tail) -> bool:
    """Wait for the child until ``deadline`` or a flood; True when the time ran out."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        try:
            process.wait(timeout=min(0.1, remaining))
        except subprocess.TimeoutExpired:
            if out.over.is_set():
                return False
            continue
        return False


def _end(process: subprocess.Popen[bytes], token: str, since: int) -> None:
    """The child is done: kill what it left behind (its group, its token's carriers), forget it."""
    kill_process_group(process, only_group=True)
    unregister(process)
    if token:
        kill_leftovers(token, since)


def _said(key: str, **params: Any) -> dict[str, object]:
    """Catalogue words as the document holds them: ``{"id": key, "params": {...}}``."""
    return {"id": key, "params": params}
