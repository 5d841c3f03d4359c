"""What ended a probe when neither the probe nor the tool did: a signal from outside, or a
machine too busy to give it the CPU it needed in its time (issues 27 and 28).

The tool sends signals to its children only at a timeout or a flood (core/readers/probes/runner.py:
those outcomes carry no exit status). A child that ends on SIGSEGV, SIGABRT, SIGBUS, SIGILL,
SIGFPE, SIGSYS or SIGTRAP did it to itself: a crash of what it was loading. Any other signal
(SIGKILL from the out-of-memory killer or a person, SIGTERM from a service manager …) came
from outside: it says nothing about the libraries and is never reported as their crash.

A child that ran out of its time is said to have met a busy machine when it spent a fifth of
that time or more waiting for a CPU (the kernel's ``run_delay`` in ``/proc/PID/schedstat``), or,
where that cannot be read, when the load average was at least twice the number of cores.
By hand: ``cat /proc/PID/schedstat`` (CPU time, time waiting for a CPU, in ns) and ``uptime``.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from fallback_doctor.core.language.evidence_text import named, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity
from fallback_doctor.core.platform.files import read_regular_file

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("probe.interrupted", Cause.PROBE_FAILED, Layer.PROBE, Severity.INFO, role=Role.CONTEXT),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


KILLED = "killed"
"""Ended by a signal the tool did not send."""
BUSY = "busy"
"""Ran out of its time on a machine too busy to run it."""

_CRASH_SIGNALS = frozenset(
    int(getattr(signal, name))
    for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGSYS", "SIGTRAP")
    if hasattr(signal, name)
)
BUSY_WAIT_SHARE = 0.2
"""A child that waited this share of its time for a CPU met a busy machine."""
BUSY_LOAD_PER_CORE = 2.0
"""Without schedstat: a load average this many times the cores is a busy machine."""


def killed_from_outside(returncode: int | None) -> bool:
    """Whether an exit status says a signal that is not a crash ended the child (POSIX)."""
    return returncode is not None and returncode < 0 and -returncode not in _CRASH_SIGNALS


@dataclass(frozen=True)
class Pressure:
    """How the machine treated a child that ran out of its time."""

    cpu_s: float | None
    """CPU time the child got (None where /proc/PID/schedstat cannot be read)."""
    waited_s: float | None
    """Time it waited for a CPU while it could run."""
    wall_s: float
    load: float | None
    """The 1-minute load average."""
    cores: int

    @property
    def busy(self) -> bool:
        """Whether the machine, not the child, is why it did not finish in time."""
        if self.waited_s is not None and self.wall_s > 0:
            return self.waited_s / self.wall_s >= BUSY_WAIT_SHARE
        return self.load is not None and self.load >= BUSY_LOAD_PER_CORE * self.cores

    def words(self) -> str:
        """ "load 9.8 on 2 cores; the probe got 0.4 s of CPU and waited 3.1 s for one"."""
        parts = [
            f"load {self.load:.1f} on {self.cores} cores" if self.load is not None else f"{self.cores} cores"
        ]
        if self.cpu_s is not None and self.waited_s is not None:
            parts.append(f"the probe got {self.cpu_s:.1f} s of CPU and waited {self.waited_s:.1f} s for one")
        return "; ".join(parts)


def schedstat(pid: int) -> tuple[float, float] | None:
    """(CPU seconds, seconds waiting for a CPU) of a live process, from /proc/PID/schedstat."""
    try:
        fields = read_regular_file(f"/proc/{pid}/schedstat", 256).split()
        return int(fields[0]) / 1e9, int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def pressure(pid: int, wall_s: float) -> Pressure:
    """How busy the machine was for the live child ``pid`` after ``wall_s`` seconds."""
    sample = schedstat(pid)
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Pressure(
        cpu_s=None if sample is None else sample[0],
        waited_s=None if sample is None else sample[1],
        wall_s=wall_s,
        load=load,
        cores=cores,
    )


def interrupted_finding(sentence: str, stderr: str) -> Finding:
    """The note for a probe ended from outside twice: information, never a cause.

    It ranks below every cause the static inspection found (``Severity.INFO``), names no ONNX
    Runtime version, and its next step is to run the diagnosis again when the machine is
    quieter (``uptime``; for a SIGKILL ``journalctl -k | grep -i "killed process"``).
    ``sentence`` is the runner's (core/readers/probes/runner.py).
    """
    evidence = [said("evidence.probe", value=sentence)]
    if stderr.strip():
        evidence.append(named("stderr", stderr.strip()[-800:]))
    return make_finding(
        "probe.interrupted",
        Cause.PROBE_FAILED,
        Layer.PROBE,
        Severity.INFO,
        params={"outcome": sentence},
        evidence=tuple(evidence),
    )
