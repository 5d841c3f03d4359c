"""The text view of ``fallback-doctor test-inference``: the CPU baseline beside the GPU retry.

A table a technician reads like ``nvidia-smi``'s (p50/p95/p99, speed-up, outputs equal, providers
active, nodes per provider), the strategies, the verdict, ONNX Runtime's own words and what the
probe cost, every word from the label catalog (resources/texts/labels/report.json) in the
report's language; columns are padded by display width, so Korean headings line up.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from fallback_doctor.core.door import (
    Finding,
    InferencePlan,
    ModelInfo,
    ProbeResult,
    SessionRun,
    dims_words,
    gpu_verified,
    has_label,
    label,
    placement_words,
    record_words,
    remedy_terminal,
    said_text,
    stage_words,
    to_jsonable,
    words_of,
)

_NAME, _CELL = 24, 16
"""Display columns of the row names and of each figure."""


def _width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _left(text: str, columns: int) -> str:
    return text + " " * max(0, columns - _width(text))


def _right(text: str, columns: int) -> str:
    return " " * max(0, columns - _width(text)) + text


def _code_words(kind: str, code: str, lang: str) -> str:
    """A code (``fell_back_to_cpu``, ``error``) as is in English, what scripts grep; the catalog's
    words for it in another language."""
    return label(f"{kind}.{code}", lang) if lang != "en" and has_label(f"{kind}.{code}") else code


def render_text(
    result: ProbeResult, findings: list[Finding], info: ModelInfo, plan: InferencePlan, lang: str
) -> str:
    """The side-by-side table, the strategies, the verdict and the quoted evidence."""
    lines = _head_lines(result, info, plan, lang)
    lines.extend(_comparison_lines(result, lang))
    gpu = result.as_is.gpu if result.as_is is not None else None
    placed = placement_words(gpu.nodes_per_provider, lang) if gpu is not None else ""
    if placed:
        lines.append(label("report.inference.placement", lang, placement=placed))
    lines.extend(_strategy_lines(result, lang))
    lines.append("")
    verdict = "gpu_verified" if gpu_verified(result) else result.verdict.value
    words = label(f"run_verdict.{verdict}", lang) if has_label(f"run_verdict.{verdict}") else verdict
    lines.append(label("test_inference.verdict", lang, verdict=words))  # the code is --json's
    lines.extend(_finding_lines(findings, lang))
    cost = result.cost
    lines.append("")
    lines.append(
        label(
            "test_inference.cost",
            lang,
            start=_seconds(cost.process_start_s),
            imported=_seconds(cost.import_s),
            cpu=_seconds(cost.cpu_session_create_s),
            gpu=_seconds(cost.gpu_session_create_s),
            total=_seconds(cost.total_s),
        )
    )
    return "\n".join(lines) + "\n"


def _head_lines(result: ProbeResult, info: ModelInfo, plan: InferencePlan, lang: str) -> list[str]:
    runtime = result.runtime
    version, where = runtime.ort_version or "?", runtime.ort_location or "?"
    lines = [label("test_inference.runtime", lang, version=version, where=where)]
    if runtime.interpreter:
        python = runtime.python_version or "?"
        lines.append(label("test_inference.python", lang, interpreter=runtime.interpreter, version=python))
    request = plan.request
    flops = info.matmul_flops(request.dims)
    dims = dims_words(
        ({"name": c.name, "value": c.value, "source": c.source} for c in plan.inputs.choices), lang
    )
    lines.append(
        label(
            "test_inference.model",
            lang,
            name=Path(request.model).name,
            nodes=len(info.nodes),
            dims=dims,
            flops=label("test_inference.flops", lang, gflops=f"{flops / 1e9:.2f}") if flops else "",
        )
    )
    return lines


def _row(name: str, cpu: str, gpu: str) -> str:
    return _left(name, _NAME) + _right(cpu, _CELL) + _right(gpu, _CELL)


def _comparison_lines(result: ProbeResult, lang: str) -> list[str]:
    cpu = result.cpu
    as_is = result.as_is
    gpu = as_is.gpu if as_is is not None else None
    words = {key: label(f"test_inference.{key}", lang) for key in _WORDS}
    lines = ["", _row("", words["cpu"], words["gpu"])]
    for percentile in ("p50", "p95", "p99"):
        name = label("test_inference.latency", lang, percentile=percentile)
        lines.append(_row(name, _cell(cpu, f"{percentile}_ms"), _cell(gpu, f"{percentile}_ms")))
    speedup = "-"
    on_gpu = gpu is not None and any(p != "CPUExecutionProvider" for p in gpu.active_providers)
    if cpu and gpu and cpu.latency and gpu.latency and gpu.latency.p50_ms > 0:
        # A ratio of two CPU runs is noise, not a speed-up.
        speedup = f"{cpu.latency.p50_ms / gpu.latency.p50_ms:.2f}x" if on_gpu else words["no_speedup"]
    lines.append(_row(words["speedup"], "", speedup))
    equal = "-"
    if gpu is not None and gpu.comparison is not None:
        equal = words["equal_yes"] if gpu.comparison.equal else words["equal_no"]
        if gpu.comparison.bitwise_equal:
            equal += words["bitwise"]
    lines.append(_row(words["outputs_equal"], "", equal))
    lines.append(_row(words["providers"], _providers(cpu, words), _providers(gpu, words)))
    lines.append(_row(words["nodes"], _placement(cpu), _placement(gpu)))
    return lines


_WORDS = (
    *("cpu", "gpu", "speedup", "no_speedup", "outputs_equal", "equal_yes", "equal_no", "bitwise"),
    *("providers", "nodes", "none"),
)


def _cell(session: SessionRun | None, attribute: str) -> str:
    if session is None or session.latency is None:
        return "-"
    return f"{getattr(session.latency, attribute):.1f}"


def _strategy_lines(result: ProbeResult, lang: str) -> list[str]:
    lines: list[str] = []
    if result.strategies:
        lines.append("")
        lines.append(label("test_inference.strategies", lang))
        for strategy in result.strategies:
            if strategy.skipped:
                why = record_words(strategy.skipped_words, strategy.skipped, lang)
                state = f"{label('test_inference.skipped', lang)}: {why}"
            else:
                state = stage_words(strategy.stage, lang)
            if strategy.failure is not None:
                state += f" — {said_text(strategy.failure.words, strategy.failure.sentence, lang)}"
            lines.append(f"  {strategy.name.value:16} {state}")
    if result.series is not None:
        lines.append("")
        lines.append(label("test_inference.sampling", lang))
        said = list(result.series.get("sentence_words") or ())
        for position, sentence in enumerate(result.series.get("sentences") or ()):
            words = said[position] if position < len(said) else None
            lines.append(f"  {said_text(words, sentence, lang)}")
    return lines


def _finding_lines(findings: list[Finding], lang: str) -> list[str]:
    lines: list[str] = []
    for finding in findings:
        texts = words_of(finding, lang)
        lines.append("")
        lines.append(f"[{_code_words('severity', finding.severity.value, lang)}] {texts.get('title')}")
        lines.append(f"  {texts.get('detail')}")
        if finding.remediation is not None:
            fix = texts.get("fix") or finding.remediation.summary
            if fix:
                lines.append(f"  {label('report.fix', lang)}: {fix}")
            # Every step as the report prints it (code as code, commands with their comments in
            # the report's language), so a fix that says "the lines below" has them below.
            lines.extend(remedy_terminal(to_jsonable(finding.remediation), lang, "    "))
            verify = texts.get("verify") or finding.remediation.verify
            if verify:
                lines.append(f"  {label('report.verify', lang)}: {verify}")
    return lines


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f} s"


def _providers(session: SessionRun | None, words: dict[str, str]) -> str:
    if session is None:
        return "-"
    return ",".join(p.replace("ExecutionProvider", "") for p in session.active_providers) or words["none"]


def _placement(session: SessionRun | None) -> str:
    if session is None or not session.nodes_per_provider:
        return "-"
    return ",".join(
        f"{p.replace('ExecutionProvider', '')}:{n}" for p, n in session.nodes_per_provider.items()
    )
