"""Tried, not only advised: what the test inference saw when it applied a finding's own remedy.

The test inference runs ONNX Runtime again with each library strategy (core/readers/inference/result.py
``StrategyName``): ``preload_dlls()`` first, the library folders first on the loader path. Where
a finding's remedy is one of those (an ``environment`` step that puts folders first on
``LD_LIBRARY_PATH``/``PATH``, a ``code`` step calling ``preload_dlls()``), the strategy's outcome is
that remedy tried on the application's own stack without changing it. This module turns it into
evidence on the finding: "tried here: with these folders first, ONNX Runtime loads further and now
stops at libcuda.so.1 (the driver)".

By hand, the same as the lib_path_first strategy::

    LD_LIBRARY_PATH=<folders>:$LD_LIBRARY_PATH <python> -c "import onnxruntime as o; \
        o.InferenceSession('<model>', providers=['CUDAExecutionProvider'])"
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fallback_doctor.core.language.evidence_text import said
from fallback_doctor.core.model.result import TRIED_LABEL, CodeStep, EnvironmentStep, Finding, Words
from fallback_doctor.core.readers.inference.result import STAGE_ORDER, Stage, stage_rank
from fallback_doctor.core.readers.loader.ld_debug import failed_names

_LOADER_VARIABLES = ("LD_LIBRARY_PATH", "PATH", "DYLD_LIBRARY_PATH")
_DRIVER_LIBRARIES = frozenset({"libcuda.so.1", "libcuda.so", "nvcuda.dll"})


def missing_library(messages: Iterable[str]) -> str | None:
    """The library ONNX Runtime says it could not open (the first), from its own messages."""
    names = failed_names("\n".join(messages))
    return names[0] if names else None


def _strategy_for(finding: Finding, strategies: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The tried strategy that applies this finding's remedy, if one does."""
    steps = finding.remediation.steps if finding.remediation else ()
    by_name = {s.get("name"): s for s in strategies if not s.get("skipped")}
    for step in steps:
        if isinstance(step, CodeStep) and "preload_dlls()" in step.code and "preload_dlls" in by_name:
            return by_name["preload_dlls"]
        if isinstance(step, EnvironmentStep) and "lib_path_first" in by_name:
            tried = by_name["lib_path_first"]
            for variable in _LOADER_VARIABLES:
                wanted = _folders(step.variables.get(variable))
                have = _folders((tried.get("environment") or {}).get(variable))
                # A folder the remedy's own install creates is not there to try yet: the
                # strategy applies the step when it put every folder that exists first.
                left = set(wanted) - set(have)
                if wanted and (not left or (set(wanted) & set(have) and not any(map(os.path.isdir, left)))):
                    return tried
    return None


def _folders(value: str | None) -> list[str]:
    return [part for part in (value or "").split(os.pathsep) if part]


def _stage(strategy: Mapping[str, Any]) -> Stage:
    try:
        return Stage(strategy.get("stage") or Stage.NOTHING)
    except ValueError:
        return Stage.NOTHING


def _messages(strategy: Mapping[str, Any]) -> list[str]:
    gpu = strategy.get("gpu") or {}
    return [str(line) for line in gpu.get("ort_messages") or ()]


def outcome_words(strategy: Mapping[str, Any], as_is: Mapping[str, Any] | None) -> Words:
    """What happened with this strategy, compared with the application as it is, in one line."""
    name = str(strategy.get("name"))
    how: Words | str = name
    if name == "preload_dlls":
        how = Words("evidence.tried.how_preload")
    elif name == "lib_path_first":
        settings = "; ".join(f"{k}={v}" for k, v in (strategy.get("environment") or {}).items())
        how = Words("evidence.tried.how_first", {"settings": settings})
    stage = _stage(strategy)
    if stage == STAGE_ORDER[-1]:
        return Words("evidence.tried.on_gpu", {"how": how})
    now = missing_library(_messages(strategy))
    before = missing_library(_messages(as_is)) if as_is else None
    further = as_is is not None and stage_rank(stage) > stage_rank(_stage(as_is))
    if now and now == before and not further:
        return Words("evidence.tried.still_stops", {"how": how, "now": now})
    if now:
        key = "evidence.tried.further" + ("_instead" if before and before != now else "")
        key += "_driver" if now in _DRIVER_LIBRARIES else ""
        return Words(key, {"how": how, "now": now, "before": before or ""})
    reached = {"how": how, "stage": Words(f"evidence.stage_point.{stage.value}")}
    return Words("evidence.tried.gets_to" if further else "evidence.tried.same_point", reached)


def with_tried_evidence(findings: Sequence[Finding], gpu_retry: Mapping[str, Any] | None) -> list[Finding]:
    """``findings`` with a "tried here" line on each one whose remedy a strategy tried.

    Idempotent: an earlier "tried here" line is replaced, never repeated.
    """
    strategies = list((gpu_retry or {}).get("strategies") or ())
    as_is = next((s for s in strategies if s.get("name") == "as_is"), None)
    result: list[Finding] = []
    for finding in findings:
        kept = tuple(e for e in finding.evidence if e.label != TRIED_LABEL)
        strategy = _strategy_for(finding, strategies) if strategies else None
        if strategy is not None:
            tried = said(
                "evidence.tried_here",
                "evidence.as_said",
                source_id="evidence.source.test_inference",
                said=outcome_words(strategy, as_is),
            )
            kept = (*kept, tried)
        result.append(finding if kept == finding.evidence else dataclasses.replace(finding, evidence=kept))
    return result
