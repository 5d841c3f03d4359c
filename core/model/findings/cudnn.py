"""The findings of core/judgement/checks/cudnn.py: cuDNN missing, incomplete or built for another CUDA."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("cudnn.not_on_loader_path", Cause.CUDNN_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.not_on_loader_path.lazy", Cause.CUDNN_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.missing", Cause.CUDNN_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.missing.lazy", Cause.CUDNN_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.sublibrary_missing", Cause.CUDNN_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.zlib_missing", Cause.ZLIBWAPI_MISSING, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.major_mismatch", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec("cudnn.mixed_versions", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR, role=Role.CAUSE),
    FindingSpec(
        "cudnn.built_for_other_cuda", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "cudnn.shadowed_by_other_major", Cause.CUDNN_MAJOR_MISMATCH, Layer.CUDNN, ERROR, role=Role.CAUSE
    ),
)
