"""Diagnose a log from its text alone: a ranked list of candidate causes with quoted evidence.

How a log is read into causes:

1. Every line is matched against the signature base (resources/signatures/*.json).
2. Facts about the machine are gathered from the whole window (majors named in paths and
   packages, a container, WSL, installed ONNX Runtime packages, the CUDA and cuDNN majors ONNX
   Runtime says its build requires). Causes come from the most recent start-up onwards (the
   whole window when that part shows none).
3. A line gives weights to causes. Missing libraries and Windows loader errors are decided by
   mechanism, not by case: the library's name gives its family (cuda, cudnn, tensorrt, driver,
   zlibwapi, msvc, ort) and its major; a missing CUDA or cuDNN library is both
   ``*_missing`` and ``*_major_mismatch``, ranked by context: another major seen in the log, or
   required by ONNX Runtime, or a soname pinned to a pre-11 minor, or a major older than the
   current one all favour the mismatch; otherwise the library is most likely just absent.
   Generic lines ("Failed to create CUDAExecutionProvider") count only when no line says more.
4. Per cause, one line gives its highest weight; lines add up as independent evidence
   (``1 - Π(1 - w)``). Candidates are sorted by confidence, then lowest layer first.
5. Nothing established: a single ``unknown`` candidate, with the fallback lines as evidence.

From a log alone some causes cannot be told apart; ``settle_with_machine`` takes the machine's
facts (installed CUDA and cuDNN majors, driver present) and re-ranks the candidates. The full
``diagnose`` is meant to call it; it is not wired here.

By hand: ``fallback-doctor explain-log app.log`` (this module), or read the log with
``grep -n -E 'Failed to load|LoadLibrary|CUDA failure|Require cuDNN' app.log``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fallback_doctor.core.causes import layer_of
from fallback_doctor.core.logs.excerpt import has_startup
from fallback_doctor.core.logs.reader import (
    DEFAULT_BUDGET,
    LogLine,
    LogText,
    chronological,
    lines_from_strings,
    lines_from_text,
    read_log,
)
from fallback_doctor.core.logs.signatures import (
    LibraryInfo,
    Match,
    SignatureBase,
    Weighted,
    classify_library,
    load_signatures,
    match_text,
)
from fallback_doctor.core.model import LAYER_ORDER, Evidence, Layer

MAX_EVIDENCE = 6
"""Quoted lines kept per candidate (the first ones seen)."""

_ORT_PACKAGE = re.compile(
    r"\b(onnxruntime(?:[-_](?:gpu|directml|openvino|silicon|rocm|training|qnn|dml|cuda))?)"
    r"(?:==|-|\s{1,40})v?[0-9]",
    re.IGNORECASE,
)
_PROVIDER = re.compile(r"([A-Za-z]{2,40})ExecutionProvider")
_GPU_PROVIDERS = frozenset({"CUDA", "Tensorrt", "TensorRT", "NvTensorRTRTX", "MIGraphX", "ROCM"})


# ---------------------------------------------------------------------------------------------
# Result types


@dataclass(frozen=True)
class QuotedLine:
    """A log line quoted as evidence, with where it is and what role it plays."""

    source: str
    line: int | None
    text: str
    role: str = "cause"
    """cause, fallback, context, hidden or startup."""
    offset: int | None = None
    from_end: int | None = None

    @classmethod
    def of(cls, line: LogLine, role: str = "cause") -> QuotedLine:
        """Quote one log line."""
        return cls(line.source, line.line, line.text, role, line.offset, line.from_end)

    def where(self) -> str:
        """``file:line``, or the position from the end when the line number is not known."""
        return LogLine(self.source, self.text, self.line, self.offset, self.from_end).where()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: file, line, text, role (and the position from the end when needed)."""
        result: dict[str, Any] = {"file": self.source, "line": self.line, "text": self.text}
        result["role"] = self.role
        if self.line is None:
            result["lines_before_end"] = self.from_end
            result["offset"] = self.offset
        return result

    def to_evidence(self) -> Evidence:
        """The result model's Evidence for this quoted line."""
        return Evidence(label=f"log line ({self.role})", value=self.text, source=self.source, line=self.line)


