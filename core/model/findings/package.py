"""The findings of core/judgement/checks/package.py (declared here, as every check's are under
core/model/findings/)."""

from __future__ import annotations

from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.findings.spec import FindingSpec, Role
from fallback_doctor.core.model.result import Layer, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("package.ort_not_installed", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec("package.ort_files_missing", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec("package.conflict", Cause.PACKAGE_CONFLICT, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec(
        "package.conflict.cpu_in_effect", Cause.PACKAGE_CONFLICT, Layer.PACKAGE, ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "package.conflict.gpu_in_effect", Cause.PACKAGE_CONFLICT, Layer.PACKAGE, ERROR, role=Role.CAUSE
    ),
    FindingSpec("package.ep_not_in_build", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec(
        "package.ep_not_in_build.other_accelerator",
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        ERROR,
        role=Role.CAUSE,
    ),
    FindingSpec("native.no_library", Cause.ORT_NOT_INSTALLED, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec("native.cpu_only_library", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec("package.directml_incomplete", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR, role=Role.CAUSE),
    FindingSpec("package.coreml_unusable", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, ERROR, role=Role.CAUSE),
)
