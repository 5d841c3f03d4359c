"""Adding up the evidence: per-cause tallies, rules over several lines, the machine's facts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.model.causes import layer_of
from fallback_doctor.core.model.result import Layer
from fallback_doctor.core.readers.logs.facts import as_int
from fallback_doctor.core.readers.logs.lines import LogLine
from fallback_doctor.core.readers.logs.mechanisms import contributions
from fallback_doctor.core.readers.logs.results import (
    MAX_EVIDENCE,
    CandidateCause,
    LogFacts,
    QuotedLine,
    sort_candidates,
)
from fallback_doctor.core.readers.logs.signatures import Match, SignatureBase, Weighted
from fallback_doctor.core.readers.logs.versions import version_rules

# ---------------------------------------------------------------------------------------------
# Aggregation


@dataclass
class Tally:
    per_line: dict[tuple[str, Any, int], float] = field(default_factory=dict)
    evidence: list[QuotedLine] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    scale: float = 1.0

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
        """Independent lines add up: ``1 - prod(1 - w)``, capped, times ``scale``."""
        remaining = 1.0
        for weight in self.per_line.values():
            remaining *= 1.0 - min(weight, 0.99)
        return min(0.99, 1.0 - remaining) * self.scale


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


def tally_lines(
    matched: Sequence[tuple[LogLine, list[Match]]], facts: LogFacts, base: SignatureBase
) -> tuple[dict[str, Tally], dict[str, Tally], list[str]]:
    """Specific and generic tallies of the matched lines, and the libraries named as missing.

    One line is one piece of evidence per cause: when several signatures match it, the
    strongest counts. The same message repeated is one piece too: a line is keyed by its
    signature and what it captured, not by its position.
    """
    specific: dict[str, Tally] = {}
    generic: dict[str, Tally] = {}
    missing: list[str] = []
    for line, matches in matched:
        best: dict[tuple[str, bool], tuple[float, tuple[str, Any, int], str, dict[str, str]]] = {}
        innermost = {m.fields.get("lib", "").lower() for m in matches if m.signature.innermost}
        for match in matches:
            weights, fields = contributions(match, facts, base, line.text)
            outer = match.signature.kind == "missing_library" and not match.signature.innermost
            if innermost and outer and match.fields.get("lib", "").lower() not in innermost:
                # "X could not load. Error: Y: cannot open": Y is missing, X only depends on it.
                weights = [Weighted(item.cause, item.weight * 0.4) for item in weights]
            if "library" in fields and match.signature.kind == "missing_library":
                missing.append(fields["library"])
            key = (match.signature.id, repr(sorted(match.fields.items())), 0)
            for item in weights:
                slot = (item.cause, match.signature.generic)
                if slot not in best or item.weight > best[slot][0]:
                    best[slot] = (item.weight, key, match.signature.id, fields)
        for (cause, is_generic), (weight, key, sig_id, fields) in best.items():
            target = generic if is_generic else specific
            target.setdefault(cause, Tally()).add(key, weight, line, sig_id, fields)
    return specific, generic, missing


_AFTER_LOADING = frozenset({"out_of_memory", "unsupported_arch", "tensorrt_missing"})
_STACK_LAYERS = frozenset({"driver", "device", "cuda", "cudnn", "tensorrt", "loader", "resources"})


def post_rules(
    tallies: dict[str, Tally],
    facts: LogFacts,
    context_lines: dict[str, list[LogLine]],
) -> None:
    """Rules over several lines: installed packages, provider lists, WSL, containers, versions."""

    def add(cause: str, weight: float, lines: Sequence[LogLine], rule: str) -> None:
        tally = tallies.setdefault(cause, Tally())
        for line in lines[:MAX_EVIDENCE] or [LogLine("<facts>", rule)]:
            tally.add((rule, line.text, 1), weight, line, rule, {})

    if len(set(facts.ort_packages)) >= 2:
        add("package_conflict", 0.85, context_lines.get("ort_packages", []), "rule.several_ort_packages")
    stack_failure = any(str(layer_of(cause)) in _STACK_LAYERS for cause in tallies)
    if facts.providers is not None and not facts.gpu_provider_listed and not stack_failure:
        # A CPU-only build never tries to load a GPU provider's libraries: a list without a
        # GPU provider after such a failure is the session's result, not the build's.
        # Without one, the onnxruntime imported has no GPU provider: the only package is a
        # CPU build, or a CPU package installed beside the GPU one overwrote its files. The
        # list alone does not tell them apart (``pip list | grep -i onnxruntime`` does).
        lines = context_lines.get("providers", [])
        add("ep_not_in_build", 0.6, lines, "rule.providers_without_gpu")
        add("package_conflict", 0.45, lines, "rule.providers_without_gpu")
    if facts.wsl and ({"no_gpu_visible", "driver_missing", "container_no_device"}) & set(tallies):
        # Under WSL the GPU is only reachable through /usr/lib/wsl/lib/libcuda.so: "no device"
        # there means the driver library is wrong or shadowed.
        add("driver_missing", 0.6, context_lines.get("wsl", []), "rule.wsl_no_device")
    driver_missing = tallies.get("driver_missing")
    if facts.container and (
        "no_gpu_visible" in tallies or (driver_missing is not None and driver_missing.confidence() >= 0.5)
    ):
        add("container_no_device", 0.5, context_lines.get("container", []), "rule.container_no_device")
    version_rules(tallies, facts, context_lines, add)
    if facts.gpu_active and not facts.fallback:
        # ONNX Runtime is placing nodes on the GPU provider: a load-time failure the log seems
        # to show did not stop it (crying wolf is worse than saying little). What fails only
        # after the provider loaded (memory, kernels, TensorRT beside CUDA) still counts.
        for cause, tally in tallies.items():
            if cause not in _AFTER_LOADING:
                tally.scale = 0.5


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
