"""The test inference's figures as the pages show them: the CPU baseline, the GPU retry, speed-up.

Pure and Qt-free, read from the report document alone (``inference``, docs/report-schema.md); the
wizard's CPU and GPU pages, the text report and report.html all take their figures from here, so a
latency reads the same everywhere ("12.3 ms").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from fallback_doctor.core.document.view import Document, Session, as_number, session_of, view_of
from fallback_doctor.core.document.view import as_dict as _dict
from fallback_doctor.core.document.view import as_list as _list
from fallback_doctor.core.language.evidence_text import record_words
from fallback_doctor.core.language.texts import has_label, label, words_text


class CpuView(TypedDict):
    """The CPU page: the baseline session (the document's object), its runs, the model, why it failed."""

    ran: bool
    session: Mapping[str, object]
    runs: object
    model: object
    failure: str | None
    failure_words: object
    """The failure's sentence as catalogue words (``{id, params}``) where the record has them."""
    measured_by: object
    skipped: object


class GpuSummary(TypedDict):
    """The GPU page's verdict block (:func:`gpu_summary`): each key as the pages and reports read it."""

    ran: bool
    baseline_ran: bool
    verdict: str | None
    gpu_verified: bool
    cpu: Mapping[str, object]
    gpu: Mapping[str, object]
    cpu_p50: float | None
    gpu_p50: float | None
    speedup: float | None
    on_gpu: bool
    gpu_one_run: bool
    outputs_equal: object
    cpu_providers: list[str]
    gpu_providers: list[str]
    cpu_nodes: Mapping[str, object]
    gpu_nodes: Mapping[str, object]
    strategies: list[Mapping[str, object]]
    messages: list[object]
    findings: list[Mapping[str, object]]
    failure: dict[str, Any]
    series: dict[str, Any] | None


def _session(session: Session | Mapping[str, object] | None) -> Session:
    return session if isinstance(session, Session) else session_of(session)


def latency_rows(session: Session | Mapping[str, object] | None) -> dict[str, float | None]:
    """p50/p95/p99/mean in ms and batches per second of one measured session (None where absent)."""
    latency = _session(session).latency
    return {
        key: as_number(latency.get(key))
        for key in ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "batches_per_s", "items_per_s")
    }


def one_run(session: Session | Mapping[str, object] | None) -> bool:
    """Whether a session was measured by a single run (the GPU retry's cold run): it has no median,
    no percentiles and no mean, and it is no match for a warmed baseline."""
    return _session(session).latency.get("runs") == 1


def runs_text(session: Session | Mapping[str, object] | None, lang: str) -> str:
    """How a session was measured: "20 runs, after warm-up", "one run, not warmed up: 47.4 ms"."""
    latency = _session(session).latency
    runs = latency.get("runs")
    if not isinstance(runs, int) or runs < 1:
        return "-"
    if runs == 1:
        return label("table.runs.one", lang, ms=ms_text(latency.get("p50_ms"), lang))
    return label("table.runs.warmed" if latency.get("warmup") else "table.runs.cold", lang, runs=runs)


def cpu_view(document: Document) -> CpuView:
    """The CPU page: the baseline session, the model, and why it failed when it did."""
    part = view_of(document).inference
    baseline, session = part.cpu_baseline, part.cpu
    failure = _dict(baseline.get("failure"))
    return {
        "ran": bool(baseline),
        "session": session.raw,
        "runs": session.latency.get("runs"),
        "model": part.model.get("name"),
        "failure": str(failure.get("sentence") or session.error or "") or None,
        "failure_words": failure.get("words") if failure.get("sentence") else None,
        "measured_by": baseline.get("measured_by"),
        "skipped": part.raw.get("skipped"),
    }


def no_inference_words(document: Document, lang: str) -> str:
    """Why no test inference can run for the document's target, as a sentence for the CPU and GPU
    pages ("" where one can): a target with nothing to run (TargetProfile.probe None, a log) says
    so instead of a table of dashes."""
    from fallback_doctor.core.readers.targets.registry import find_profile

    profile = find_profile(view_of(document).target_kind)
    if profile is None or profile.probe is not None:
        return ""
    key = profile.no_inference_label
    return label(key if has_label(key) else "nothing_to_run.other", lang)


def gpu_summary(document: Document) -> GpuSummary:
    """The GPU page's verdict block: the CPU baseline beside the GPU retry (as is), speed-up, equal outputs.

    The CPU column is the document's one CPU figure (``inference.cpu_baseline``), the one the CPU
    page shows.
    """
    report = view_of(document)
    part = report.inference
    result = part.gpu_retry
    cpu, gpu = part.cpu, part.as_is.gpu
    cpu_p50 = latency_rows(cpu)["p50_ms"]
    gpu_p50 = latency_rows(gpu)["p50_ms"]
    on_gpu = any(provider != "CPUExecutionProvider" for provider in gpu.active_providers)
    # A ratio of two CPU runs is noise, not a speed-up: it is shown only when the retry ran on the GPU,
    # and one cold run set against a warmed baseline is no speed-up either.
    comparable = not one_run(gpu) and not one_run(cpu)
    speedup = cpu_p50 / gpu_p50 if cpu_p50 and gpu_p50 and on_gpu and comparable else None
    findings = [f.raw for f in report.findings if f.id.startswith("inference.")]
    return {
        "ran": bool(result),
        "baseline_ran": bool(cpu.raw),
        "verdict": part.verdict,
        "gpu_verified": part.gpu_verified,
        "cpu": cpu.raw,
        "gpu": gpu.raw,
        "cpu_p50": cpu_p50,
        "gpu_p50": gpu_p50,
        "speedup": speedup,
        "on_gpu": on_gpu,
        "gpu_one_run": one_run(gpu),
        "outputs_equal": gpu.comparison.get("equal") if gpu.comparison else None,
        "cpu_providers": list(cpu.active_providers),
        "gpu_providers": list(gpu.active_providers),
        "cpu_nodes": cpu.nodes_per_provider,
        "gpu_nodes": gpu.nodes_per_provider,
        "strategies": [s.raw for s in part.strategies],
        "messages": list(gpu.ort_messages) + list(_list(result.get("log_excerpt")))[:6],
        "findings": findings,
        "failure": _dict(result.get("failure")),
        "series": dict(part.series) or None,
    }


