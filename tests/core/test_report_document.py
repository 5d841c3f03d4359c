"""The report document: its published schema, the typed side checked against it, the steps that change it."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.document.basics import SCHEMA_VERSION, to_jsonable
from fallback_doctor.core.document.schema import DocumentError, check_document, report_schema
from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, inspect_target
from fallback_doctor.core.flow.steps import StepOutcome, apply_inspection, apply_step
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.result import (
    Evidence,
    Finding,
    Layer,
    Remediation,
    Severity,
    finding_from_dict,
)
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.run import CollectRequest
from fallback_doctor.core.readers.inference.result import (
    LatencyStats,
    ProbeFailure,
    ProbeResult,
    SessionRun,
    StrategyName,
    StrategyResult,
)

SCHEMA = report_schema()
DEFS = SCHEMA["$defs"]
PUBLISHED = Path(__file__).parents[2] / "docs" / "report.schema.json"


def _names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_the_schema_is_a_valid_draft_2020_12_schema_and_the_published_copy_is_the_shipped_one() -> None:
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert json.loads(PUBLISHED.read_text(encoding="utf-8")) == SCHEMA


@pytest.mark.parametrize(
    ("cls", "definition", "left_out", "added"),
    [
        # role and script are added by core/flow/steps.py judge (the declared role, the fix as a script).
        (Finding, "finding", set(), {"role"}),
        (Evidence, "evidence", set(), set()),
        (Remediation, "remediation", set(), {"script"}),
        (SessionRun, "session", set(), set()),
        (StrategyResult, "strategy", set(), set()),
        (ProbeFailure, "failure", set(), set()),
        (LatencyStats, "latency", set(), set()),
        # cpu, series and outputs have their own one place in the document (inference.*).
        (ProbeResult, "gpu_retry", {"cpu", "series", "outputs"}, {"started"}),
    ],
)
def test_the_typed_side_matches_the_schema(
    cls: type, definition: str, left_out: set[str], added: set[str]
) -> None:
    """Every field of the dataclasses that go into the document is in the schema, and nothing else."""
    assert set(DEFS[definition]["properties"]) == (_names(cls) - left_out) | added


def test_the_environment_is_the_snapshot_without_the_test_inference() -> None:
    environment = SCHEMA["properties"]["environment"]
    assert set(environment["properties"]) == _names(EnvironmentSnapshot) - {"inference"}
    assert set(environment["required"]) == set(environment["properties"])


@pytest.fixture(scope="module")
def static() -> dict[str, Any]:
    request = DiagnoseRequest(
        collect=CollectRequest(python=sys.executable, env={"PATH": "/usr/bin:/bin"}),
        target={"kind": "python", "python": sys.executable},
    )
    document, _snapshot = inspect_target(request)
    return document


def _session(p50: float, providers: tuple[str, ...]) -> SessionRun:
    return SessionRun(
        active_providers=providers,
        latency=LatencyStats(
            runs=3,
            warmup=1,
            p50_ms=p50,
            p95_ms=p50,
            p99_ms=p50,
            mean_ms=p50,
            min_ms=p50,
            max_ms=p50,
            batches_per_s=1000 / p50,
        ),
    )


def _outcome(step: str, cpu_p50: float, finding: Finding | None = None) -> StepOutcome:
    result = ProbeResult(
        completed=True,
        cpu=_session(cpu_p50, ("CPUExecutionProvider",)),
        strategies=(
            StrategyResult(name=StrategyName.AS_IS, gpu=_session(cpu_p50, ("CPUExecutionProvider",))),
        )
        if step == "gpu_retry"
        else (),
    )
    return StepOutcome(
        step=step,
        result=result.to_json(),
        model={"name": "model.onnx"},
        started=float(cpu_p50),
        findings=(finding,) if finding else (),
        verdict="fell_back_to_cpu" if step == "gpu_retry" else None,
    )


def _fell_back() -> Finding:
    return make_finding(
        "inference.fell_back",
        Cause.UNKNOWN,
        Layer.PROBE,
        Severity.ERROR,
        params={"requested": "CUDAExecutionProvider", "active": "CPUExecutionProvider"},
    )


def test_the_static_document_follows_the_schema_and_has_no_inference_yet(static: dict[str, Any]) -> None:
    check_document(static)
    assert static["steps"] == ["configuration", "log", "stack"] and static["quick"] is True
    assert "inference" not in static["environment"]
    assert static["inference"]["gpu_retry"] is None and static["inference"]["cpu_baseline"] is None


def test_each_step_puts_its_result_in_its_one_place_and_re_judges(static: dict[str, Any]) -> None:
    before = json.dumps(static, sort_keys=True)
    baseline = apply_step(static, _outcome("cpu_baseline", 10.0))
    assert json.dumps(static, sort_keys=True) == before  # pure: the input is not changed
    assert baseline["inference"]["cpu_baseline"]["measured_by"] == "cpu_baseline"
    assert baseline["inference"]["cpu_baseline"]["session"]["latency"]["p50_ms"] == 10.0
    assert baseline["steps"][-1] == "cpu_baseline" and baseline["quick"] is False
    retried = apply_step(baseline, _outcome("gpu_retry", 99.0, _fell_back()))
    inference = retried["inference"]
    assert inference["cpu_baseline"]["session"]["latency"]["p50_ms"] == 10.0  # the CPU page's figure kept
    assert "cpu" not in inference["gpu_retry"] and "series" not in inference["gpu_retry"]
    assert inference["verdict"] == "fell_back_to_cpu" and inference["gpu_verified"] is False
    assert retried["verdict"] == "gpu_unusable"
    ids = [f["id"] for f in retried["findings"]]
    assert ids.count("inference.fell_back") == 1
    again = apply_step(retried, _outcome("gpu_retry", 98.0, _fell_back()))
    assert [f["id"] for f in again["findings"]].count("inference.fell_back") == 1  # replaced, not added
    # Without a baseline before, the retry's own CPU session is the document's CPU figure.
    direct = apply_step(static, _outcome("gpu_retry", 42.0, _fell_back()))
    assert direct["inference"]["cpu_baseline"]["measured_by"] == "gpu_retry"
    assert direct["inference"]["cpu_baseline"]["session"]["latency"]["p50_ms"] == 42.0


def test_settling_a_settled_document_changes_nothing(static: dict[str, Any]) -> None:
    once = apply_step(static, _outcome("gpu_retry", 5.0, _fell_back()))
    twice = apply_inspection(once, static)
    assert [f["id"] for f in twice["findings"]] == [f["id"] for f in once["findings"]]
    assert twice["verdict"] == once["verdict"] and twice["inference"] == {
        **once["inference"],
        "skipped": None,
    }


def test_findings_read_back_are_the_findings_written(static: dict[str, Any]) -> None:
    for item in static["findings"]:
        # Less what core/flow/steps.py judge adds from the declarations: the role and the fix as a script.
        written = {key: value for key, value in item.items() if key != "role"}
        if isinstance(written.get("remediation"), dict):
            written["remediation"] = {k: v for k, v in written["remediation"].items() if k != "script"}
        read = to_jsonable(finding_from_dict(item))
        for words in ("texts", "text"):  # a finding has one of the two; the other is left out
            if not read[words]:
                del read[words]
        assert read == written


def test_a_document_of_the_wrong_shape_is_refused_with_the_field_path(static: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(static))
    broken["findings"].append({**to_jsonable(_fell_back()), "texts": {"en": {"detail": 5}}})
    with pytest.raises(DocumentError) as caught:
        check_document(broken)
    assert caught.value.path == f"findings[{len(broken['findings']) - 1}].texts.en.detail"
    legacy = {**json.loads(json.dumps(static)), "schema_version": 1}
    with pytest.raises(DocumentError, match="schema_version"):
        check_document(legacy)


def test_a_step_outcome_reads_back_as_it_was_written_and_parts_of_the_wrong_type_read_as_absent() -> None:
    """What a step's child prints (``to_json``) is what the wizard reads back (``from_json``); a part
    of the wrong type (a hand-edited or truncated line) is absent, not passed on."""
    outcome = _outcome("gpu_retry", 12.5, _fell_back())
    written = json.loads(json.dumps(outcome.to_json()))
    again = StepOutcome.from_json(written)
    assert again.to_json() == outcome.to_json()
    assert again.result == outcome.result and again.started == 12.5
    assert [f.id for f in again.findings] == ["inference.fell_back"]
    odd = StepOutcome.from_json(
        {**written, "result": "text", "model": [], "started": "soon", "verdict": 3, "findings": {}}
    )
    assert (odd.result, odd.model, odd.started, odd.verdict, odd.findings) == (None, None, None, None, ())
