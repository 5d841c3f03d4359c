"""The test model and where its nodes ran, in words: "batch=16 (given)", "CUDA 151 of 151 nodes".

Read from plain data (the report's ``inference.model.dims_used``, a session's ``nodes_per_provider``)
so the text report, ``test-inference`` and the wizard say the same; words from the label catalogue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fallback_doctor.core.language.texts import has_label, label


def dims_words(dims_used: Iterable[Mapping[str, Any]], lang: str) -> str:
    """``batch=16 (given), seq=128 (from the model's description)``; the fixed-shape words when none."""
    parts = []
    for choice in dims_used:
        source = str(choice.get("source") or "")
        key = f"dim_source.{source}"
        words = label(key, lang) if has_label(key) else source
        parts.append(f"{choice.get('name')}={choice.get('value')} ({words})")
    return ", ".join(parts) or label("dims.none", lang)


def model_line(document: Mapping[str, Any] | None, lang: str) -> str:
    """``Test inference model: tiny.onnx (batch=2 (given), ...)`` from a report document ("" before a run),
    with where the model was seen in the running process; a second line when it could not be run."""
    model = ((document or {}).get("inference") or {}).get("model")
    if not isinstance(model, dict) or not model.get("name"):
        return ""
    dims = dims_words(model.get("dims_used") or (), lang)
    line = label("report.inference.model", lang, name=model["name"], dims=dims)
    source = str(model.get("source") or "")
    if has_label(f"model_source.{source}"):
        line += "; " + label(f"model_source.{source}", lang)
    if model.get("seen_not_run"):
        line += "\n" + label("report.inference.model_not_run", lang, why=model["seen_not_run"])
    return line


def model_choice(path: str, dims: Mapping[str, int], lang: str) -> dict[str, Any]:
    """What the wizard's model field will run: ``{"ok": True, "text": "<model>: <dims with sources>",
    "warning": <a dimension the model does not have, or "">}``, or ``{"ok": False, "text": <why,
    naming the file>}``. Reads the model's signature, never runs it.

    By hand: ``fallback-doctor test-inference --model FILE --dim NAME=VALUE``.
    """
    from pathlib import Path

    from fallback_doctor.core.readers.inference.model_inputs import dim_names, unknown_dim_names
    from fallback_doctor.core.readers.inference.run import InferenceSetupError, plan_inference

    try:
        plan = plan_inference(Path(path) if path else None, dims=dims)
    except InferenceSetupError as error:
        return {"ok": False, "text": str(error), "warning": ""}
    unknown = unknown_dim_names(plan.info, dims)
    warning = ""
    if unknown:
        names = ", ".join(dim_names(plan.info)) or label("dims.none", lang)
        warning = label("model.unknown_dim", lang, dim=unknown[0], names=names)
    used = [{"name": c.name, "value": c.value, "source": c.source} for c in plan.inputs.choices]
    return {"ok": True, "text": f"{plan.model.name}: {dims_words(used, lang)}", "warning": warning}


def _short(provider: str) -> str:
    return provider.replace("ExecutionProvider", "")


def placement_words(nodes_per_provider: Mapping[str, object] | None, lang: str) -> str:
    """``CUDA 151 of 151 nodes``: the GPU provider with the most nodes (else the CPU), then the rest.

    "" when the session's placement is unknown (ONNX Runtime said nothing of it).
    """
    counts = {str(k): int(v) for k, v in (nodes_per_provider or {}).items() if isinstance(v, int)}
    total = sum(counts.values())
    if not counts or total <= 0:
        return ""
    gpu = {k: v for k, v in counts.items() if k != "CPUExecutionProvider" and v > 0}
    main = max(gpu, key=lambda k: gpu[k]) if gpu else max(counts, key=lambda k: counts[k])
    line = label("placement.line", lang, provider=_short(main), count=counts[main], total=total)
    others = [
        label("placement.other", lang, provider=_short(k), count=v)
        for k, v in counts.items()
        if k != main and v > 0
    ]
    return ", ".join([line, *others])
