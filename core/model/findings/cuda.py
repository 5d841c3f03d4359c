"""The findings of core/judgement/checks/cuda.py: CUDA runtime libraries missing or of another major."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "cuda.runtime_not_on_loader_path", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, ERROR, role=Role.CAUSE
    ),
    FindingSpec("cuda.runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, ERROR, role=Role.CAUSE),
    FindingSpec(
        "cuda.optional_runtime_missing", Cause.CUDA_RUNTIME_MISSING, Layer.CUDA, WARNING, role=Role.CAUSE
    ),
    FindingSpec("cuda.major_mismatch", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, ERROR, role=Role.CAUSE),
    FindingSpec(
        "cuda.major_mismatch.other_incomplete", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cuda.major_mismatch.loaded_from_other_major",
        Cause.CUDA_MAJOR_MISMATCH,
        Layer.CUDA,
        WARNING,
        role=Role.CAUSE,
    ),
    FindingSpec(
        "cuda.shadowed_by_other_major", Cause.CUDA_MAJOR_MISMATCH, Layer.CUDA, ERROR, role=Role.CAUSE
    ),
)
