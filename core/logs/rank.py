"""Adding up the evidence: per-cause tallies, rules over several lines, the machine's facts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.causes import layer_of
from fallback_doctor.core.logs.facts import GPU_PROVIDERS, as_int
from fallback_doctor.core.logs.reader import LogLine
from fallback_doctor.core.logs.results import (
    MAX_EVIDENCE,
    CandidateCause,
    LogFacts,
    QuotedLine,
    sort_candidates,
)
from fallback_doctor.core.model import Layer

# ---------------------------------------------------------------------------------------------
# Aggregation


@dataclass
class Tally:
    per_line: dict[tuple[str, Any, int], float] = field(default_factory=dict)
    evidence: list[QuotedLine] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)

    def add(
        self, key: tuple[str, Any, int], weight: float, line: LogLine, sig_id: str, fields: dict[str, str]
    ) -> None:
        if key not in self.per_line:
            if len(self.evidence) < MAX_EVIDENCE:
                self.evidence.append(QuotedLine.of(line))
            for name, value in fields.items():
                self.fields.setdefault(name, value)
        self.per_line[key] = max(self.per_line.get(key, 0.0), weight)
        if sig_id not in self.signatures:
            self.signatures.append(sig_id)

    def confidence(self) -> float:
        remaining = 1.0
        for weight in self.per_line.values():
            remaining *= 1.0 - min(weight, 0.99)
        return min(0.99, 1.0 - remaining)


def rank(tallies: dict[str, Tally]) -> list[CandidateCause]:
    candidates = [
        CandidateCause(
            cause=cause,
            layer=str(layer_of(cause)),
            confidence=tally.confidence(),
            evidence=tuple(tally.evidence),
            signatures=tuple(tally.signatures),
            fields=dict(tally.fields),
        )
        for cause, tally in tallies.items()
    ]
    return sort_candidates(candidates)


def post_rules(
    tallies: dict[str, Tally],
    facts: LogFacts,
    context_lines: dict[str, list[LogLine]],
) -> None:
    """Rules over several lines: installed packages, provider lists, WSL and containers."""

    def add(cause: str, weight: float, lines: Sequence[LogLine], rule: str) -> None:
        tally = tallies.setdefault(cause, Tally())
        for line in lines[:MAX_EVIDENCE]:
            tally.add((rule, line.text, 1), weight, line, rule, {})

    distributions = set(facts.ort_packages)
    if len(distributions) >= 2:
        add("package_conflict", 0.85, context_lines.get("ort_packages", []), "rule.several_ort_packages")
    if facts.providers is not None and not (set(facts.providers) & GPU_PROVIDERS):
        lines = context_lines.get("providers", [])
        add("ep_not_in_build", 0.55, lines, "rule.providers_without_gpu")
        add("package_conflict", 0.3, lines, "rule.providers_without_gpu")
    device_causes = {"no_gpu_visible", "container_no_device", "driver_missing"}
    if facts.wsl and device_causes & set(tallies):
        # Under WSL the GPU is only reachable through /usr/lib/wsl/lib/libcuda.so: "no device"
        # there means the driver library is wrong or shadowed.
        add("driver_missing", 0.6, context_lines.get("wsl", []), "rule.wsl_no_device")
    if facts.container and device_causes & set(tallies):
        add("container_no_device", 0.5, context_lines.get("container", []), "rule.container_no_device")


def settle_with_machine(
    candidates: Sequence[CandidateCause],
    *,
    cuda_majors_installed: frozenset[int] | set[int] | None = None,
    cudnn_majors_installed: frozenset[int] | set[int] | None = None,
    driver_present: bool | None = None,
) -> tuple[CandidateCause, ...]:
    """Re-rank log candidates with the machine's facts (for the full diagnosis; not wired).

    For a missing CUDA (cuDNN) library of major N: no CUDA (cuDNN) installed at all makes it
    ``*_missing``; another major installed but not N makes it ``*_major_mismatch``; N
    installed means it is there but not on the loader path, which is ``*_missing`` too. A
    driver known to be absent puts ``driver_missing`` first. ``None`` means "not known": the
    log's ranking stands. By hand: ``ldconfig -p | grep -E 'cublas|cudnn'`` and ``nvidia-smi``.
    """
    settled: list[CandidateCause] = []
    installed = {"cuda": cuda_majors_installed, "cudnn": cudnn_majors_installed}
    pairs = {
        "cuda": ("cuda_runtime_missing", "cuda_major_mismatch"),
        "cudnn": ("cudnn_missing", "cudnn_major_mismatch"),
    }
    for candidate in candidates:
        confidence = candidate.confidence
        for family, (missing, mismatch) in pairs.items():
            majors = installed[family]
            if majors is None or candidate.cause not in (missing, mismatch):
                continue
            needed = as_int(candidate.fields.get("needed_major"))
            if not majors or (needed is not None and needed in majors):
                confidence = 0.9 if candidate.cause == missing else 0.15
            elif needed is not None:
                confidence = 0.9 if candidate.cause == mismatch else 0.2
        if driver_present is False and candidate.cause == "driver_missing":
            confidence = 0.95
        if driver_present is True and candidate.cause == "driver_missing":
            confidence = min(confidence, 0.1)
        settled.append(
            CandidateCause(
                candidate.cause,
                candidate.layer,
                confidence,
                candidate.evidence,
                candidate.signatures,
                candidate.fields,
            )
        )
    if driver_present is False and not any(c.cause == "driver_missing" for c in settled):
        settled.append(CandidateCause("driver_missing", str(Layer.DRIVER), 0.95, ()))
    return tuple(sort_candidates(settled))
