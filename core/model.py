"""The result model: findings, their evidence and remediation (frozen, serialisable)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    """How much a finding matters for the GPU path."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


SEVERITY_ORDER: tuple[Severity, ...] = (Severity.ERROR, Severity.WARNING, Severity.INFO)


class Layer(StrEnum):
    """What a support technician fixes; ranked lowest broken layer first (after config)."""

    CONFIG = "config"
    DRIVER = "driver"
    DEVICE = "device"
    CUDA = "cuda"
    CUDNN = "cudnn"
    TENSORRT = "tensorrt"
    PACKAGE = "package"
    LOADER = "loader"
    RESOURCES = "resources"
    PROBE = "probe"
    UNKNOWN = "unknown"


LAYER_ORDER: tuple[Layer, ...] = tuple(Layer)


@dataclass(frozen=True)
class Evidence:
    """One thing we saw: a value, a path, or a quoted line (with file and line number)."""

    label: str
    value: str
    source: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Remediation:
    """The fix: what to do, the exact commands, and how to verify it by hand."""

    summary: str
    commands: tuple[str, ...] = ()
    verify: str | None = None


@dataclass(frozen=True)
class Finding:
    """A checked fact that matters, with a stable dotted id and a cause code."""

    id: str
    cause: str
    layer: Layer
    severity: Severity
    title: str
    detail: str
    evidence: tuple[Evidence, ...] = ()
    remediation: Remediation | None = None
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    """Translations: language code -> {"title": ..., "detail": ..., "remediation": ...}."""


def rank_findings(findings: list[Finding] | tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Order findings as a technician should work through them.

    Configuration findings come first (a GPU that was never asked for explains
    everything). Then errors before warnings before information, and within each,
    the lowest layer first: a broken lower layer breaks everything above it, so the
    top cause is the lowest broken layer. The original order breaks ties.
    """
    indexed = list(enumerate(findings))
    indexed.sort(
        key=lambda pair: (
            0 if pair[1].layer == Layer.CONFIG else 1,
            SEVERITY_ORDER.index(pair[1].severity),
            LAYER_ORDER.index(pair[1].layer),
            pair[0],
        )
    )
    return tuple(finding for _, finding in indexed)


def finding_from_dict(data: dict[str, object]) -> Finding:
    """A finding read back from the report document (a schema-valid ``findings[]`` item)."""
    evidence = data.get("evidence") or []
    remediation = data.get("remediation")
    texts = data.get("texts") or {}
    assert isinstance(evidence, list) and isinstance(texts, dict)
    return Finding(
        id=str(data["id"]),
        cause=str(data["cause"]),
        layer=Layer(str(data["layer"])),
        severity=Severity(str(data["severity"])),
        title=str(data.get("title") or ""),
        detail=str(data.get("detail") or ""),
        evidence=tuple(
            Evidence(
                label=str(item["label"]),
                value=str(item["value"]),
                source=item.get("source"),
                line=item.get("line"),
            )
            for item in evidence
        ),
        remediation=(
            Remediation(
                summary=str(remediation.get("summary") or ""),
                commands=tuple(str(c) for c in remediation.get("commands") or ()),
                verify=remediation.get("verify"),
            )
            if isinstance(remediation, dict)
            else None
        ),
        texts={str(lang): {str(k): str(v) for k, v in words.items()} for lang, words in texts.items()},
    )
