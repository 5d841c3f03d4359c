"""Findings about PyTorch in the same environment pulling in another CUDA or cuDNN major."""

from __future__ import annotations

from collections.abc import Iterator

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.checks.package import GPU_PACKAGE, choose_gpu_version, pip
from fallback_doctor.core.facts.onnxruntime import OrtFacts
from fallback_doctor.core.facts.torch import TorchFacts
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.snapshot import EnvironmentSnapshot
from fallback_doctor.core.texts import make_finding

_SHOWN_LIBRARIES = 8


def _evidence(torch: TorchFacts, ort: OrtFacts) -> list[Evidence]:
    evidence = [
        Evidence(
            "PyTorch", f"{torch.version}, built for CUDA {torch.cuda_build or 'none'}", torch.package_dir
        ),
        Evidence(
            "ONNX Runtime",
            f"{ort.build_package_name or 'onnxruntime'} {ort.version or '?'}, needs CUDA "
            f"{ort.required_cuda_major} and cuDNN {ort.required_cudnn_major}",
            ort.package_dir,
        ),
    ]
    if ort.requirement_source:
        evidence.append(Evidence("ONNX Runtime's needs come from", ort.requirement_source))
    if torch.cudnn_source:
        evidence.append(Evidence("PyTorch's cuDNN", f"cuDNN {torch.cudnn_major} from {torch.cudnn_source}"))
    if torch.bundled_libraries:
        shown = list(torch.bundled_libraries[:_SHOWN_LIBRARIES])
        if len(torch.bundled_libraries) > _SHOWN_LIBRARIES:
            shown.append(f"… {len(torch.bundled_libraries) - _SHOWN_LIBRARIES} more")
        evidence.append(Evidence("bundled in torch/lib", ", ".join(shown), torch.lib_dir))
    for dist in torch.nvidia_distributions:
        evidence.append(Evidence("NVIDIA wheel", f"{dist.name} {dist.version}", dist.location))
    return evidence


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
