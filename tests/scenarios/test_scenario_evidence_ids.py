"""Every evidence item the checks made in the scenario documents carries catalogue ids (issue 24).

Words are chosen where the document is shown: a label, a value and a source are said by ids of
resources/texts/evidence/*.json that exist in English and Korean, with their parameters; a value
without an id is data (a path, a version, a system's own message), shown as written.
"""

from __future__ import annotations

import string
from typing import Any

import pytest
import scenario_runs as runs
from fallback_doctor.core.language.evidence_text import RECORD_ENGLISH, evidence_words
from fallback_doctor.core.language.texts import load_labels


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _param_ids(param: Any) -> list[str]:
    """The catalogue ids inside a parameter (words within words)."""
    if isinstance(param, dict) and "id" in param:
        nested = [i for value in dict(param.get("params") or {}).values() for i in _param_ids(value)]
        return [str(param["id"]), *nested]
    if isinstance(param, list):
        return [i for item in param for i in _param_ids(item)]
    return []


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_every_evidence_item_is_said_by_ids_in_english_and_korean(diagnosis, scenario_id):
    diag = diagnosis(scenario_id)
    labels = load_labels()
    seen = 0
    for finding in diag.findings:
        for item in finding.get("evidence") or []:
            seen += 1
            where = f"{finding['id']}: {item.get('label')!r}"
            assert item.get("label_id"), f"{where} has no label id"
            ids = [item.get(f"{part}_id") for part in ("label", "value", "source")]
            params = dict(item.get("params") or {})
            ids += [i for value in params.values() for i in _param_ids(value)]
            for key in filter(None, ids):
                assert key in labels, f"{where}: {key} is not in resources/texts/evidence/"
                assert labels[key].get("en") and labels[key].get("ko"), f"{where}: {key} lacks a language"
            label_id = str(item["label_id"])
            assert _fields(labels[label_id]["en"]) <= set(params), where
            if item.get("value_id") not in (None, RECORD_ENGLISH):
                assert _fields(labels[str(item["value_id"])]["en"]) <= set(params), where
            english = evidence_words(item, "en")
            assert english[:2] == (item["label"], item["value"]), where
    assert seen, diag.describe()
