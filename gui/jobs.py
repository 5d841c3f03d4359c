"""Work off the GUI thread: QRunnables whose results come back as queued signals.

``StepJob`` runs one wizard step (core/flow/step_child.py) in a child process of its own session, reads its
JSON lines and reports them; ``cancel()`` stops that process and every process under it (the
probe children), at any moment. ``CallJob`` runs a short Python call (finding installations,
opening or writing a bundle) on a pool thread.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from fallback_doctor.core import facade
from PySide6.QtCore import QObject, QRunnable, Signal, Slot


class StepSignals(QObject):
    """Signals of a step; connected to @Slot methods of GUI objects, so delivered on the GUI thread."""

    started = Signal(int)
    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


def kill_tree(pid: int) -> None:
    """Stop ``pid`` and every process under it: freeze the parent, list the tree, kill it all.

    Probe children run in sessions of their own, so their process groups are killed too. By hand:
    ``pstree -p PID`` then ``kill -9``.
    """
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dependency
        psutil = None
    if psutil is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    try:
        parent = psutil.Process(pid)
        parent.suspend()
        children = parent.children(recursive=True)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        children = []
    for child in children:
        try:
            child.suspend()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    for process_id in [pid, *(child.pid for child in children)]:
        if sys.platform != "win32":
            try:
                os.killpg(process_id, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            psutil.Process(process_id).kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass


class StepJob(QRunnable):
    """One step (``{"step": "diagnose"|"cpu"|"gpu", "target": {...}, ...}``) in a child process."""

    def __init__(self, request: dict[str, Any], python: str | None = None) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.request = request
        self.python = python or sys.executable
        self.signals = StepSignals()
        self.pid: int | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self.done = threading.Event()

    @property
    def cancelled(self) -> bool:
        """Whether cancel() was called."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the step now: its process tree is killed; ``cancelled`` is emitted when it is gone."""
        self._cancelled.set()
        with self._lock:
            pid = self.pid
        if pid is not None:
            kill_tree(pid)

    @Slot()
    def run(self) -> None:
        """Start the child, forward its progress lines, report its result (on a pool thread)."""
        try:
            self._run()
        finally:
            self.done.set()

    def _run(self) -> None:
        if self.cancelled:
            self.signals.cancelled.emit()
            return
        # The step's temporary files go in a folder of its own, removed when the step ends: a step
        # that is stopped is killed, and what it had in the system's temporary folder would stay.
        with tempfile.TemporaryDirectory(prefix="gfd-step-", ignore_cleanup_errors=True) as scratch:
            env = dict(os.environ, **dict.fromkeys(("TMPDIR", "TEMP", "TMP"), scratch))
            self._run_child(env)

    def _run_child(self, env: dict[str, str]) -> None:
        """The step's child with ``env``: start it, forward its lines, end its whole tree."""
        env.setdefault("PYTHONIOENCODING", "utf-8")
        kwargs: dict[str, Any] = {}
        if sys.platform == "win32":
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    facade.module_argv(self.python, facade.STEP_CHILD_MODULE),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    env=env,
                    **kwargs,
                )
            except OSError as error:
                self.signals.failed.emit(str(error))
                return
            with self._lock:
                self.pid = process.pid
            if self.cancelled:
                kill_tree(process.pid)
            self.signals.started.emit(process.pid)
            result: dict[str, object] | None = None
            message: str | None = None
            try:
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(self.request).encode("utf-8"))
                process.stdin.close()
                for raw in process.stdout:
                    try:
                        event = json.loads(raw.decode("utf-8", errors="replace"))
                    except ValueError:
                        continue
                    kind = event.get("event")
                    if kind == "result":
                        result = event.get("data")
                    elif kind == "error":
                        message = str(event.get("message"))
                    else:
                        self.signals.progress.emit(event)
            except OSError:
                pass
            process.wait()
            if sys.platform != "win32":
                try:  # nothing of the step may outlive it
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            if self.cancelled:
                self.signals.cancelled.emit()
            elif result is not None:
                self.signals.finished.emit(result)
            else:
                errors.seek(0)
                tail = errors.read()[-2000:].decode("utf-8", errors="replace").strip()
                self.signals.failed.emit(
                    message or tail.splitlines()[-1]
                    if (message or tail)
                    else f"the step exited with status {process.returncode}"
                )


class CallSignals(QObject):
    """Signals of a CallJob."""

    finished = Signal(object)
    failed = Signal(str)


class CallJob(QRunnable):
    """A short Python call on a pool thread (no native work that can hang: that goes to StepJob)."""

    def __init__(self, work: Callable[[], object]) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.work = work
        self.signals = CallSignals()

    @Slot()
    def run(self) -> None:
        """Call the work; emit its value or the error in words."""
        try:
            value = self.work()
        except Exception as error:  # noqa: BLE001 - shown to the user, never a crash
            self.signals.failed.emit(f"{type(error).__name__}: {error}")
        else:
            self.signals.finished.emit(value)
