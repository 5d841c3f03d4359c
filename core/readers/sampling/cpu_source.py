"""The probe's CPU utilization from psutil (see core/readers/sampling/sources.py for the interface)."""

from __future__ import annotations

from typing import Any

from fallback_doctor.core.readers.sampling.sample import (
    SOURCE_NOT_STARTED,
    SOURCE_OK,
    SOURCE_UNAVAILABLE,
    SourceStatus,
)


class PsutilCpuSource:
    """The probe's CPU utilization from psutil (percent of one core, like `top -p PID`)."""

    def __init__(self, *, include_children: bool = False, psutil_module: Any = None) -> None:
        """``include_children``: add the probe's child processes; ``psutil_module``: tests only."""
        self._include_children = include_children
        self._psutil = psutil_module
        self._processes: dict[int, Any] = {}
        self._pid: int | None = None
        self._status = SourceStatus("psutil", SOURCE_NOT_STARTED)

    @property
    def name(self) -> str:
        """Always "psutil"."""
        return "psutil"

    def open(self) -> SourceStatus:
        """Import psutil; without it the status says so."""
        if self._psutil is None:
            try:
                import psutil
            except ImportError as error:
                self._status = SourceStatus(
                    "psutil", SOURCE_UNAVAILABLE, "psutil_missing", f"psutil is not installed ({error})"
                )
                return self._status
            self._psutil = psutil
        self._status = SourceStatus("psutil", SOURCE_OK, "no_pid", "no probe process to watch yet")
        return self._status

    def read(self, now: float, pid: int | None) -> float | None:
        """CPU % since the previous read; None on the first read for a PID, or once it has exited."""
        del now
        if self._psutil is None:
            return None
        if pid is None:
            self._pid, self._processes = None, {}
            self._status = SourceStatus("psutil", SOURCE_OK, "no_pid", "no probe process to watch yet")
            return None
        psutil = self._psutil
        if pid != self._pid:
            self._pid, self._processes = pid, {}
        try:
            main = self._processes.get(pid)
            if main is None:
                main = self._processes[pid] = psutil.Process(pid)
                main.cpu_percent(None)
                self._prime_children(main)
                self._status = SourceStatus("psutil", SOURCE_OK, "ok")
                return None
            total = float(main.cpu_percent(None))
            if self._include_children:
                total += self._children_percent(main)
        except psutil.NoSuchProcess:
            self._status = SourceStatus(
                "psutil", SOURCE_UNAVAILABLE, "process_gone", f"the probe process {pid} has exited"
            )
            return None
        except psutil.AccessDenied:
            self._status = SourceStatus(
                "psutil", SOURCE_UNAVAILABLE, "no_permission", f"not allowed to read process {pid}'s CPU time"
            )
            return None
        self._status = SourceStatus("psutil", SOURCE_OK, "ok")
        return total

    def _prime_children(self, main: Any) -> None:
        if not self._include_children:
            return
        for child in main.children(recursive=True):
            try:
                child.cpu_percent(None)
                self._processes[int(child.pid)] = child
            except self._psutil.Error:
                continue

    def _children_percent(self, main: Any) -> float:
        total = 0.0
        for child in main.children(recursive=True):
            known = self._processes.get(int(child.pid))
            try:
                if known is None:
                    child.cpu_percent(None)
                    self._processes[int(child.pid)] = child
                    continue
                total += float(known.cpu_percent(None))
            except self._psutil.Error:
                continue
        return total

    def status(self) -> SourceStatus:
        """The status after the latest read."""
        return self._status

    def close(self) -> None:
        """Forget the watched processes."""
        self._processes = {}
        self._pid = None
