"""What the running application asked for: the GPU, or only the CPU in its own code (issue 27).

ONNX Runtime opens ``libonnxruntime_providers_cuda.so`` only when a session asks for the CUDA
provider. A running application that has ONNX Runtime mapped but not that library, in a stack
where the library and everything it needs resolve for the application's own environment, never
asked: its provider list (or a CPU-only flag of the framework it uses) keeps it on the CPU, and
nothing in the GPU stack will change that.

By hand: ``grep -E 'onnxruntime|providers_cuda' /proc/PID/maps``, ``ldd <provider> | grep "not
found"`` under the application's environment, and the application's ``InferenceSession(...,
providers=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.resolution import unresolved
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.libraries import DependencyReport
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("process.gpu_not_asked", Cause.UNKNOWN, Layer.CONFIG, Severity.ERROR, role=Role.DECIDES),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


def _cuda_report(snapshot: EnvironmentSnapshot) -> DependencyReport | None:
    libraries = snapshot.libraries
    if libraries is None:
        return None
    return next((report for report in libraries.reports if "CUDA" in report.provider), None)


def _log_says_it_asked(snapshot: EnvironmentSnapshot) -> bool:
    """Whether the application's log shows a GPU attempt (a fallback line, or a cause it named)."""
    log = snapshot.log
    if log is None:
        return False
    return bool(log.fallback) or any(candidate.cause != "unknown" for candidate in log.causes)


def gpu_never_asked(snapshot: EnvironmentSnapshot) -> DependencyReport | None:
    """The CUDA provider's report when the process could have loaded it and did not, else None."""
    process = snapshot.process
    if process is None or process.error or not process.maps_read or not process.onnxruntime_mapped:
        return None
    if process.cuda_provider_mapped or process.mapped("ort_provider_tensorrt"):
        return None
    target = snapshot.target
    if target is not None and target.wants_cpu:
        return None  # the configuration asks for the CPU: its own finding says so
    report = _cuda_report(snapshot)
    if report is None or unresolved(report) or _log_says_it_asked(snapshot):
        return None
    return report


def check_gpu_not_asked(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The application runs ONNX Runtime and never asked for the GPU, though its stack could serve it.

    By hand: ``grep providers_cuda /proc/PID/maps`` prints nothing while
    ``ldd <site-packages>/onnxruntime/capi/libonnxruntime_providers_cuda.so | grep "not found"``
    does not either; then read the application's ``providers=[...]``.
    """
    report = gpu_never_asked(snapshot)
    process = snapshot.process
    if report is None or process is None:
        return
    command = " ".join(process.cmdline)[:300] or (process.executable or "?")
    yield make_finding(
        "process.gpu_not_asked",
        Cause.UNKNOWN,
        Layer.CONFIG,
        Severity.ERROR,
        params={"pid": process.pid, "provider": report.root, "command": command},
        evidence=(
            said(
                "evidence.process",
                "evidence.pid_command",
                source=f"/proc/{process.pid}/cmdline",
                pid=process.pid,
                command=command,
            ),
            said("evidence.on_disk_not_mapped", value=report.root, source=f"/proc/{process.pid}/maps"),
            said(
                "evidence.every_library_resolves",
                "evidence.resolved_for_application",
                source_id="evidence.source.loader_search",
                count=len(report.resolutions),
            ),
        ),
        commands=(f"grep providers_cuda /proc/{process.pid}/maps",),
    )


CHECKS = (check_gpu_not_asked,)
