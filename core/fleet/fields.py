"""The few facts the fleet summary reads out of one report document, each through one accessor.

The report document is core/report.py's (its shape may change between schema versions): every
read the fleet code makes goes through a function here, so adapting to a new shape is one edit.
Each accessor tolerates a missing or oddly-typed field (a bundle is untrusted) and answers None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.texts import finding_words

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
    """The finding's key and parameters: its words in the reader's language (core/texts.py)."""


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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def verdict(document: dict[str, Any]) -> str:
    """The one-word verdict (``gpu_unusable`` …)."""
    return _str(document.get("verdict")) or "unknown"


def quick(document: dict[str, Any]) -> bool:
    """Whether the diagnosis was static only (no test inference)."""
    return bool(document.get("quick"))


def created(document: dict[str, Any]) -> str | None:
    """When the host was diagnosed (ISO 8601)."""
    return _str(document.get("created"))


def target_kind(document: dict[str, Any]) -> str | None:
    """``bareun``, ``python`` or ``log``."""
    return _str(_dict(document.get("target")).get("kind")) or _str(
        _dict(_environment(document).get("target")).get("kind")
    )


def findings(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranked findings (objects only)."""
    return [item for item in _list(document.get("findings")) if isinstance(item, dict)]


def finding_title(finding: dict[str, Any], lang: str = "en") -> str:
    """A finding's title in ``lang`` (English, then the untranslated title, as fallbacks)."""
    return finding_words(finding, lang)["title"] or str(finding.get("id", ""))


def cause_words(cause: dict[str, Any], lang: str) -> tuple[str, str]:
    """(title, fix) of a fleet summary's first cause or cause group in ``lang``, from its ``text``."""
    kept = {
        "text": cause.get("text"),
        "title": cause.get("title"),
        "remediation": {"summary": cause.get("fix")},
    }
    words = finding_words(kept, lang)
    return words["title"], words["fix"]


def _finding_fix(finding: dict[str, Any], lang: str) -> str:
    return finding_words(finding, lang)["fix"]


def first_cause(document: dict[str, Any], lang: str = "en") -> FirstCause | None:
    """The host's first cause, core's (core/judge.py): the one every other surface shows first.

    None for a host with nothing to fix (the findings are information or context only).
    """
    from fallback_doctor.core.judge import document_first_cause

    chosen = document_first_cause(document)
    if chosen is None:
        return None
    return FirstCause(
        cause=str(chosen.get("cause", "unknown")),
        finding=str(chosen.get("id", "")),
        title=finding_title(chosen, lang),
        layer=str(chosen.get("layer", "unknown")),
        severity=str(chosen.get("severity", "")),
        fix=_finding_fix(chosen, lang),
        text=_dict(chosen.get("text")),
    )


def _environment(document: dict[str, Any]) -> dict[str, Any]:
    return _dict(document.get("environment"))


def _cudart_version(number: int) -> str:
    """cudaRuntimeGetVersion's integer (12090) as ``12.9``."""
    return f"{number // 1000}.{(number % 1000) // 10}"


def _cudnn_version(number: int) -> str:
    """cudnnGetVersion's integer: 91300 -> ``9.13.0`` (cuDNN 9), 8907 -> ``8.9.7`` (cuDNN 8)."""
    if number >= 90000:
        return f"{number // 10000}.{(number % 10000) // 100}.{number % 100}"
    return f"{number // 1000}.{(number % 1000) // 100}.{number % 100}"


def _loaded_version(document: dict[str, Any], kind: str) -> int | None:
    for attempt in _list(_dict(_environment(document).get("native")).get("attempts")):
        attempt = _dict(attempt)
        version = attempt.get("version")
        if attempt.get("kind") == kind and attempt.get("loaded") and isinstance(version, int) and version > 0:
            return version
    return None


def onnxruntime_label(document: dict[str, Any]) -> str | None:
    """``onnxruntime-gpu 1.31.1 (CUDA 13.0 build)``, ``ONNX Runtime 1.23.2 (libPath)`` …"""
    ort = _dict(_environment(document).get("onnxruntime"))
    version = _str(ort.get("version"))
    if version is None:
        lib_ort = _dict(_dict(_environment(document).get("target")).get("lib_ort"))
        version = _str(lib_ort.get("version"))
        return f"ONNX Runtime {version} (libPath)" if version else None
    name = _str(ort.get("build_package_name"))
    if name is None:
        distributions = [_dict(d) for d in _list(ort.get("distributions"))]
        name = _str(distributions[0].get("name")) if distributions else None
    build = _str(ort.get("cuda_build_version"))
    providers = [p for p in _list(ort.get("providers_in_build")) if isinstance(p, str)]
    if build:
        flavour = f"CUDA {build} build"
    elif providers and "CUDAExecutionProvider" not in providers:
        flavour = "CPU-only build"
    else:
        flavour = None
    label = f"{name or 'ONNX Runtime'} {version}"
    return f"{label} ({flavour})" if flavour else label


def driver_version(document: dict[str, Any]) -> str | None:
    """The NVIDIA driver version NVML (or /proc) reported, None when there is no driver."""
    driver = _dict(_environment(document).get("driver"))
    return _str(driver.get("driver_version")) or _str(driver.get("proc_driver_version"))


def gpu_names(document: dict[str, Any]) -> tuple[str, ...]:
    """The GPU model names NVML listed."""
    names: list[str] = []
    for gpu in _list(_dict(_environment(document).get("driver")).get("gpus")):
        name = _str(_dict(gpu).get("name"))
        if name:
            names.append(name)
    return tuple(names)


def sees_a_gpu(document: dict[str, Any]) -> bool | None:
    """Whether the tool saw an NVIDIA GPU on the host (NVML listed one); None when not recorded."""
    driver = _environment(document).get("driver")
    if not isinstance(driver, dict):
        return None
    return bool(gpu_names(document)) or bool(_list(driver.get("gpus")))


def stack_combo(document: dict[str, Any]) -> StackCombo:
    """The host's ONNX Runtime / CUDA runtime / cuDNN / driver combination."""
    cudart = _loaded_version(document, "cudart")
    cudnn = _loaded_version(document, "cudnn")
    return StackCombo(
        onnxruntime=onnxruntime_label(document),
        cuda=_cudart_version(cudart) if cudart else None,
        cudnn=_cudnn_version(cudnn) if cudnn else None,
        driver=driver_version(document),
    )
