"""The test inference's evidence in the catalogue's words (resources/texts/evidence/inference.json).

A session's providers, its node placements and what ONNX Runtime said, as ``said`` evidence: the
labels and the sentences are catalogue ids with parameters; the providers, the counts, the
library paths and ONNX Runtime's own messages are data, shown as written.
"""

from __future__ import annotations

from typing import Any

from fallback_doctor.core.language.evidence_text import RECORD_ENGLISH, said
from fallback_doctor.core.language.texts import has_label
from fallback_doctor.core.model.result import Evidence, Words
from fallback_doctor.core.readers.inference.result import ProbeResult, SessionRun, Stage, StrategyResult

_CPU = "CPUExecutionProvider"

NODES_SOURCES: dict[str, str] = {
    "verbose log": "evidence.nodes_source.verbose_log",
    "get_provider_graph_assignment_info": "evidence.nodes_source.assignment_info",
    "no node placement lines in the VERBOSE log": "evidence.nodes_source.no_lines",
    "ONNX Runtime printed no node placement lines during session creation": (
        "evidence.nodes_source.none_printed"
    ),
}
"""The record's codes for where node placements were read (core/probes), and their words."""


def run_words(run: str) -> Words:
    """A run of the test model: "gpu_retry" or "gpu_run"."""
    return Words(f"evidence.run.{run}")


def stage_said(stage: Stage) -> Words:
    """How far the GPU path got (core/readers/inference/result.py Stage) in the catalogue's words."""
    return Words(f"evidence.stage.{Stage(stage).value}")


def nodes_source_words(source: str) -> Words | str:
    """Where the node placements were read; an unknown code as written."""
    known = NODES_SOURCES.get(source)
    return Words(known) if known else source


def nodes_words(session: SessionRun) -> Words:
    """ "nodes: 140 on CUDAExecutionProvider, 11 on CPUExecutionProvider (from the verbose log)"."""
    if not session.nodes_per_provider:
        why = (
            nodes_source_words(session.nodes_source) if session.nodes_source else Words("evidence.no_verbose")
        )
        return Words("evidence.nodes_unknown", {"why": why})
    counts = [
        Words("evidence.count_on", {"count": count, "provider": provider})
        for provider, count in session.nodes_per_provider.items()
    ]
    source = (
        nodes_source_words(session.nodes_source) if session.nodes_source else Words("evidence.the_verbose")
    )
    return Words("evidence.nodes_from", {"placements": counts, "source": source})


def runtime_text(result: ProbeResult) -> str:
    """ "ONNX Runtime 1.23.2 (/path/to/site-packages/onnxruntime)": names, shown as written."""
    version = result.runtime.ort_version or "?"
    where = result.runtime.ort_location or result.runtime.interpreter or "?"
    return f"ONNX Runtime {version} ({where})"


def short_line(line: str) -> str:
    """An ONNX Runtime message without the timestamp in front (its CUDA failure last)."""
    at = line.find("[")
    text = line[at:] if 0 <= at < 40 else line
    failure = text.find("CUDA failure")
    if failure > 0:
        text = text[failure:]  # the EP Error banner: the template noise first, the message last
    return text if len(text) <= 600 else text[:200] + " … " + text[-350:]


def session_evidence(result: ProbeResult, session: SessionRun, run: str) -> tuple[Evidence, ...]:
    """What one GPU session showed: `python -c "...; print(s.get_providers())"` and its VERBOSE log."""
    what = run_words(run)
    providers = ", ".join(session.active_providers)
    active = Words("evidence.what.providers_active")
    items = [said("evidence.run_what", value=providers, otherwise="evidence.none", run=what, what=active)]
    if session.nodes_per_provider:
        source = session.nodes_source or "VERBOSE log"
        per_provider = Words("evidence.what.nodes_per_provider")
        items.append(
            said(
                "evidence.run_what",
                "evidence.as_said",
                source_id="evidence.source.ort_log",
                run=what,
                what=per_provider,
                said=nodes_words(session),
                log=nodes_source_words(source),
            )
        )
    on_cpu = Words("evidence.what.ops_on_cpu")
    for placed in session.placement:
        if placed.provider == _CPU and placed.op_types and session.requested_providers != (_CPU,):
            ops = sorted(placed.op_types.items(), key=lambda item: -item[1])
            words = ", ".join(f"{op} x{count}" for op, count in ops[:12])
            items.append(
                said(
                    "evidence.run_what",
                    value=words,
                    source_id="evidence.source.where" if session.nodes_source else None,
                    run=what,
                    what=on_cpu,
                    where=nodes_source_words(session.nodes_source),
                )
            )
    ort_said = Words("evidence.what.ort_said")
    items.extend(
        said(
            "evidence.run_what",
            value=short_line(line),
            source_id="evidence.source.probe_stderr",
            run=what,
            what=ort_said,
        )
        for line in session.ort_messages[:6]
    )
    if session.strict is not None and session.strict.error:
        setting = "session.disable_cpu_ep_fallback = 1"
        items.append(said("evidence.strict_run", value=short_line(session.strict.error), setting=setting))
    if session.error:
        error = Words("evidence.what.error")
        items.append(said("evidence.run_what", value=short_line(session.error), run=what, what=error))
    items.append(said("evidence.name", value=runtime_text(result), name="ONNX Runtime"))
    return tuple(items)


def record_said(label_id: str, sentence: str, words: Any = None, **params: Any) -> Evidence:
    """A sentence of the record (a failure, a skipped strategy): by its catalogue words where the
    record has them (``words``, ``{id, params}``), else in English only (RECORD_ENGLISH)."""
    if isinstance(words, dict) and words.get("id"):
        given = {str(k): _as_words(v) for k, v in dict(words.get("params") or {}).items()}
        return said(label_id, str(words["id"]), **params, **given)
    return said(label_id, RECORD_ENGLISH, value=sentence, text=sentence, **params)


def _as_words(value: Any) -> Any:
    """A parameter of the record's words: nested ``{id, params}`` as ``Words``, data as it is."""
    if isinstance(value, dict) and "id" in value and "params" in value:
        return Words(str(value["id"]), {str(k): _as_words(v) for k, v in dict(value["params"]).items()})
    return value


def strategy_evidence(strategy: StrategyResult) -> Evidence:
    """How far one strategy got, or why it was skipped (`fallback-doctor test-inference`)."""
    name = strategy.name.value
    if not strategy.skipped:
        return said("evidence.strategy", "evidence.as_said", name=name, said=stage_said(strategy.stage))
    if strategy.skipped_words is not None:
        return said("evidence.strategy", "evidence.skipped", name=name, why=strategy.skipped_words)
    return record_said("evidence.strategy", f"skipped: {strategy.skipped}", name=name)


def said_words(key: str, **params: Any) -> dict[str, Any]:
    """Catalogue words as the record holds them: ``{"id": key, "params": {...}}``."""
    return {"id": key, "params": params}


def doing_words(phase: str | None, gpu: str, otherwise: str, importing: str) -> dict[str, Any]:
    """What a probe child was doing in ``phase`` ("creating the CUDA session"), as catalogue words
    (resources/texts/<lang>/labels/evidence_probe.json ``evidence.doing.*``): ``importing`` for its
    import phase, ``otherwise`` for a phase without words of its own."""
    if phase == "import":
        return said_words(importing)
    key = f"evidence.doing.{phase}"
    return said_words(key, gpu=gpu) if phase and has_label(key) else said_words(otherwise)
