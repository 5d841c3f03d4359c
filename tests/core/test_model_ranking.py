"""Ranking: configuration first, then errors lowest layer first, then warnings, then info."""

from __future__ import annotations

from fallback_doctor.core.model.result import LAYER_ORDER, Finding, Layer, Severity, rank_findings
from hypothesis import given
from hypothesis import strategies as st


def _finding(layer: Layer, severity: Severity, name: str = "x") -> Finding:
    return Finding(
        id=f"{layer}.{name}", cause="unknown", layer=layer, severity=severity, title=name, detail=""
    )


def test_lowest_broken_layer_comes_first() -> None:
    ranked = rank_findings(
        [
            _finding(Layer.PACKAGE, Severity.ERROR),
            _finding(Layer.CUDA, Severity.ERROR),
            _finding(Layer.DRIVER, Severity.ERROR),
        ]
    )
    assert [f.layer for f in ranked] == [Layer.DRIVER, Layer.CUDA, Layer.PACKAGE]


def test_configuration_outranks_everything_even_as_information() -> None:
    ranked = rank_findings(
        [
            _finding(Layer.DRIVER, Severity.ERROR),
            _finding(Layer.CONFIG, Severity.INFO),
        ]
    )
    assert ranked[0].layer == Layer.CONFIG


def test_errors_before_warnings_before_information() -> None:
    ranked = rank_findings(
        [
            _finding(Layer.DRIVER, Severity.INFO),
            _finding(Layer.TENSORRT, Severity.WARNING),
            _finding(Layer.PACKAGE, Severity.ERROR),
        ]
    )
    assert [f.severity for f in ranked] == [Severity.ERROR, Severity.WARNING, Severity.INFO]


layers = st.sampled_from(list(Layer))
severities = st.sampled_from(list(Severity))


@given(st.lists(st.tuples(layers, severities), max_size=30))
def test_ranking_is_a_stable_permutation(pairs: list[tuple[Layer, Severity]]) -> None:
    findings = [_finding(layer, severity, str(i)) for i, (layer, severity) in enumerate(pairs)]
    ranked = rank_findings(findings)
    assert sorted(f.id for f in ranked) == sorted(f.id for f in findings)
    keys = [
        (0 if f.layer == Layer.CONFIG else 1, list(Severity).index(f.severity), LAYER_ORDER.index(f.layer))
        for f in ranked
    ]
    assert keys == sorted(keys)
