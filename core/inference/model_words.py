"""The test model and where its nodes ran, in words: "batch=16 (given)", "CUDA 151 of 151 nodes".

Read from plain data (the report's ``inference.model.dims_used``, a session's ``nodes_per_provider``)
so the text report, ``test-inference`` and the wizard say the same; words from the label catalogue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fallback_doctor.core.texts import has_label, label


def dims_words(dims_used: Iterable[Mapping[str, Any]], lang: str) -> str:
    """``batch=16 (given), seq=128 (from the model's description)``; the fixed-shape words when none."""
    parts = []
    for choice in dims_used:
        source = str(choice.get("source") or "")
        key = f"dim_source.{source}"
        words = label(key, lang) if has_label(key) else source
        parts.append(f"{choice.get('name')}={choice.get('value')} ({words})")
    return ", ".join(parts) or label("dims.none", lang)


def _short(provider: str) -> str:
    return provider.replace("ExecutionProvider", "")


def placement_words(nodes_per_provider: Mapping[str, int] | None, lang: str) -> str:
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
