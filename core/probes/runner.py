"""Run a child process with a hard timeout, kill its whole process group, say what happened.

Everything that loads CUDA, cuDNN or ONNX Runtime natively runs through here: a missing
cuDNN sub-library aborts the process that loads it, and a driver call can hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from fallback_doctor.core.frozen import target_environment

_OUTPUT_LIMIT = 4 * 1024 * 1024
"""Keep at most this many bytes of each stream: a child that floods its output cannot exhaust us."""

_LINE_LIMIT = 256 * 1024
"""A line longer than this is not handed to ``on_stdout_line`` (it is still kept in the output)."""

_READ_CHUNK = 64 * 1024


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
    on_start: Callable[[int], None] | None = None,
    on_stdout_line: Callable[[str], None] | None = None,
) -> ChildOutcome:
    """Run ``argv`` to completion or until ``timeout_s``, then kill its process group.

    The child gets its own session (POSIX) or process group (Windows) so that a
    timeout kills it and every process it started. Output is decoded as UTF-8 with
    replacement; each stream is capped so a flood cannot exhaust memory.

    Live progress: ``on_start(pid)`` is called once the child exists (a sampler follows that
    PID), ``on_stdout_line(line)`` for each complete line of its standard output as it arrives
    (without the newline; read on a thread while the child runs). A callback that raises is
    ignored: the child is still waited for, or killed at the timeout, as without callbacks.
    By hand: ``timeout -s KILL 180 python probe.py``.
    """
    if on_start is not None or on_stdout_line is not None:
        return _run_streaming(argv, env, timeout_s, stdin_text, cwd, on_start, on_stdout_line)
    return finish_child(start_child(argv, env=env, stdin_text=stdin_text, cwd=cwd), timeout_s=timeout_s)


@dataclass
class StartedChild:
    """A child started ahead of time (``start_child``), to be waited for by ``finish_child``."""

    argv: tuple[str, ...]
    process: subprocess.Popen[bytes] | None
    started: float
    stdin_text: str | None = None
    error: str | None = None
    """Why it could not be started (then ``process`` is None)."""


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
    try:
        process = _spawn(argv, env, stdin_text, cwd)
    except OSError as error:
        return StartedChild(tuple(argv), None, started, stdin_text, str(error))
    return StartedChild(tuple(argv), process, started, stdin_text)


def abandon_child(child: StartedChild) -> None:
    """Kill a started child that will not be finished (and its process group); wait for it."""
    process = child.process
    if process is None or process.returncode is not None:
        return
    kill_process_group(process)
    process.communicate()


def finish_child(child: StartedChild, *, timeout_s: float, stdin_text: str | None = None) -> ChildOutcome:
    """Wait for a started child until ``timeout_s`` after its start, then kill its process group.

    ``stdin_text`` is written now (the child must have been started with a ``stdin_text``,
    even an empty one, so that its standard input is a pipe).
    """
    if stdin_text is not None:
        # The work is handed over now: the timeout counts from here, not from the early start.
        child.stdin_text = stdin_text
        child.started = time.monotonic()
    process = child.process
    if process is None:
        return ChildOutcome(child.argv, None, "", child.error or "", False, time.monotonic() - child.started)
    timed_out = False
    remaining = max(0.0, timeout_s - (time.monotonic() - child.started))
    try:
        out, err = process.communicate(
            input=child.stdin_text.encode("utf-8") if child.stdin_text is not None else None,
            timeout=remaining,
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
        argv=child.argv,
        returncode=None if timed_out else process.returncode,
        stdout=out[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace"),
        stderr=err[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace"),
        timed_out=timed_out,
        duration_s=time.monotonic() - child.started,
        truncated=truncated,
    )


def _spawn(
    argv: Sequence[str], env: Mapping[str, str] | None, stdin_text: str | None, cwd: str | None
) -> subprocess.Popen[bytes]:
    """Popen in a session (POSIX) or process group (Windows) of its own, every stream a pipe."""
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    process: subprocess.Popen[bytes] = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=target_environment(env if env is not None else os.environ),
        cwd=cwd,
        **kwargs,  # type: ignore[call-overload]
    )
    return process


class _Tail:
    """The last ``_OUTPUT_LIMIT`` bytes of a stream, and how many bytes it had in all."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * _OUTPUT_LIMIT:
            del self.data[: len(self.data) - _OUTPUT_LIMIT]

    def text(self) -> str:
        return bytes(self.data[-_OUTPUT_LIMIT:]).decode("utf-8", errors="replace")


def _pump(stream: IO[bytes], tail: _Tail, on_line: Callable[[str], None] | None) -> None:
    """Read ``stream`` to its end into ``tail``; hand each complete line to ``on_line``."""
    pending = bytearray()
    overlong = False
    try:
        while True:
            chunk = stream.readline(_READ_CHUNK)
            if not chunk:
                break
            tail.add(chunk)
            if on_line is None:
                continue
            if not overlong:
                pending += chunk
                if len(pending) > _LINE_LIMIT:
                    overlong, pending = True, bytearray()
            if chunk.endswith(b"\n"):
                if not overlong:
                    line = bytes(pending).rstrip(b"\r\n").decode("utf-8", errors="replace")
                    try:
                        on_line(line)
                    except Exception:  # noqa: BLE001 - a listener must not stop the reading
                        pass
                pending, overlong = bytearray(), False
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write ``data`` to the child's stdin and close it (a child that does not read it is fine)."""
    try:
        stream.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _run_streaming(
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    timeout_s: float,
    stdin_text: str | None,
    cwd: str | None,
    on_start: Callable[[int], None] | None,
    on_stdout_line: Callable[[str], None] | None,
) -> ChildOutcome:
    """``run_child`` with its output read on threads while the child runs (the live path)."""
    start = time.monotonic()
    try:
        process = _spawn(argv, env, stdin_text, cwd)
    except OSError as error:
        return ChildOutcome(tuple(argv), None, "", str(error), False, time.monotonic() - start)
    out, err = _Tail(), _Tail()
    assert process.stdout is not None and process.stderr is not None
    threads = [
        threading.Thread(target=_pump, args=(process.stdout, out, on_stdout_line), daemon=True),
        threading.Thread(target=_pump, args=(process.stderr, err, None), daemon=True),
    ]
    if stdin_text is not None and process.stdin is not None:
        threads.append(
            threading.Thread(target=_feed, args=(process.stdin, stdin_text.encode("utf-8")), daemon=True)
        )
    timed_out = False
    try:
        for thread in threads:
            thread.start()
        if on_start is not None:
            try:
                on_start(process.pid)
            except Exception:  # noqa: BLE001 - a listener must not leave the child running
                pass
        try:
            process.wait(timeout=max(0.0, timeout_s - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_process_group(process)
            process.wait()
    finally:
        # A child that exited may have left grandchildren in its group (holding the pipes open).
        kill_process_group(process, only_group=True)
        if process.poll() is None:
            process.kill()
            process.wait()
        for thread in threads:
            thread.join(5.0)
    return ChildOutcome(
        argv=tuple(argv),
        returncode=None if timed_out else process.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        truncated=out.total > _OUTPUT_LIMIT or err.total > _OUTPUT_LIMIT,
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
