"""Every reader of outside input, fed by Hypothesis: no input makes a traceback.

The quick run (each reader 100 examples) is part of the ordinary suite; the slow run (marker
``slow``, run by ``make test`` on both cores) tries 10,000 examples per reader. The costly readers'
10,000 are split into shards of independent random examples, so that the two test workers finish
together. The counts of a run are appended to ``$GFD_HOSTILE_COUNTS`` when set (one line per
reader and shard).
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
SLOW_EXAMPLES = 10_000
#: reader name -> shards its 10,000 examples are split into (the costliest, a few ms each).
SHARDS = {
    "report document through export": 4,
    "bareun.json through the redactor": 3,
    "bundle zip: open and show": 2,
    "fleet-summary over a status file (--save --json)": 2,
}
SLOW_CASES = [
    (reader, shard, SHARDS.get(reader.name, 1))
    for reader in sorted(READERS, key=lambda reader: -SHARDS.get(reader.name, 1))
    for shard in range(SHARDS.get(reader.name, 1))
]


def _check(reader: Reader, value: object) -> None:
    TRIED[reader.name] += 1
    try:
        reader.call(value)
    except reader.refusals:
        pass  # the reader's documented refusal (a sentence, not a crash)


def _run(reader: Reader, chosen: settings, shard: str = "1/1") -> None:
    before = TRIED[reader.name]

    @chosen
    @given(reader.strategy)
    def property_(value: object) -> None:
        _check(reader, value)

    for example in reader.examples:
        _check(reader, example)
    property_()
    counts = os.environ.get("GFD_HOSTILE_COUNTS")
    if counts:
        tried = TRIED[reader.name] - before
        with open(counts, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"reader": reader.name, "shard": shard, "tried": tried}) + "\n")


@pytest.mark.parametrize("reader", READERS, ids=[reader.name for reader in READERS])
def test_no_input_makes_a_traceback(reader: Reader) -> None:
    _run(reader, _QUICK)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reader", "shard", "shards"),
    SLOW_CASES,
    ids=[f"{reader.name} {shard + 1}/{shards}" for reader, shard, shards in SLOW_CASES],
)
def test_no_input_makes_a_traceback_10000_examples(reader: Reader, shard: int, shards: int) -> None:
    examples = -(-SLOW_EXAMPLES // shards)  # the shards together: at least 10,000
    chosen = settings(
        max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    _run(reader, chosen, f"{shard + 1}/{shards}")
