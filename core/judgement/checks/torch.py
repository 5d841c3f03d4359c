"""Findings about PyTorch in the same environment pulling in another CUDA or cuDNN major."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fallback_doctor.core.judgement.checks.package import GPU_PACKAGE, choose_gpu_version, pip
from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.torch import TorchFacts
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "torch.cuda_major_differs", Cause.TORCH_CUDA_CONFLICT, Layer.CUDA, Severity.WARNING, role=Role.CAUSE
    ),
    FindingSpec(
        "torch.cudnn_major_differs", Cause.TORCH_CUDA_CONFLICT, Layer.CUDA, Severity.WARNING, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_SHOWN_LIBRARIES = 8


def _evidence(torch: TorchFacts, ort: OrtFacts) -> list[Evidence]:
    evidence = [
        said(
            "evidence.name",
            "evidence.torch.built_for" if torch.cuda_build else "evidence.torch.built_for_no_cuda",
            source=torch.package_dir,
            name="PyTorch",
            version=torch.version,
            cuda=torch.cuda_build or "none",
        ),
        said(
            "evidence.name",
            "evidence.torch.ort_needs",
            source=ort.package_dir,
            name="ONNX Runtime",
            package=ort.build_package_name or "onnxruntime",
            version=ort.version or "?",
            cuda=ort.required_cuda_major,
            cudnn=ort.required_cudnn_major,
        ),
    ]
    if ort.requirement_source:
        evidence.append(_needs_from(ort))
    if torch.cudnn_source:
        cudnn = said(
            "evidence.torch.cudnn",
            "evidence.torch.cudnn_from",
            major=torch.cudnn_major,
            where=torch.cudnn_source,
        )
        evidence.append(cudnn)
    if torch.bundled_libraries:
        shown: list[Any] = list(torch.bundled_libraries[:_SHOWN_LIBRARIES])
        if len(torch.bundled_libraries) > _SHOWN_LIBRARIES:
            more = len(torch.bundled_libraries) - _SHOWN_LIBRARIES
            shown.append(Words("evidence.more", {"count": more}))
        evidence.append(said("evidence.torch.bundled", "evidence.as_said", source=torch.lib_dir, said=shown))
    for dist in torch.nvidia_distributions:
        evidence.append(
            said("evidence.torch.nvidia_wheel", value=f"{dist.name} {dist.version}", source=dist.location)
        )
    return evidence


def _needs_from(ort: OrtFacts) -> Evidence:
    """Where the build's CUDA and cuDNN majors were read (`cat onnxruntime/capi/version_info.py`)."""
    words = ort.requirement_words
    if len(words) == 1:
        return said("evidence.torch.needs_from", "evidence.as_said", said=words[0])
    if len(words) == 2:
        return said("evidence.torch.needs_from", "evidence.joined_two", first=words[0], second=words[1])
    return said("evidence.torch.needs_from", value=ort.requirement_source or "")


def torch_cuda_major_differs(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """PyTorch here is built for another CUDA major than the ONNX Runtime GPU build needs.

    Whichever is imported first loads its CUDA libraries; ``preload_dlls()`` prefers torch's on
    Windows. By hand: ``python -c "import torch; print(torch.version.cuda)"`` beside
    ``cat SITE_PACKAGES/onnxruntime/capi/build_and_package_info.py``.
    """
    torch, ort = snapshot.torch, snapshot.onnxruntime
    if torch is None or ort is None or not ort.has_cuda_provider:
        return
    if torch.cuda_major is None or ort.required_cuda_major is None:
        return
    if torch.cuda_major == ort.required_cuda_major:
        return
    choice = choose_gpu_version(snapshot, prefer_major=torch.cuda_major)
    commands: tuple[str, ...] = ()
    if choice.version:
        commands = (pip(snapshot, f'install "{GPU_PACKAGE}=={choice.version}"'),)
    yield make_finding(
        "torch.cuda_major_differs",
        Cause.TORCH_CUDA_CONFLICT,
        Layer.CUDA,
        Severity.WARNING,
        params={
            "torch_version": torch.version,
            "torch_cuda": torch.cuda_build,
            "torch_cuda_major": torch.cuda_major,
            "ort_version": ort.version or "?",
            "ort_cuda_major": ort.required_cuda_major,
            "requirement": choice.requirement,
            "verify_python": _verify_python(snapshot),
        },
        evidence=tuple(_evidence(torch, ort)),
        commands=commands,
    )


def torch_cudnn_major_differs(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """PyTorch here brings a cuDNN of another major than ONNX Runtime's build needs.

    A process that imported torch first already holds torch's cuDNN. By hand:
    ``python -c "import torch; print(torch.backends.cudnn.version())"``.
    """
    torch, ort = snapshot.torch, snapshot.onnxruntime
    if torch is None or ort is None or not ort.has_cuda_provider:
        return
    if torch.cudnn_major is None or ort.required_cudnn_major is None:
        return
    if torch.cudnn_major == ort.required_cudnn_major:
        return
    yield make_finding(
        "torch.cudnn_major_differs",
        Cause.TORCH_CUDA_CONFLICT,
        Layer.CUDA,
        Severity.WARNING,
        params={
            "torch_version": torch.version,
            "torch_cudnn_major": torch.cudnn_major,
            "torch_cudnn_source": torch.cudnn_source or "?",
            "ort_version": ort.version or "?",
            "ort_cudnn_major": ort.required_cudnn_major,
            "verify_python": _verify_python(snapshot),
        },
        evidence=tuple(_evidence(torch, ort)),
    )


def _verify_python(snapshot: EnvironmentSnapshot) -> str:
    """The interpreter the "verify" text's command runs (resources/texts/torch.json)."""
    return snapshot.python.executable if snapshot.python else "python"


CHECKS = (torch_cuda_major_differs, torch_cudnn_major_differs)