def gpu_headline(summary: Mapping[str, object]) -> str:
    """What the GPU retry showed: "gpu_verified", "fallback" or "other" (the page's colour and words)."""
    if summary["gpu_verified"]:
        return "gpu_verified"
    providers = summary["gpu_providers"]
    if (
        summary["verdict"] in {"fell_back_to_cpu", "gpu_unusable", "cpu_only"}
        or not providers
        or providers == ["CPUExecutionProvider"]
    ):
        return "fallback"
    return "other"


def ms_text(value: object, lang: str = "en") -> str:
    """A latency as every view shows it ("12.3 ms"; "-" when not measured)."""
    return label("ms", lang, value=value) if isinstance(value, int | float) else "-"


def session_rows(session: Session | Mapping[str, object] | None, lang: str) -> list[tuple[str, str]]:
    """A measured session as (label, value) rows, in ``lang``."""
    session = _session(session)
    latency = latency_rows(session)
    single = one_run(session)  # one run is shown as one run: no p50, p95, p99 or mean made from it

    def ms(value: float | None) -> str:
        return "-" if single else ms_text(value, lang)

    providers = ", ".join(p.replace("ExecutionProvider", "") for p in session.active_providers)
    nodes = ", ".join(
        f"{str(k).replace('ExecutionProvider', '')}: {v}" for k, v in session.nodes_per_provider.items()
    )
    rate = latency["batches_per_s"]
    return [
        (label("table.p50", lang), ms(latency["p50_ms"])),
        (label("table.p95", lang), ms(latency["p95_ms"])),
        (label("table.p99", lang), ms(latency["p99_ms"])),
        (label("table.mean", lang), ms(latency["mean_ms"])),
        (label("table.rate", lang), f"{rate:.2f}" if rate is not None and not single else "-"),
        (label("table.providers", lang), providers or "-"),
        (label("table.nodes", lang), nodes or "-"),
        (label("table.runs", lang), runs_text(session, lang)),
    ]


def strategy_lines(summary: Mapping[str, object], lang: str) -> list[str]:
    """Each attempt of the GPU retry on a line of its own, in words: how far the application as it
    runs got, and for each library strategy what it changed ("with LD_LIBRARY_PATH=… first, ONNX
    Runtime loads further and now stops at libcuda.so.1"), as the finding's "tried here" says it."""
    from fallback_doctor.core.readers.inference.tried import outcome_words

    strategies = [_dict(strategy) for strategy in _list(summary.get("strategies"))]
    as_is = next((s for s in strategies if s.get("name") == "as_is" and not s.get("skipped")), None)
    lines = []
    for strategy in strategies:
        name = str(strategy.get("name"))
        words = label(f"strategy.{name}", lang) if has_label(f"strategy.{name}") else name
        stage = str(strategy.get("stage") or "")
        if strategy.get("skipped"):
            state = label(
                "strategy.skipped",
                lang,
                why=record_words(strategy.get("skipped_words"), strategy.get("skipped"), lang),
            )
        elif name != "as_is" and as_is is not None:
            lines.append(words_text(outcome_words(strategy, as_is), lang))  # as "tried here" says it
            continue
        else:
            state = label(f"stage.{stage}", lang) if has_label(f"stage.{stage}") else stage
        lines.append(f"{words}: {state}")
    return lines


def progress_words(event: Mapping[str, object], running: str | None, lang: str) -> str | None:
    """A step's progress event as the status line says it, in words: "Collecting: the NVIDIA
    driver", "Running the test model on the CPU… (CPU warm-up)"; never an internal tag such as
    "[cpu.warmup]" or "native". None: the event changes nothing on the line."""
    what = str(event.get("what") or "")
    if event.get("event") == "progress" and what.startswith("inference: "):
        return what.removeprefix("inference: ")  # core's words: whose code runs, how long
    if event.get("event") == "progress":
        key = f"collector.{what}" if has_label(f"collector.{what}") else "collector.other"
        return label("run.collecting", lang, what=label(key, lang))
    if event.get("event") == "phase" and event.get("edge") == "start":
        doing = label(f"{running}.running", lang) if running in {"cpu", "gpu"} else ""
        name = str(event.get("name") or "")  # "cpu.warmup", "preload_dlls.gpu.session"
        short = name.split(".", 1)[-1] if name.startswith(("preload_dlls.", "lib_path_first.")) else name
        if not has_label(f"phase.{short}"):  # a phase the catalogue has no words for: the step's alone
            return doing or None
        phase = label(f"phase.{short}", lang)  # as report.html's graph names it (core/bundle/html_graph.py)
        return label("run.phase", lang, running=doing, phase=phase) if doing else phase
    return None
