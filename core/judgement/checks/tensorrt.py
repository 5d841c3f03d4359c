"""TensorRT layer: the TensorRT provider is shipped but libnvinfer / nvonnxparser cannot load.

By hand: ``ldd /path/libonnxruntime_providers_tensorrt.so | grep "not found"`` and
``ldconfig -p | grep nvinfer``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fallback_doctor.core.judgement.checks.remedy import loader_path_steps, pip_steps
from fallback_doctor.core.judgement.checks.resolution import (
    cuda_major_needed,
    is_windows,
    other_major_copies,
    resolution_evidence,
    shadowed_findings,
    unresolved,
    verify_command,
)
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.knowledge.cuda_packages import tensorrt_packages
from fallback_doctor.core.readers.loader import names

FINDINGS: tuple[FindingSpec, ...] = (
    # A warning when the application asks for TensorRT, a note otherwise (checks/tensorrt.py).
    FindingSpec(
        "tensorrt.missing",
        Cause.TENSORRT_MISSING,
        Layer.TENSORRT,
        (Severity.WARNING, Severity.INFO),
        role=Role.CAUSE,
    ),
    FindingSpec(
        "tensorrt.other_major",
        Cause.TENSORRT_MISSING,
        Layer.TENSORRT,
        (Severity.WARNING, Severity.INFO),
        role=Role.CAUSE,
    ),
    FindingSpec(
        "tensorrt.shadowed_by_other_major",
        Cause.TENSORRT_MISSING,
        Layer.TENSORRT,
        Severity.ERROR,
        role=Role.CAUSE,
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_NOT_ASKED = Words("evidence.trt.not_asked")


def tensorrt_asked(snapshot: EnvironmentSnapshot) -> Words | None:
    """Why we know the application asks for TensorRT, or None when nothing says it does.

    ONNX Runtime only opens the TensorRT provider when a session asks for
    TensorrtExecutionProvider, so a TensorRT that cannot load matters only then. The signs: the
    configuration asks for it, the running server has the provider library mapped, the log
    shows ONNX Runtime trying it, or ORT_TENSORRT_* settings in the application's environment.
    By hand: ``grep -i tensorrt <config> <log>`` and ``grep tensorrt /proc/PID/maps``.
    """
    target = snapshot.target
    if target is not None and target.requested_provider == "tensorrt":
        return Words("evidence.trt.config_asks", {"where": target.config_path or "executionProvider"})
    process = snapshot.process
    if process is not None and any(lib.family == "ort_provider_tensorrt" for lib in process.mapped_libraries):
        return Words("evidence.trt.server_mapped", {"pid": process.pid})
    log = snapshot.log
    if log is not None and any(c.cause == Cause.TENSORRT_MISSING.value for c in log.causes):
        return Words("evidence.trt.log_shows")
    environments = [snapshot.environment, process.environment if process else None]
    for environment in environments:
        named = sorted(key for key in environment or {} if key.startswith("ORT_TENSORRT_"))
        if named:
            return Words("evidence.trt.environment_sets", {"names": ", ".join(named)})
    return None


def tensorrt_missing(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The TensorRT provider library is present but TensorRT itself is not loadable.

    A warning when the application asks for TensorRT (:func:`tensorrt_asked`), a note otherwise:
    the CUDA provider can still run the model. By hand:
    ``ldd <libonnxruntime_providers_tensorrt.so> | grep nvinfer``.
    """
    asked = tensorrt_asked(snapshot)
    libraries = snapshot.libraries
    if libraries is None:
        return
    windows = is_windows(snapshot)
    for report in libraries.reports:
        if "Tensorrt" not in report.provider and "TensorRT" not in report.provider:
            continue
        missing = [item for item in unresolved(report) if names.is_tensorrt(item.name)]
        if not missing:
            continue
        wanted = names.parse_library_name(missing[0].name)
        trt_major = wanted.major if wanted and wanted.major else 10
        cuda_major = cuda_major_needed(snapshot, report)
        # Pinned to the major the provider library loads (libnvinfer.so.10): unpinned, pip takes the
        # newest (TensorRT 11 since 2026-10, libnvinfer.so.11), which this provider cannot open.
        package = f"{tensorrt_packages().get(cuda_major or 0, 'tensorrt')}=={trt_major}.*"
        elsewhere = [copy for item in missing for copy in item.installed_elsewhere]
        others = [copy for item in missing for copy in other_major_copies(libraries, item)]
        if elsewhere:
            dirs = list(dict.fromkeys(os.path.dirname(copy) for copy in elsewhere))
            steps = loader_path_steps(snapshot, dirs, windows)
        else:
            steps = pip_steps(snapshot, [package])
        finding_id = "tensorrt.other_major" if others and not elsewhere else "tensorrt.missing"
        yield make_finding(
            finding_id,
            Cause.TENSORRT_MISSING,
            Layer.TENSORRT,
            Severity.WARNING if asked else Severity.INFO,
            params={
                "provider": report.provider,
                "provider_path": report.root,
                "names": [item.name for item in missing],
                "trt_major": trt_major,
                "package": package,
                "copies": others or elsewhere,
                "cuda_major": cuda_major if cuda_major is not None else "?",
                "verify_command": verify_command(snapshot, report, windows),
            },
            evidence=(
                *resolution_evidence(missing),
                said("evidence.trt.asked_for", "evidence.as_said", said=asked or _NOT_ASKED),
            ),
            steps=tuple(steps),
        )


def tensorrt_shadowed(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A TensorRT library the loader would take from a copy of another major.

    By hand: ``readelf -d <libnvinfer.so.10> | grep SONAME``.
    """
    yield from shadowed_findings(
        snapshot,
        names.is_tensorrt,
        "tensorrt.shadowed_by_other_major",
        Cause.TENSORRT_MISSING,
        Layer.TENSORRT,
    )


CHECKS = (tensorrt_missing, tensorrt_shadowed)
