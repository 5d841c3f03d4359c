"""The report document as a typed, read-only view: parsed once, taken by every renderer.

``view_of(document)`` reads a schema-valid report document (what ``diagnose --json`` prints,
docs/report-schema.md) once into frozen dataclasses; the text report, report.html, the wizard's
pages, the fleet summary and the gui read those fields instead of ``dict.get`` chains. It is as
tolerant as the readers were: a part that is missing or of the wrong type (an older bundle, one
edited by hand) reads as empty, never as an error. By hand: ``jq '.findings[] | {id, severity}'
report.json``.

The words of a finding and of an evidence item in a language are chosen in ONE place each
(:func:`finding_words`, :func:`evidence_words`), used by every renderer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

from fallback_doctor.core.language import evidence_text, texts

_EMPTY: Mapping[str, object] = {}

JsonDocument: TypeAlias = dict[str, Any]
"""The report document as JSON (what ``diagnose --json`` prints and a bundle's report.json holds):
its leaves are JSON values, so ``Any`` here is JSON's, named once; readers take :class:`Report`."""


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else {} (the one defensive reader of a document's part)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a JSON array, else []."""
    return value if isinstance(value, list) else []


def as_number(value: object) -> float | None:
    """``value`` when it is a JSON number (an int or a float, not a bool), else None."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: object) -> str:
    """A string field ("" when missing)."""
    return "" if value is None else str(value)


def _string(value: object) -> str:
    """A string field that must be one ("" for anything else: a number where a word belongs)."""
    return value if isinstance(value, str) else ""


def _optional(value: object) -> str | None:
    """A string field that may be absent (None), as the schema's ``["string", "null"]``."""
    return None if value is None or value == "" else str(value)


def _line(value: object) -> int | None:
    """A line number (a positive int; anything else: None)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@dataclass(frozen=True)
class Evidence:
    """One evidence item of a finding: what was seen (``label``: ``value``), where (``source``:``line``)."""

    label: str
    value: str
    source: str | None
    line: int | None
    raw: Mapping[str, object]


@dataclass(frozen=True)
class Remediation:
    """A finding's fix: the summary, the structured steps (core/document/remedy.py), the script, how to
    verify."""

    summary: str
    commands: tuple[str, ...]
    verify: str | None
    steps: tuple[Mapping[str, Any], ...]
    script: str
    raw: Mapping[str, object]


@dataclass(frozen=True)
class Finding:
    """One ranked finding of the document (core/judgement/judge.py ranked them; nothing re-orders
    them here)."""

    id: str
    cause: str
    layer: str
    severity: str
    role: str | None
    title: str
    detail: str
    evidence: tuple[Evidence, ...]
    remediation: Remediation
    texts: Mapping[str, Mapping[str, object]]
    raw: Mapping[str, object]


@dataclass(frozen=True)
class Session:
    """One measured ONNX Runtime session (the CPU baseline's, a GPU strategy's): its providers, how
    its nodes were placed, its latency (``latency``: p50_ms, runs…), the outputs compared, its error."""

    active_providers: tuple[str, ...]
    nodes_per_provider: Mapping[str, object]
    latency: Mapping[str, object]
    comparison: Mapping[str, object]
    ort_messages: tuple[str, ...]
    error: str | None
    raw: Mapping[str, object]

    @property
    def runs(self) -> int | None:
        """How many timed runs the latency is made of (None: not measured)."""
        runs = self.latency.get("runs")
        return runs if isinstance(runs, int) and not isinstance(runs, bool) else None


@dataclass(frozen=True)
class Strategy:
    """One way the GPU retry tried the GPU ("as_is", "preload_dlls"…): how far it got, or why skipped."""

    name: str
    stage: str
    skipped: str | None
    gpu: Session
    raw: Mapping[str, object]


def session_of(value: object) -> Session:
    """A measured session read from the document (tolerant: a non-object is an unmeasured one)."""
    data = as_dict(value)
    return Session(
        active_providers=tuple(str(p) for p in as_list(data.get("active_providers"))),
        nodes_per_provider=as_dict(data.get("nodes_per_provider")),
        latency=as_dict(data.get("latency")),
        comparison=as_dict(data.get("comparison")),
        ort_messages=tuple(str(m) for m in as_list(data.get("ort_messages"))),
        error=_optional(data.get("error")),
        raw=data,
    )


def strategy_of(value: object) -> Strategy:
    """A GPU strategy read from the document."""
    data = as_dict(value)
    return Strategy(
        name=_text(data.get("name")),
        stage=_text(data.get("stage")),
        skipped=_optional(data.get("skipped")),
        gpu=session_of(data.get("gpu")),
        raw=data,
    )


@dataclass(frozen=True)
class Inference:
    """The document's test inference: the model, the CPU baseline, the GPU retry, the recorded series."""

    skipped: str | None
    model: Mapping[str, object]
    cpu_baseline: Mapping[str, object]
    gpu_retry: Mapping[str, object]
    verdict: str | None
    gpu_verified: bool
    series: Mapping[str, object]
    cpu: Session
    """The CPU baseline's session (unmeasured where the step has not run)."""
    strategies: tuple[Strategy, ...]
    """The GPU retry's strategies, in the order they were tried."""
    raw: Mapping[str, object]

    @property
    def as_is(self) -> Strategy:
        """The strategy "as the application runs" (the last one so named; empty where none ran)."""
        found = [s for s in self.strategies if s.name == "as_is"]
        return found[-1] if found else strategy_of(None)


@dataclass(frozen=True)
class Report:
    """The whole document, read once. ``raw`` is the document itself (for the JSON, the bundle)."""

    schema_version: int | None
    created: str
    verdict: str
    quick: bool
    target: Mapping[str, object]
    findings: tuple[Finding, ...]
    first_cause: str | None
    environment: Mapping[str, Mapping[str, object]]
    inference: Inference
    raw: Mapping[str, object]

    def part(self, name: str) -> Mapping[str, Any]:
        """One part of the environment snapshot ({} when it was not collected): "target", "log"…"""
        return self.environment.get(name, _EMPTY)

    def has_part(self, name: str) -> bool:
        """Whether the environment snapshot recorded ``name`` (as an object; null: not recorded)."""
        return name in self.environment

    @property
    def target_kind(self) -> str:
        """The target's kind ("python", "bareun", "native", "log"…): the document's, else the snapshot's."""
        return _text(self.target.get("kind") or self.part("target").get("kind"))


def evidence_of(item: object) -> Evidence:
    """One evidence item read from the document (tolerant: a non-object is an empty item)."""
    data = as_dict(item)
    return Evidence(
        label=_text(data.get("label")),
        value=_text(data.get("value")),
        source=_optional(data.get("source")),
        line=_line(data.get("line")),
        raw=data,
    )


def remediation_of(value: object) -> Remediation:
    """A finding's remediation read from the document."""
    data = as_dict(value)
    return Remediation(
        summary=_text(data.get("summary")),
        commands=tuple(str(c) for c in as_list(data.get("commands"))),
        verify=_optional(data.get("verify")),
        steps=tuple(s for s in as_list(data.get("steps")) if isinstance(s, dict)),
        script=_text(data.get("script")),
        raw=data,
    )


def finding_of(value: object) -> Finding:
    """One finding read from the document."""
    data = as_dict(value)
    role = data.get("role")
    return Finding(
        id=_text(data.get("id")),
        cause=_text(data.get("cause")),
        layer=_text(data.get("layer")),
        severity=_text(data.get("severity")),
        role=None if role is None else str(role),
        title=_text(data.get("title")),
        detail=_text(data.get("detail")),
        evidence=tuple(evidence_of(e) for e in as_list(data.get("evidence"))),
        remediation=remediation_of(data.get("remediation")),
        texts={str(k): v for k, v in as_dict(data.get("texts")).items() if isinstance(v, dict)},
        raw=data,
    )


def inference_of(value: object) -> Inference:
    """The test inference read from the document ({} parts where a step has not run)."""
    data = as_dict(value)
    return Inference(
        skipped=_optional(data.get("skipped")),
        model=as_dict(data.get("model")),
        cpu_baseline=as_dict(data.get("cpu_baseline")),
        gpu_retry=as_dict(data.get("gpu_retry")),
        verdict=_optional(data.get("verdict")),
        gpu_verified=bool(data.get("gpu_verified")),
        series=as_dict(data.get("series")),
        cpu=session_of(as_dict(data.get("cpu_baseline")).get("session")),
        strategies=tuple(strategy_of(s) for s in as_list(as_dict(data.get("gpu_retry")).get("strategies"))),
        raw=data,
    )


Document: TypeAlias = Report | Mapping[str, Any] | None
"""What a renderer takes: the view, or a document it reads once into the view (the tests pass JSON)."""


def view_of(document: Document) -> Report:
    """The typed view of ``document``, parsed once (a view is returned as it is)."""
    if isinstance(document, Report):
        return document
    data: Mapping[str, object] = document if isinstance(document, Mapping) else {}
    version = data.get("schema_version")
    first = data.get("first_cause")
    return Report(
        schema_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        created=_string(data.get("created")),
        verdict=_string(data.get("verdict")),
        quick=bool(data.get("quick")),
        target=as_dict(data.get("target")),
        findings=tuple(finding_of(f) for f in as_list(data.get("findings"))),
        first_cause=first if isinstance(first, str) and first else None,
        environment={str(k): v for k, v in as_dict(data.get("environment")).items() if isinstance(v, dict)},
        inference=inference_of(data.get("inference")),
        raw=data,
    )


def finding_words(finding: Finding | Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail, fix and verify line in ``lang`` (English where the language is
    missing): the one place every renderer takes a finding's words from, chosen now from its text
    key and parameters (core/language/texts.py ``finding_words``)."""
    finding = finding if isinstance(finding, Finding) else finding_of(finding)
    return texts.finding_words(finding.raw, lang)


class EvidenceWords(NamedTuple):
    """An evidence item in a language: its label, its value and its source (None or "": none
    recorded; renderers test it for truth)."""

    label: str
    value: str
    source: str | None


def evidence_words(item: Evidence, lang: str) -> EvidenceWords:
    """An evidence item's label, value and source in ``lang``: the one place every renderer takes
    an evidence item's words from (said by catalogue ids and parameters, core/language/evidence_text.py)."""
    label, value, source = evidence_text.evidence_words(item.raw, lang)
    return EvidenceWords(label, value, source or None)
