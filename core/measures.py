"""The test inference's figures as the pages show them: the CPU baseline, the GPU retry, speed-up.

Pure and Qt-free, read from the report document alone (``inference``, docs/report-schema.md); the
wizard's CPU and GPU pages, the text report and report.html all take their figures from here, so a
latency reads the same everywhere ("12.3 ms").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.evidence_text import record_words
from fallback_doctor.core.texts import has_label, label


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def latency_rows(session: Mapping[str, Any] | None) -> dict[str, float | None]:
    """p50/p95/p99/mean in ms and batches per second of one measured session (None where absent)."""
    latency = _dict(_dict(session).get("latency"))
    return {
        key: latency.get(key)
        for key in ("p50_ms", "p95_ms", "p99_ms", "mean_ms", "batches_per_s", "items_per_s")
    }


def one_run(session: Mapping[str, Any] | None) -> bool:
    """Whether a session was measured by a single run (the GPU retry's cold run): it has no median,
    no percentiles and no mean, and it is no match for a warmed baseline."""
    return _dict(_dict(session).get("latency")).get("runs") == 1


def runs_text(session: Mapping[str, Any] | None, lang: str) -> str:
    """How a session was measured: "20 runs, after warm-up", "one run, not warmed up: 47.4 ms"."""
    latency = _dict(_dict(session).get("latency"))
    runs = latency.get("runs")
    if not isinstance(runs, int) or runs < 1:
        return "-"
    if runs == 1:
        return label("table.runs.one", lang, ms=ms_text(latency.get("p50_ms"), lang))
    return label("table.runs.warmed" if latency.get("warmup") else "table.runs.cold", lang, runs=runs)


def inference(document: Mapping[str, Any] | None) -> dict[str, Any]:
    """The document's test inference ({} parts where a step has not run)."""
    return _dict(_dict(document).get("inference"))


def cpu_view(document: Mapping[str, Any] | None) -> dict[str, Any]:
    """The CPU page: the baseline session, the model, and why it failed when it did."""
    part = inference(document)
    baseline = _dict(part.get("cpu_baseline"))
    session = _dict(baseline.get("session"))
    failure = _dict(baseline.get("failure"))
    model = _dict(part.get("model"))
    return {
        "ran": bool(baseline),
        "session": session,
        "runs": _dict(session.get("latency")).get("runs"),
        "model": model.get("name"),
        "failure": str(failure.get("sentence") or session.get("error") or "") or None,
        "measured_by": baseline.get("measured_by"),
        "skipped": part.get("skipped"),
    }


def no_inference_words(document: Mapping[str, Any] | None, lang: str) -> str:
    """Why no test inference can run for the document's target, as a sentence for the CPU and GPU
    pages ("" where one can): a target with nothing to run (TargetProfile.probe None, a log) says
    so instead of a table of dashes."""
    from fallback_doctor.core.targets.registry import find_profile

    target = _dict(_dict(document).get("target"))
    kind = target.get("kind") or _dict(_dict(_dict(document).get("environment")).get("target")).get("kind")
    profile = find_profile(str(kind or ""))
    if profile is None or profile.probe is not None:
        return ""
    key = profile.no_inference_label
    return label(key if has_label(key) else "nothing_to_run.other", lang)


def gpu_summary(document: Mapping[str, Any] | None) -> dict[str, Any]:
    """The GPU page's verdict block: the CPU baseline beside the GPU retry (as is), speed-up, equal outputs.

    The CPU column is the document's one CPU figure (``inference.cpu_baseline``), the one the CPU
    page shows.
    """
    part = inference(document)
    result = _dict(part.get("gpu_retry"))
    cpu = _dict(_dict(part.get("cpu_baseline")).get("session"))
    as_is: dict[str, Any] = {}
    for strategy in _list(result.get("strategies")):
        if _dict(strategy).get("name") == "as_is":
            as_is = _dict(strategy)
    gpu = _dict(as_is.get("gpu"))
    cpu_p50 = latency_rows(cpu)["p50_ms"]
    gpu_p50 = latency_rows(gpu)["p50_ms"]
    on_gpu = any(provider != "CPUExecutionProvider" for provider in gpu.get("active_providers") or [])
    # A ratio of two CPU runs is noise, not a speed-up: it is shown only when the retry ran on the GPU,
    # and one cold run set against a warmed baseline is no speed-up either.
    comparable = not one_run(gpu) and not one_run(cpu)
    speedup = cpu_p50 / gpu_p50 if cpu_p50 and gpu_p50 and on_gpu and comparable else None
    comparison = _dict(gpu.get("comparison"))
    findings = [
        _dict(f)
        for f in _list(_dict(document).get("findings"))
        if str(_dict(f).get("id", "")).startswith("inference.")
    ]
    return {
        "ran": bool(result),
        "baseline_ran": bool(cpu),
        "verdict": part.get("verdict"),
        "gpu_verified": bool(part.get("gpu_verified")),
        "cpu": cpu,
        "gpu": gpu,
        "cpu_p50": cpu_p50,
        "gpu_p50": gpu_p50,
        "speedup": speedup,
        "on_gpu": on_gpu,
        "gpu_one_run": one_run(gpu),
        "outputs_equal": comparison.get("equal") if comparison else None,
        "cpu_providers": list(cpu.get("active_providers") or []),
        "gpu_providers": list(gpu.get("active_providers") or []),
        "cpu_nodes": _dict(cpu.get("nodes_per_provider")),
        "gpu_nodes": _dict(gpu.get("nodes_per_provider")),
        "strategies": [_dict(s) for s in _list(result.get("strategies"))],
        "messages": list(gpu.get("ort_messages") or []) + list(result.get("log_excerpt") or [])[:6],
        "findings": findings,
        "failure": _dict(result.get("failure")),
        "series": _dict(part.get("series")) or None,
    }


def gpu_headline(summary: Mapping[str, Any]) -> str:
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


def ms_text(value: float | None, lang: str = "en") -> str:
    """A latency as every view shows it ("12.3 ms"; "-" when not measured)."""
    return label("ms", lang, value=value) if isinstance(value, int | float) else "-"


def session_rows(session: Mapping[str, Any], lang: str) -> list[tuple[str, str]]:
    """A measured session as (label, value) rows, in ``lang``."""
    latency = latency_rows(session)
    single = one_run(session)  # one run is shown as one run: no p50, p95, p99 or mean made from it

    def ms(value: float | None) -> str:
        return "-" if single else ms_text(value, lang)

    providers = ", ".join(
        str(p).replace("ExecutionProvider", "") for p in session.get("active_providers") or []
    )
    nodes = ", ".join(
        f"{str(k).replace('ExecutionProvider', '')}: {v}"
        for k, v in (session.get("nodes_per_provider") or {}).items()
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


def strategy_lines(summary: Mapping[str, Any], lang: str) -> list[str]:
    """Each strategy tried and how far it got, in words."""
    lines = []
    for strategy in summary["strategies"]:
        name = str(strategy.get("name"))
        words = label(f"strategy.{name}", lang) if has_label(f"strategy.{name}") else name
        stage = str(strategy.get("stage") or "")
        state = (
            label(
                "strategy.skipped",
                lang,
                why=record_words(strategy.get("skipped_words"), strategy.get("skipped"), lang),
            )
            if strategy.get("skipped")
            else (label(f"stage.{stage}", lang) if has_label(f"stage.{stage}") else stage)
        )
        lines.append(f"{words}: {state}")
    return lines


def progress_words(event: Mapping[str, Any], running: str | None, lang: str) -> str | None:
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
