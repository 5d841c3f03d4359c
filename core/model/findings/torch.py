"""The findings of core/judgement/checks/torch.py: PyTorch in the same process needs other CUDA libraries."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("torch.cuda_major_differs", Cause.TORCH_CUDA_CONFLICT, Layer.CUDA, WARNING, role=Role.CAUSE),
    FindingSpec("torch.cudnn_major_differs", Cause.TORCH_CUDA_CONFLICT, Layer.CUDA, WARNING, role=Role.CAUSE),
)
