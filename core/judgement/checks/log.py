"""The application's log: its most likely cause, settled with the machine's facts, and hidden signals.

The log alone cannot always tell a missing CUDA runtime from one of another major
(``libcublasLt.so.11`` not found); the machine can: with CUDA 12 installed it is a major
mismatch, with no CUDA at all a missing runtime. The CUDA and cuDNN majors installed come from
the library inventory (and what the running server mapped), the driver from NVML.

Duplicates: a static check that finds the same cause is the better finding (it knows the
paths); ``merge_log_findings`` then adds the log's quoted lines to it as evidence and drops the
log's own finding. The diagnosis calls it after the checks.

By hand: ``fallback-doctor explain-log FILE``, ``ldconfig -p | grep -E 'cublas|cudnn'``,
``nvidia-smi``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from fallback_doctor.core.judgement.checks.driver import driver_present
from fallback_doctor.core.language.evidence_text import log_line_evidence, places, said
from fallback_doctor.core.language.texts import label_ref, make_finding, text_ref
from fallback_doctor.core.model.causes import Cause, layer_of
from fallback_doctor.core.model.facts.logs import LogCandidate, LogFacts, LogQuote
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Evidence, Finding, Layer, Severity, Words
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.loader import names
from fallback_doctor.core.readers.logs.separators import separator_key
from fallback_doctor.core.readers.targets.registry import find_profile

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec("log.unreadable", Cause.COLLECTION_FAILED, Layer.PROBE, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("log.clean", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("log.fell_back", Cause.UNKNOWN, Layer.UNKNOWN, Severity.WARNING, role=Role.CONTEXT),
    # Carries the log's top cause, found at run time (its layer follows the cause).
    FindingSpec("log.cause", None, None, (Severity.ERROR, Severity.WARNING), role=Role.CAUSE),
    FindingSpec("log.outdated", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.log_severity", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT),
    FindingSpec("log.hidden.python_warnings", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT),
    FindingSpec(
        "log.hidden.stderr_discarded", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT
    ),
    FindingSpec(
        "log.hidden.cause_not_logged", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT
    ),
    FindingSpec("log.hidden.other", Cause.UNKNOWN, Layer.UNKNOWN, Severity.INFO, role=Role.CONTEXT),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


LOG_CAUSE_ID = "log.cause"
CONFIRMED_LABEL = "log line (confirms)"
_HIDDEN_IDS = {
    "log_severity": "log.hidden.log_severity",
    "python_warnings": "log.hidden.python_warnings",
    "stderr_discarded": "log.hidden.stderr_discarded",
    "cause_not_logged": "log.hidden.cause_not_logged",
}
_PAIRS = {
    "cuda": ("cuda_runtime_missing", "cuda_major_mismatch"),
    "cudnn": ("cudnn_missing", "cudnn_major_mismatch"),
}


# -- machine facts ---------------------------------------------------------------------------------


def installed_majors(snapshot: EnvironmentSnapshot) -> tuple[frozenset[int] | None, frozenset[int] | None]:
    """The CUDA and cuDNN majors on this machine (library inventory + what the server mapped).

    None for a family when the libraries were not collected (then the log's ranking stands).
    By hand: ``ldconfig -p | grep -E 'libcudart|libcublas|libcudnn'``.
    """
    libraries = snapshot.libraries
    process = snapshot.process
    if libraries is None and (process is None or not process.maps_read):
        return None, None
    files: list[str] = [copy.name for copy in libraries.inventory] if libraries else []
    if process is not None:
        files.extend(lib.name for lib in process.mapped_libraries)
    cuda: set[int] = set()
    cudnn: set[int] = set()
    for name in files:
        if names.is_cuda_runtime(name):
            major = names.cuda_major_of_name(name)
            if major is not None:
                cuda.add(major)
        elif names.is_cudnn(name):
            parsed = names.parse_library_name(name)
            if parsed is not None and parsed.major is not None:
                cudnn.add(parsed.major)
    return frozenset(cuda), frozenset(cudnn)


def _log_read_alone(snapshot: EnvironmentSnapshot) -> bool:
    """A target whose evidence comes from elsewhere (``--target log``, TargetProfile.inspects_machine
    False): the log is diagnosed from its text; this machine is not its own."""
    profile = find_profile(snapshot.target.kind) if snapshot.target is not None else None
    return profile is not None and not profile.inspects_machine


def machine_driver(snapshot: EnvironmentSnapshot) -> bool | None:
    """True: a driver answered; False: NVML found no driver library; None: not known."""
    if snapshot.driver is None and snapshot.native is None:
        return None
    if driver_present(snapshot):
        return True
    if snapshot.driver is not None and snapshot.driver.nvml_status == "library_not_found":
        return False
    return None


def settled_candidates(snapshot: EnvironmentSnapshot, log: LogFacts) -> tuple[LogCandidate, ...]:
    """The log's candidates re-ranked with the machine's facts (core/logs ``settle_with_machine``)."""
    from fallback_doctor.core.readers.collect.log import as_candidate_cause, candidate_of
    from fallback_doctor.core.readers.logs.diagnose_log import settle_with_machine

    cuda, cudnn = installed_majors(snapshot)
    settled = settle_with_machine(
        [as_candidate_cause(candidate) for candidate in log.causes],
        cuda_majors_installed=cuda,
        cudnn_majors_installed=cudnn,
        driver_present=machine_driver(snapshot),
    )
    return tuple(candidate_of(candidate) for candidate in settled)


# -- texts -----------------------------------------------------------------------------------------


def _cause_words(cause: str, part: str) -> dict[str, Any] | str:
    """A cause's title, explanation or fix as a parameter: its label, put in a language where
    shown (resources/texts/<lang>/labels/log_causes.json); the title falls back to the code."""
    from fallback_doctor.core.readers.logs.separators import cause_key

    key = cause_key(cause, part)
    return label_ref(key) if key else (cause if part == "title" else "")


def _phrase(key: str, params: dict[str, Any]) -> dict[str, Any]:
    """One of log.cause's phrases (its wordings, the machine's facts) as a parameter."""
    return text_ref(LOG_CAUSE_ID, params, part=key)


def _join(value: Any) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(str(item) for item in sorted(value)) if value else "-"
    return str(value)


def _machine_key(candidate: LogCandidate, cuda: frozenset[int] | None, cudnn: frozenset[int] | None) -> str:
    for family, (missing, mismatch) in _PAIRS.items():
        if candidate.cause not in (missing, mismatch):
            continue
        majors = cuda if family == "cuda" else cudnn
        if majors is None:
            return "machine_unknown"
        needed = candidate.fields.get("needed_major")
        if not majors:
            return "machine_none"
        if needed is not None and needed.isdigit() and int(needed) in majors:
            return "machine_same"
        return "machine_other"
    return ""


def _finding(
    finding_id: str,
    cause: str,
    layer: Layer,
    severity: Severity,
    params: dict[str, Any],
    evidence: tuple[Evidence, ...],
) -> Finding:
    """make_finding: the log's words are keys and parameters (a cause's words are labels)."""
    return make_finding(finding_id, cause, layer, severity, params=params, evidence=evidence)


def quote_evidence(quote: LogQuote, role: str | None = None) -> Evidence:
    """A quoted log line as evidence, with its file and line number (``role``: instead of the quote's)."""
    return log_line_evidence(role or quote.role, quote.text, quote.file, quote.line)


# -- the checks ------------------------------------------------------------------------------------


def _ranked_for_finding(
    snapshot: EnvironmentSnapshot, log: LogFacts
) -> tuple[tuple[LogCandidate, ...], frozenset[int] | None, frozenset[int] | None]:
    """The log's candidates for its finding (the quoted one first) and the majors that settled them."""
    cuda, cudnn = installed_majors(snapshot)
    if _log_read_alone(snapshot):
        # A log handed over on its own may come from another machine: this machine's facts
        # do not settle it (and are not claimed to).
        cuda = cudnn = None
        ranked: tuple[LogCandidate, ...] = log.causes
    else:
        ranked = settled_candidates(snapshot, log)
    # The finding is about what the log says: a candidate the machine's facts added without
    # a quoted line (no driver here) is the static checks' finding, not the log's.
    quoted = [candidate for candidate in ranked if candidate.evidence]
    top = quoted[0] if quoted else ranked[0]
    return (top, *(candidate for candidate in ranked if candidate is not top)), cuda, cudnn


def _nothing_established(log: LogFacts, where: str | Words, sources: str | Words) -> Finding:
    """The log shows no cause: clean, or a fallback whose reason is not in it."""
    if not log.fallback:
        return _finding(
            "log.clean",
            Cause.UNKNOWN,
            Layer.UNKNOWN,
            Severity.INFO,
            {"files": sources, "lines": log.lines_examined, "scope": _scope(log.scope)},
            tuple(said("evidence.log", value=source, source=source) for source in log.sources),
        )
    return _finding(
        "log.fell_back",
        Cause.UNKNOWN,
        Layer.UNKNOWN,
        Severity.WARNING,
        {"files": sources, "where": where or sources},
        tuple(quote_evidence(q) for q in log.fallback),
    )


_SETTLED = ("machine_none", "machine_other", "machine_same")
"""Machine facts that decide between a missing library and one of another major."""


def wording(outcome: str, machine: str) -> str:
    """How the finding words the log: by what its text settles (core/readers/logs/results.py's outcome:
    named, several_open, not_said, no_failure), or ``settled`` where the text leaves causes
    open and this machine's libraries decide."""
    if outcome == "several_open" and machine in _SETTLED:
        return "settled"
    return outcome if outcome in ("named", "several_open", "not_said", "no_failure") else "named"


def _scope(scope: str) -> dict[str, Any]:
    """What of the log was read (core/logs: ``latest start-up`` or ``whole text``), as a label."""
    latest = scope == "latest start-up"
    return label_ref("explain_log.scope_latest" if latest else "explain_log.scope_whole")


def _others(ranked: Sequence[LogCandidate]) -> dict[str, Any]:
    """The next candidates' titles, quoted (log.cause's others_one / others_two), or a phrase
    that says the log names no other cause."""
    others = zip(("first", "second"), ranked[1:3], strict=False)
    titles = {name: _cause_words(other.cause, "title") for name, other in others}
    part = {0: "others_unnamed", 1: "others_one"}.get(len(titles), "others_two")
    return _phrase(part, titles)


def _cause_params(
    ranked: Sequence[LogCandidate],
    where: str | Words,
    sources: str | Words,
    machine: str,
    majors: frozenset[int] | None,
    outcome: str,
) -> dict[str, Any]:
    top = ranked[0]
    params: dict[str, Any] = {
        "cause": top.cause,
        "cause_title": _cause_words(top.cause, "title"),
        "explanation": _cause_words(top.cause, "explanation"),
        "cause_fix": _cause_words(top.cause, "fix"),
        "confidence": f"{top.confidence:.0%}",
        "where": where,
        "files": sources,
        "library": top.fields.get("library", "-"),
        "needed": top.fields.get("needed_major", "?"),
        "family_name": "cuDNN" if top.cause.startswith("cudnn") else "CUDA",
        "installed": _join(majors) if majors else "-",
    }
    facts = {name: params[name] for name in ("family_name", "installed", "needed", "library")}
    params["machine"] = _phrase(machine, facts) if machine else ""
    params["others"] = _others(ranked)
    said = wording(outcome, machine)
    shared = {name: params[name] for name in ("cause_title", "where", "confidence", "others")}
    params["headline"] = _phrase(f"title_{said}", shared)
    params["reading"] = _phrase(f"detail_{said}", shared)
    return params


def check_log_cause(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """The log's most likely cause, settled with the machine's facts, with the quoted lines.

    By hand: ``fallback-doctor explain-log FILE`` and ``ldconfig -p | grep -E 'cublas|cudnn'``.
    """
    log = snapshot.log
    if log is None:
        return
    for path, why in log.unreadable:
        yield _finding(
            "log.unreadable",
            Cause.COLLECTION_FAILED,
            Layer.PROBE,
            Severity.INFO,
            {"file": path, "why": why},
            (said("evidence.log", value=why, source=path),),
        )
    if not log.causes:
        return
    ranked, cuda, cudnn = _ranked_for_finding(snapshot, log)
    top = ranked[0]
    where = places((q.file, q.line) for q in top.evidence[:3])
    sources = places((source, None) for source in log.sources) if log.sources else "-"
    if top.cause == "unknown":
        yield _nothing_established(log, where, sources)
        return
    machine = _machine_key(top, cuda, cudnn)
    if machine == "machine_unknown" and _log_read_alone(snapshot):
        machine = "machine_elsewhere"
    majors = cudnn if top.cause.startswith("cudnn") else cuda
    params = _cause_params(ranked, where or sources, sources, machine, majors, log.outcome)
    now = None if _log_read_alone(snapshot) else gpu_build_now(snapshot, top.cause)
    if now is not None:
        yield _outdated(top, params, now)
        return
    severity = Severity.ERROR if top.confidence >= 0.5 else Severity.WARNING
    evidence: list[Evidence] = [quote_evidence(q) for q in top.evidence]
    if machine and machine not in ("machine_unknown", "machine_elsewhere"):
        installed = said(
            "evidence.machine", "evidence.majors_installed", cuda=_join(cuda), cudnn=_join(cudnn)
        )
        evidence.append(installed)
    for other in ranked[1:4]:
        settle = separator_key(other.cause)
        share = f"{other.confidence:.0%}"
        told = "evidence.candidate_told_apart" if settle else "evidence.candidate"
        fact = Words(settle) if settle else ""
        evidence.append(said("evidence.other_candidate", told, cause=other.cause, share=share, fact=fact))
    yield _finding(LOG_CAUSE_ID, top.cause, layer_of(top.cause), severity, params, tuple(evidence))


def gpu_build_now(snapshot: EnvironmentSnapshot, cause: str) -> str | None:
    """Where the machine's facts now contradict a log that says the build has no GPU provider:
    the GPU providers of the ONNX Runtime the target loads (its libPath, else its one installed
    package) and where they are; None when they do not (or the cause is another).

    By hand: ``ls <libPath>/libonnxruntime_providers_*`` or
    ``python -c "import onnxruntime as o; print(o.get_available_providers())"``.
    """
    if cause != Cause.EP_NOT_IN_BUILD:
        return None
    target = snapshot.target
    lib = target.lib_ort if target is not None else None
    if lib is not None:
        return f"{', '.join(lib.gpu_providers)} in {lib.directory}" if lib.gpu_providers else None
    ort = snapshot.onnxruntime
    if ort is None or len(ort.distributions) != 1 or not ort.package_dir:
        return None
    gpu = [
        name
        for name in ort.providers_in_build
        if name in ("CUDAExecutionProvider", "TensorrtExecutionProvider")
    ]
    return f"{', '.join(gpu)} in {ort.package_dir}" if gpu else None


def _outdated(top: LogCandidate, params: dict[str, Any], now: str) -> Finding:
    """The log's cause, shown as what it is: an earlier state the machine no longer has."""
    return _finding(
        "log.outdated",
        Cause.UNKNOWN,
        Layer.UNKNOWN,
        Severity.INFO,
        {**params, "now": now},
        (*(quote_evidence(q) for q in top.evidence), said("evidence.machine_now", value=now)),
    )


def check_log_hidden(snapshot: EnvironmentSnapshot) -> Iterator[Finding]:
    """Why the failure's own message is probably not in the log (severity raised, stderr lost).

    By hand: ``grep -n -E 'log_severity_level|filterwarnings|/dev/null' FILE``.
    """
    log = snapshot.log
    if log is None:
        return
    for signal in log.hidden_signal:
        finding_id = _HIDDEN_IDS.get(signal.reason, "log.hidden.other")
        says = label_ref(signal.says) if signal.says else ""
        yield _finding(
            finding_id,
            Cause.UNKNOWN,
            Layer.UNKNOWN,
            Severity.INFO,
            {"reason": signal.reason, "says": says},
            tuple(quote_evidence(q) for q in signal.evidence),
        )


def merge_log_findings(findings: Sequence[Finding] | Iterable[Finding]) -> list[Finding]:
    """Fold the log's finding into a static finding of the same cause, where one exists.

    The first non-log finding with the same cause gains the log's quoted lines as evidence
    (labelled "log line (confirms)", with file and line), and the log's own finding is
    dropped: one cause, one finding. A log cause that no static check found stays as it is.
    Order is kept (the caller ranks afterwards).
    """
    listed = list(findings)
    result: list[Finding] = []
    merged_into: dict[int, list[Evidence]] = {}
    log_findings = [f for f in listed if f.id == LOG_CAUSE_ID]
    dropped: set[int] = set()
    for log_finding in log_findings:
        for index, other in enumerate(listed):
            if other.id.startswith("log.") or other.cause != log_finding.cause:
                continue
            quoted = [
                dataclasses.replace(item, label=CONFIRMED_LABEL, label_id="evidence.log_line.confirms")
                for item in log_finding.evidence
                if item.label.startswith("log line")
            ]
            merged_into.setdefault(index, []).extend(quoted)
            dropped.add(id(log_finding))
            break
    for index, finding in enumerate(listed):
        if id(finding) in dropped:
            continue
        extra = merged_into.get(index)
        if extra:
            finding = dataclasses.replace(finding, evidence=finding.evidence + tuple(extra))
        result.append(finding)
    return result


CHECKS = (check_log_cause, check_log_hidden)
