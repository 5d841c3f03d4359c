"""The binaries of a DirectML or CoreML package of ONNX Runtime: a DirectML package without
DirectML.dll, a CoreML build that this macOS cannot run (split from checks/package.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "package.directml_incomplete", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
    FindingSpec(
        "package.coreml_unusable", Cause.EP_NOT_IN_BUILD, Layer.PACKAGE, Severity.ERROR, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_MACOS = re.compile(r"macOS\s+(\d+(?:\.\d+)?)")


def directml_coreml_package(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """A DirectML package without DirectML.dll, or a macOS package whose CoreML cannot run here.

    Judged from what the collector read of the package's binaries (OrtFacts.binaries), compared
    with what the real wheels ship (resources/compat/directml_coreml.json). By hand:
    ``dir SITE_PACKAGES\\onnxruntime\\capi`` (Windows) or
    ``otool -L .../onnxruntime/capi/onnxruntime_pybind11_state*.so`` (macOS).
    """
    ort = snapshot.onnxruntime
    binaries = ort.binaries if ort is not None else None
    if ort is None or ort.package_dir is None or binaries is None:
        return
    problems = list(binaries.problems)
    if binaries.family == "coreml" and binaries.needs_macos:
        os_name = snapshot.platform.os_name if snapshot.platform is not None else None
        found = _MACOS.search(os_name or "")
        if found and _version_tuple(found.group(1)) < _version_tuple(binaries.needs_macos):
            problems.append(
                f"{binaries.binding} needs macOS {binaries.needs_macos} or newer; "
                f"this machine runs macOS {found.group(1)}"
            )
    if not problems:
        return
    capi = os.path.join(ort.package_dir, "capi")
    package = ort.build_package_name or (ort.distributions[0].name if ort.distributions else "onnxruntime")
    finding_id = "package.directml_incomplete" if binaries.family == "directml" else "package.coreml_unusable"
    yield make_finding(
        finding_id,
        Cause.EP_NOT_IN_BUILD,
        Layer.PACKAGE,
        Severity.ERROR,
        params={"package": f"{package} {ort.version or '?'}", "problems": "; ".join(problems)},
        evidence=tuple(said("evidence.package_files", value=problem, source=capi) for problem in problems),
    )


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())
