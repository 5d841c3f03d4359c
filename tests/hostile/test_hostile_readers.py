"""Every reader of outside input, fed by Hypothesis: no input makes a traceback.

The quick run (each reader a few hundred examples) is part of the ordinary suite; the slow run
(marker ``slow``) tries 10,000 examples per reader. The counts of the last run are written to
``$GFD_HOSTILE_COUNTS`` when set (for the closing note).
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from strategies import Reader, readers

READERS = readers()
TRIED: Counter[str] = Counter()
_QUICK = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_SLOW = settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _check(reader: Reader, value: object) -> None:
    TRIED[reader.name] += 1
    try:
        reader.call(value)
    except reader.refusals:
        pass  # the reader's documented refusal (a sentence, not a crash)


def _run(reader: Reader, chosen: settings) -> None:
    @chosen
    @given(reader.strategy)
    def property_(value: object) -> None:
        _check(reader, value)

    for example in reader.examples:
        _check(reader, example)
    property_()
    counts = os.environ.get("GFD_HOSTILE_COUNTS")
    if counts:
        with open(counts, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"reader": reader.name, "tried": TRIED[reader.name]}) + "\n")


@pytest.mark.parametrize("reader", READERS, ids=[reader.name for reader in READERS])
def test_no_input_makes_a_traceback(reader: Reader) -> None:
    _run(reader, _QUICK)


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS, ids=[reader.name for reader in READERS])
def test_no_input_makes_a_traceback_10000_examples(reader: Reader) -> None:
    _run(reader, _SLOW)