@dataclass(frozen=True)
class CandidateCause:
    """One candidate cause: code, layer, confidence (0..1) and the lines that support it."""

    cause: str
    layer: str
    confidence: float
    evidence: tuple[QuotedLine, ...]
    signatures: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    """What the lines captured: library, family, needed_major, errno, ..."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {cause, layer, confidence, evidence, fields}."""
        return {
            "cause": self.cause,
            "layer": self.layer,
            "confidence": round(self.confidence, 3),
            "evidence": [quote.to_dict() for quote in self.evidence],
            "fields": dict(self.fields),
        }


@dataclass(frozen=True)
class HiddenSignal:
    """A reason the failure's own message is probably not in the log."""

    reason: str
    """log_severity, python_warnings, stderr_discarded or cause_not_logged."""
    says: dict[str, str]
    evidence: tuple[QuotedLine, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "reason": self.reason,
            "says": dict(self.says),
            "evidence": [quote.to_dict() for quote in self.evidence],
        }


@dataclass(frozen=True)
class LogFacts:
    """What the text says about the machine and the build, beside the causes."""

    required_cuda_major: int | None = None
    required_cudnn_major: int | None = None
    cuda_majors_seen: frozenset[int] = frozenset()
    container: bool = False
    wsl: bool = False
    ort_packages: tuple[str, ...] = ()
    providers: tuple[str, ...] | None = None
    fallback: tuple[QuotedLine, ...] = ()
    missing_libraries: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "required_cuda_major": self.required_cuda_major,
            "required_cudnn_major": self.required_cudnn_major,
            "cuda_majors_seen": sorted(self.cuda_majors_seen),
            "container": self.container,
            "wsl": self.wsl,
            "ort_packages": list(self.ort_packages),
            "providers": None if self.providers is None else list(self.providers),
            "fallback_seen": bool(self.fallback),
            "missing_libraries": list(self.missing_libraries),
        }


