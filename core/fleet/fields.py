"""The few facts the fleet summary reads out of one report document, each through one accessor.

The report document is core/views/text_report.py's (its shape may change between schema versions): every
read the fleet code makes goes through a function here, so adapting to a new shape is one edit.
Each accessor tolerates a missing or oddly-typed field (a bundle is untrusted) and answers None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.document.view import (
    Document,
    Finding,
    Report,
    as_dict,
    as_list,
    finding_of,
    finding_words,
    view_of,
)

FAILING_SEVERITIES = ("error", "warning")
"""A first cause is the first error, else the first warning (information is never a cause)."""


@dataclass(frozen=True)
class FirstCause:
    """The ranked first cause of one host: what one fix would address."""

    cause: str
    """The cause code (``cuda_runtime_missing``)."""
    finding: str
    """The finding id (``cuda.runtime_not_on_loader_path``): hosts sharing it share the fix."""
    title: str
    layer: str
    severity: str
    fix: str = ""
    text: dict[str, Any] = field(default_factory=dict, compare=False)
    """The finding's key and parameters: its words in the reader's language (core/language/texts.py)."""


@dataclass(frozen=True)
class StackCombo:
    """The ONNX Runtime / CUDA / cuDNN / driver combination a host has; None where not found."""

    onnxruntime: str | None
    """``onnxruntime-gpu 1.31.1 (CUDA 13.0 build)``."""
    cuda: str | None
    """The CUDA runtime the loader takes (``12.9``), None when none loads."""
    cudnn: str | None
    driver: str | None

    def label(self) -> str:
        """One line: ``onnxruntime-gpu 1.23.2 (CUDA 12.2 build) · CUDA 12.9 · cuDNN 9.13.0 · driver 580``."""
        return " · ".join(
            (
                self.onnxruntime or "ONNX Runtime: not found",
                f"CUDA {self.cuda}" if self.cuda else "CUDA runtime: none",
                f"cuDNN {self.cudnn}" if self.cudnn else "cuDNN: none",
                f"driver {self.driver}" if self.driver else "driver: none",
            )
        )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def verdict(document: Document) -> str:
    """The one-word verdict (``gpu_unusable`` …)."""
    return view_of(document).verdict or "unknown"


def quick(document: Document) -> bool:
    """Whether the diagnosis was static only (no test inference)."""
    return view_of(document).quick


def created(document: Document) -> str | None:
    """When the host was diagnosed (ISO 8601)."""
    return view_of(document).created or None


def target_kind(document: Document) -> str | None:
    """``bareun``, ``python`` or ``log``."""
    return view_of(document).target_kind or None


def findings(document: Document) -> tuple[Finding, ...]:
    """The ranked findings."""
    return view_of(document).findings


def finding_title(finding: Finding | Mapping[str, Any], lang: str = "en") -> str:
    """A finding's title in ``lang`` (English, then the untranslated title, then its id, as fallbacks)."""
    finding = finding if isinstance(finding, Finding) else finding_of(finding)
    return finding_words(finding, lang)["title"] or finding.id


def cause_words(cause: dict[str, Any], lang: str) -> tuple[str, str]:
    """(title, fix) of a fleet summary's first cause or cause group in ``lang``, from its ``text``."""
    kept = {
        "text": cause.get("text"),
        "title": cause.get("title"),
        "remediation": {"summary": cause.get("fix")},
    }
    words = finding_words(kept, lang)
    return words["title"], words["fix"]


def first_cause(document: Document, lang: str = "en") -> FirstCause | None:
    """The host's first cause, core's (core/judgement/judge.py): the one every other surface shows first.

    None for a host with nothing to fix (the findings are information or context only).
    """
    from fallback_doctor.core.judgement.judge import document_first_cause

    chosen = document_first_cause(view_of(document).raw)
    if chosen is None:
        return None
    finding = finding_of(chosen)
    words = finding_words(finding, lang)
    return FirstCause(
        cause=finding.cause or "unknown",
        finding=finding.id,
        title=words["title"] or finding.id,
        layer=finding.layer or "unknown",
        severity=finding.severity,
        fix=words["fix"],
        text=as_dict(chosen.get("text")),
    )


def _cudart_version(number: int) -> str:
    """cudaRuntimeGetVersion's integer (12090) as ``12.9``."""
    return f"{number // 1000}.{(number % 1000) // 10}"


def _cudnn_version(number: int) -> str:
    """cudnnGetVersion's integer: 91300 -> ``9.13.0`` (cuDNN 9), 8907 -> ``8.9.7`` (cuDNN 8)."""
    if number >= 90000:
        return f"{number // 10000}.{(number % 10000) // 100}.{number % 100}"
    return f"{number // 1000}.{(number % 1000) // 100}.{number % 100}"


def _loaded_version(document: Report, kind: str) -> int | None:
    for attempt in as_list(document.part("native").get("attempts")):
        attempt = as_dict(attempt)
        version = attempt.get("version")
        if attempt.get("kind") == kind and attempt.get("loaded") and isinstance(version, int) and version > 0:
            return version
    return None


def onnxruntime_label(document: Document) -> str | None:
    """``onnxruntime-gpu 1.31.1 (CUDA 13.0 build)``, ``ONNX Runtime 1.23.2 (libPath)`` …"""
    report = view_of(document)
    ort = report.part("onnxruntime")
    version = _str(ort.get("version"))
    if version is None:
        lib_ort = as_dict(report.part("target").get("lib_ort"))
        version = _str(lib_ort.get("version"))
        return f"ONNX Runtime {version} (libPath)" if version else None
    name = _str(ort.get("build_package_name"))
    if name is None:
        distributions = [as_dict(d) for d in as_list(ort.get("distributions"))]
        name = _str(distributions[0].get("name")) if distributions else None
    build = _str(ort.get("cuda_build_version"))
    providers = [p for p in as_list(ort.get("providers_in_build")) if isinstance(p, str)]
    if build:
        flavour = f"CUDA {build} build"
    elif providers and "CUDAExecutionProvider" not in providers:
        flavour = "CPU-only build"
    else:
        flavour = None
    label = f"{name or 'ONNX Runtime'} {version}"
    return f"{label} ({flavour})" if flavour else label


def driver_version(document: Document) -> str | None:
    """The NVIDIA driver version NVML (or /proc) reported, None when there is no driver."""
    driver = view_of(document).part("driver")
    return _str(driver.get("driver_version")) or _str(driver.get("proc_driver_version"))


def gpu_names(document: Document) -> tuple[str, ...]:
    """The GPU model names NVML listed."""
    names: list[str] = []
    for gpu in as_list(view_of(document).part("driver").get("gpus")):
        name = _str(as_dict(gpu).get("name"))
        if name:
            names.append(name)
    return tuple(names)


def sees_a_gpu(document: Document) -> bool | None:
    """Whether the tool saw an NVIDIA GPU on the host (NVML listed one); None when not recorded."""
    report = view_of(document)
    if not report.has_part("driver"):
        return None
    return bool(gpu_names(report)) or bool(as_list(report.part("driver").get("gpus")))


def stack_combo(document: Document) -> StackCombo:
    """The host's ONNX Runtime / CUDA runtime / cuDNN / driver combination."""
    document = view_of(document)
    cudart = _loaded_version(document, "cudart")
    cudnn = _loaded_version(document, "cudnn")
    return StackCombo(
        onnxruntime=onnxruntime_label(document),
        cuda=_cudart_version(cudart) if cudart else None,
        cudnn=_cudnn_version(cudnn) if cudnn else None,
        driver=driver_version(document),
    )