@dataclass(frozen=True)
class LogDiagnosis:
    """The ranked candidate causes of one log, the facts, and whether the signal was hidden."""

    causes: tuple[CandidateCause, ...]
    facts: LogFacts
    hidden: tuple[HiddenSignal, ...]
    scope: str
    """``latest start-up`` or ``whole text``."""
    startup: QuotedLine | None
    lines_examined: int

    @property
    def top(self) -> CandidateCause:
        """The most likely cause (``unknown`` when nothing could be established)."""
        return self.causes[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON form: causes (most likely first), hidden signals, facts, scope."""
        return {
            "causes": [cause.to_dict() for cause in self.causes],
            "hidden_signal": [signal.to_dict() for signal in self.hidden],
            "facts": self.facts.to_dict(),
            "scope": self.scope,
            "startup": None if self.startup is None else self.startup.to_dict(),
            "lines_examined": self.lines_examined,
        }


# ---------------------------------------------------------------------------------------------
# Facts


def _int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _gather_facts(
    matched: Sequence[tuple[LogLine, list[Match]]],
) -> tuple[LogFacts, dict[str, list[LogLine]]]:
    required_cuda: int | None = None
    required_cudnn: int | None = None
    majors: set[int] = set()
    container = wsl = False
    packages: dict[str, None] = {}
    providers: tuple[str, ...] | None = None
    fallback: list[QuotedLine] = []
    context_lines: dict[str, list[LogLine]] = {}
    for line, matches in matched:
        for match in matches:
            sig = match.signature
            if sig.kind == "requirement":
                context_lines.setdefault("requirement", []).append(line)
                required_cuda = _int(match.fields.get("cuda_major")) or required_cuda
                required_cudnn = _int(match.fields.get("cudnn_major")) or required_cudnn
            elif sig.kind == "fallback":
                fallback.append(QuotedLine.of(line, "fallback"))
            elif sig.kind == "context" and sig.fact:
                context_lines.setdefault(sig.fact, []).append(line)
                if sig.fact == "container":
                    container = True
                elif sig.fact == "wsl":
                    wsl = True
                elif sig.fact == "cuda_major":
                    major = _int(match.fields.get("cuda_major"))
                    if major is not None:
                        majors.add(major)
                elif sig.fact == "ort_packages":
                    for name in _ORT_PACKAGE.findall(line.text):
                        packages[name.lower().replace("_", "-")] = None
                elif sig.fact == "providers":
                    providers = tuple(_PROVIDER.findall(line.text))
    facts = LogFacts(
        required_cuda_major=required_cuda,
        required_cudnn_major=required_cudnn,
        cuda_majors_seen=frozenset(majors),
        container=container,
        wsl=wsl,
        ort_packages=tuple(packages),
        providers=providers,
        fallback=tuple(fallback),
    )
    return facts, context_lines


# ---------------------------------------------------------------------------------------------
# Mechanisms: what a missing library or a loader error means


def family_candidates(
    info: LibraryInfo,
    facts: LogFacts,
    base: SignatureBase,
    *,
    errno: str | None = None,
) -> list[Weighted]:
    """Candidate causes for a library of a known family that could not be loaded.

    CUDA and cuDNN: both the missing and the major-mismatch cause, ranked by context (see the
    module docstring). Other families: their one cause (and its secondary ones).
    """
    family = base.families.get(info.family or "")
    if family is None:
        return [Weighted("windows_dll_load_error", 0.3)] if info.name.lower().endswith(".dll") else []
    if errno == "1455":
        return [Weighted("out_of_memory", 0.5)]
    if errno == "127":
        if family.name in ("cuda", "cudnn"):
            return [Weighted(family.mismatch, 0.6), Weighted("windows_dll_load_error", 0.4)]
        return [Weighted("windows_dll_load_error", 0.6)]
    if family.name not in ("cuda", "cudnn"):
        return [Weighted(family.missing, 0.85), *family.also]
    major = info.stack_major
    seen = facts.cuda_majors_seen if family.name == "cuda" else frozenset()
    required = facts.required_cuda_major if family.name == "cuda" else facts.required_cudnn_major
    if major is None:
        weights = (0.55, 0.4)
    elif seen - {major}:
        weights = (0.4, 0.8)
    elif required is not None and required != major:
        weights = (0.4, 0.7)
    elif info.minor_in_name or (family.current_major is not None and major < family.current_major):
        weights = (0.5, 0.6)
    else:
        weights = (0.65, 0.45)
    result = [Weighted(family.missing, weights[0]), Weighted(family.mismatch, weights[1])]
    if family.name == "cudnn" and info.major == 8 and info.name.lower().endswith(".dll"):
        # cuDNN 8 on Windows loads zlibwapi.dll at run time (compat-reference 3.2): a cuDNN 8
        # DLL that will not load is often that.
        result.append(Weighted("zlibwapi_missing", 0.45))
    return result


def _synthetic(family: str, major: int | None) -> LibraryInfo:
    return LibraryInfo(f"<{family} library>", family, family, major, False, major)


def _scaled(items: Iterable[Weighted], factor: float) -> list[Weighted]:
    return [Weighted(item.cause, item.weight * factor) for item in items]


def loader_candidates(
    errno: str | None, target: str | None, facts: LogFacts, base: SignatureBase
) -> list[Weighted]:
    """Candidate causes for a Windows loader error number on a target DLL (or module)."""
    table = base.tables.get("windows_errors", {})
    if errno is not None and isinstance(table.get(errno), list):
        return [Weighted(str(item["cause"]), float(item["weight"])) for item in table[errno]]
    info = classify_library(target, base) if target else None
    family = info.family if info else None
    if errno in (None, "126"):
        if info is None or family == "ort_provider":
            if target and "tensorrt" in target.lower():
                return [Weighted("tensorrt_missing", 0.6), Weighted("cuda_runtime_missing", 0.3)]
            cuda = family_candidates(_synthetic("cuda", facts.required_cuda_major), facts, base)
            cudnn = family_candidates(_synthetic("cudnn", facts.required_cudnn_major), facts, base)
            return [
                *_scaled(cuda, 0.75),
                *_scaled(cudnn, 0.5),
                Weighted("windows_dll_load_error", 0.25),
            ]
        if family == "ort_core":
            return [Weighted("windows_dll_load_error", 0.6), Weighted("package_conflict", 0.2)]
        if family is not None:
            return family_candidates(info, facts, base, errno="126")
        return [Weighted("windows_dll_load_error", 0.5)]
    if errno == "127":
        if info is not None:
            return family_candidates(info, facts, base, errno="127")
        return [Weighted("windows_dll_load_error", 0.6)]
    return [Weighted("windows_dll_load_error", 0.4)]


def _errno_from_message(message: str, base: SignatureBase) -> str | None:
    lowered = message.lower()
    for number, phrases in base.tables.get("windows_messages", {}).items():
        if number.startswith("_") or not isinstance(phrases, list):
            continue
        if any(str(phrase).lower() in lowered for phrase in phrases):
            return number
    return None


def _lookup(match: Match, base: SignatureBase) -> list[Weighted]:
    spec = match.signature.lookup
    key = match.fields.get(spec.get("field", ""))
    table = base.tables.get(spec.get("table", ""), {})
    if key is None:
        return []
    folded = {str(k).lower(): v for k, v in table.items()}
    value = folded.get(key.lower())
    then = spec.get("then")
    if then is not None and isinstance(value, str):
        folded_then = {str(k).lower(): v for k, v in base.tables.get(then, {}).items()}
        value = folded_then.get(value.lower())
    if not isinstance(value, list):
        return []
    return [Weighted(str(item["cause"]), float(item["weight"])) for item in value]


def contributions(
    match: Match, facts: LogFacts, base: SignatureBase
) -> tuple[list[Weighted], dict[str, str]]:
    """The weights one matched signature gives to causes, and the fields worth keeping."""
    sig = match.signature
    fields = dict(match.fields)
    if sig.kind == "direct":
        if sig.id == "ort.provider_not_available" and fields.get("provider", "").startswith("Tensorrt"):
            return [Weighted("ep_not_in_build", 0.6), Weighted("tensorrt_missing", 0.3)], fields
        return list(sig.candidates), fields
    if sig.kind == "lookup":
        return _lookup(match, base), fields
    if sig.kind in ("missing_library", "library_version"):
        info = classify_library(fields.get("lib", ""), base)
        fields.update(library=info.name, family=info.family or "unknown")
        if info.stack_major is not None:
            fields["needed_major"] = str(info.stack_major)
        if sig.kind == "library_version":
            family = base.families.get(info.family or "")
            if family is not None and family.name in ("cuda", "cudnn"):
                return [Weighted(family.mismatch, 0.7)], fields
            return [Weighted("windows_dll_load_error", 0.4)], fields
        return family_candidates(info, facts, base, errno=fields.get("errno")), fields
    if sig.kind == "win_loader":
        errno = fields.get("errno") or _errno_from_message(fields.get("message", ""), base)
        target = fields.get("target", "").strip('"') or None
        if errno:
            fields["errno"] = errno
        return loader_candidates(errno, target, facts, base), fields
    if sig.kind == "requirement":
        cuda = family_candidates(_synthetic("cuda", facts.required_cuda_major), facts, base)
        cudnn = family_candidates(_synthetic("cudnn", facts.required_cudnn_major), facts, base)
        return [*_scaled(cuda, 0.5), *_scaled(cudnn, 0.4)], fields
    return [], fields


# ---------------------------------------------------------------------------------------------
# Aggregation


@dataclass
class _Tally:
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


def _rank(tallies: dict[str, _Tally]) -> list[CandidateCause]:
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


def sort_candidates(candidates: Iterable[CandidateCause]) -> list[CandidateCause]:
    """Most confident first; equal confidence: the lowest layer first."""

    def key(candidate: CandidateCause) -> tuple[float, int]:
        try:
            layer_index = LAYER_ORDER.index(Layer(candidate.layer))
        except ValueError:
            layer_index = len(LAYER_ORDER)
        return (-round(candidate.confidence, 3), layer_index)

    return sorted(candidates, key=key)


def _post_rules(
    tallies: dict[str, _Tally],
    facts: LogFacts,
    context_lines: dict[str, list[LogLine]],
) -> None:
    """Rules over several lines: installed packages, provider lists, WSL and containers."""

    def add(cause: str, weight: float, lines: Sequence[LogLine], rule: str) -> None:
        tally = tallies.setdefault(cause, _Tally())
        for line in lines[:MAX_EVIDENCE]:
            tally.add((rule, line.text, 1), weight, line, rule, {})

    distributions = set(facts.ort_packages)
    if len(distributions) >= 2:
        add("package_conflict", 0.85, context_lines.get("ort_packages", []), "rule.several_ort_packages")
    if facts.providers is not None and not (set(facts.providers) & _GPU_PROVIDERS):
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


def _diagnose(lines: Sequence[LogLine], base: SignatureBase, scope_to_latest_start: bool) -> LogDiagnosis:
    matched = [(line, match_text(line.text, base)) for line in lines]
    facts, context_lines = _gather_facts(matched)
    start: int | None = None
    if scope_to_latest_start:
        for index in range(len(matched) - 1, -1, -1):
            if any(match.signature.kind == "startup" for match in matched[index][1]):
                start = index
                break
    hidden = detect_hidden_signal(lines, matched=matched)

    def tally_from(first: int) -> tuple[dict[str, _Tally], dict[str, _Tally], list[str]]:
        specific: dict[str, _Tally] = {}
        generic: dict[str, _Tally] = {}
        missing: list[str] = []
        for index in range(first, len(matched)):
            line, matches = matched[index]
            for match in matches:
                weights, fields = contributions(match, facts, base)
                if "library" in fields and match.signature.kind == "missing_library":
                    missing.append(fields["library"])
                target = generic if match.signature.generic else specific
                # The same message repeated is one piece of evidence, not many: key by the
                # signature and what it captured, not by the line.
                key = (match.signature.id, repr(sorted(match.fields.items())), 0)
                for item in weights:
                    target.setdefault(item.cause, _Tally()).add(
                        key, item.weight, line, match.signature.id, fields
                    )
        return specific, generic, missing

    scope = "whole text"
    startup_quote: QuotedLine | None = None
    specific, generic, missing = tally_from(start or 0)
    if start is not None:
        if specific or generic:
            scope = "latest start-up"
            startup_quote = QuotedLine.of(lines[start], "startup")
        else:
            specific, generic, missing = tally_from(0)
    tallies = specific or generic
    _post_rules(tallies, facts, context_lines)
    facts = replace(facts, missing_libraries=tuple(dict.fromkeys(missing)))
    ranked = _rank(tallies)
    if not ranked:
        ranked = [CandidateCause("unknown", str(Layer.UNKNOWN), 0.0, facts.fallback[:MAX_EVIDENCE])]
        hidden = detect_hidden_signal(lines, matched=matched, cause_found=False)
    else:
        top = ranked[0]
        context = [QuotedLine.of(line, "context") for line in context_lines.get("requirement", [])]
        if top.cause not in (
            "cuda_runtime_missing",
            "cuda_major_mismatch",
            "cudnn_missing",
            "cudnn_major_mismatch",
        ):
            context = []
        seen = {(e.source, e.line, e.offset) for e in top.evidence}
        extra = tuple(q for q in (*context[-1:], *facts.fallback) if (q.source, q.line, q.offset) not in seen)
        ranked[0] = CandidateCause(
            top.cause,
            top.layer,
            top.confidence,
            top.evidence + extra[: max(0, MAX_EVIDENCE - len(top.evidence))],
            top.signatures,
            top.fields,
        )
    return LogDiagnosis(
        causes=tuple(ranked),
        facts=facts,
        hidden=hidden,
        scope=scope,
        startup=startup_quote,
        lines_examined=len(lines),
    )


# ---------------------------------------------------------------------------------------------
# Public entry points


def _as_lines(lines: Sequence[LogLine] | Sequence[str] | str, source: str) -> list[LogLine]:
    if isinstance(lines, str):
        return lines_from_text(lines, source)
    items = list(lines)
    if all(isinstance(item, LogLine) for item in items):
        return [item for item in items if isinstance(item, LogLine)]
    return lines_from_strings([str(item) for item in items], source)


def explain_text(
    lines: Sequence[LogLine] | Sequence[str] | str,
    *,
    source: str = "<text>",
    scope_to_latest_start: bool = True,
) -> LogDiagnosis:
    """Diagnose log lines (``LogLine``s, strings, or one pasted text) from the text alone.

    Returns the ranked candidate causes (``unknown`` when nothing can be established), the
    facts the text states, and whether the signal was probably hidden. By hand:
    ``fallback-doctor explain-log FILE``.
    """
    return _diagnose(_as_lines(lines, source), load_signatures(), scope_to_latest_start)


def explain_texts(texts: Sequence[LogText]) -> LogDiagnosis:
    """Diagnose what ``read_log`` returned (a log and its rotations, newest first)."""
    return explain_text(list(chronological(list(texts))))


def explain_file(path: str | os.PathLike[str], budget: int = DEFAULT_BUDGET) -> LogDiagnosis:
    """Read a log's end (and rotations while no start-up is found) and diagnose it.

    Raises ``LogReadError`` when the file cannot be read. By hand: ``tail -c 8M FILE``.
    """
    return explain_texts(read_log(path, budget, stop_when=has_startup))


def detect_hidden_signal(
    lines: Sequence[LogLine] | Sequence[str] | str,
    *,
    matched: Sequence[tuple[LogLine, list[Match]]] | None = None,
    cause_found: bool | None = None,
) -> tuple[HiddenSignal, ...]:
    """Say when the failure's own message was probably kept out of the log, from the text.

    Shown by the text: ONNX Runtime's log severity raised above WARNING (``log_severity_level``
    3 or 4, ``set_default_logger_severity(3)``, ``ORT_LOG_LEVEL``), Python warnings filtered,
    standard error sent to /dev/null (or NUL, or ``StandardError=null``). Inferred: the log
    shows a fallback to the CPU but no line says why (``cause_not_logged``). By hand:
    ``grep -n -E 'log_severity_level|filterwarnings|/dev/null' app.log``.
    """
    log_lines = _as_lines(lines, "<text>")
    if matched is None:
        base = load_signatures()
        matched = [(line, match_text(line.text, base)) for line in log_lines]
    found: dict[str, tuple[dict[str, str], list[QuotedLine]]] = {}
    fallback: list[QuotedLine] = []
    any_cause = False
    for line, matches in matched:
        for match in matches:
            sig = match.signature
            if sig.kind == "hidden" and sig.fact:
                entry = found.setdefault(sig.fact, (sig.says, []))
                if len(entry[1]) < MAX_EVIDENCE:
                    entry[1].append(QuotedLine.of(line, "hidden"))
            elif sig.kind == "fallback":
                fallback.append(QuotedLine.of(line, "fallback"))
            elif sig.kind in (
                "direct",
                "lookup",
                "missing_library",
                "library_version",
                "win_loader",
                "requirement",
            ):
                any_cause = True
    if cause_found is not None:
        any_cause = cause_found
    signals = [HiddenSignal(reason, says, tuple(quotes)) for reason, (says, quotes) in found.items()]
    if fallback and not any_cause:
        signals.append(
            HiddenSignal(
                "cause_not_logged",
                {
                    "en": "The log shows a fallback to the CPU but no line says why: the "
                    "reason was probably logged at a level that is filtered, or on another "
                    "stream.",
                    "ko": "로그에 CPU로의 대체는 보이지만 그 이유를 말하는 줄이 없습니다. 이유가 "
                    "걸러지는 수준으로 기록되었거나 다른 출력 스트림에 기록되었을 가능성이 큽니다.",
                },
                tuple(fallback[:MAX_EVIDENCE]),
            )
        )
    return tuple(signals)


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
            needed = _int(candidate.fields.get("needed_major"))
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
