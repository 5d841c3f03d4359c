"""The redaction's search shortcuts find exactly what the plain patterns find.

`anchored_finditer` (tries a pattern only near a literal every match holds) and `starts_finditer`
(only where a match can start) replace `pattern.finditer` in the detectors for speed
(benchmarks/bench_redact.py); the plain `finditer` is the oracle here, on texts made of the
pieces those patterns care about.
"""

from __future__ import annotations

import re

from fallback_doctor.core.redaction import detect_identities, detect_secrets
from fallback_doctor.core.redaction.scan import (
    anchored_finditer,
    first_character_patterns,
    occurrences,
    starts_finditer,
)
from hypothesis import given, settings
from hypothesis import strategies as st

_PIECES = [
    *("host", "HOST", "Hostname", "host_name", "server", "node", "node_name", "fqdn", "db_host"),
    *("user", "root", "alice", "a", "Z", "x" * 20, "1", "10", "0.5", "İ"),
    *("=", ":", " ", "\t", "\n", '"', "'", "@", "://", "http", "svc+ssh", ".", "-", "_", "~", "/"),
    *("@gpu-7:~$", "//u:p@h", ".internal", ".com", " fqdn=", "hostname: ", " server=", "=gpu7"),
]
TEXTS = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)


def _bounds(text: str, data: st.DataObject) -> tuple[int, int]:
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    end = data.draw(st.integers(min_value=start, max_value=len(text)))
    return start, end


def _spans(matches: object) -> list[tuple[int, int]]:
    return [match.span() for match in matches]  # type: ignore[attr-defined]


ANCHORED = [
    (detect_identities._PROMPT, "@", 32),
    (detect_identities._URL_HOST, "://", 16),
    (detect_identities._EMAIL, "@", 64),
    (detect_secrets._URL_USERINFO, "://", 16),
]


@settings(max_examples=400)
@given(TEXTS, st.data())
def test_anchored_search_finds_what_finditer_finds(text: str, data: st.DataObject) -> None:
    start, end = _bounds(text, data)
    for pattern, anchor, reach in ANCHORED:
        expected = _spans(pattern.finditer(text, start, end))
        assert _spans(anchored_finditer(pattern, text, start, end, anchor, reach)) == expected, pattern


@settings(max_examples=400)
@given(TEXTS, st.data())
def test_host_variables_found_from_their_starts_as_by_finditer(text: str, data: st.DataObject) -> None:
    start, end = _bounds(text, data)
    pattern, starts = detect_identities._HOST_VAR, detect_identities._HOST_VAR_STARTS
    expected = _spans(pattern.finditer(text, start, end))
    assert _spans(starts_finditer(pattern, text, start, end, starts)) == expected


@settings(max_examples=400)
@given(TEXTS, st.lists(st.sampled_from(["host", "ho", "alice", "@", "x" * 20, "::", ":"]), min_size=1))
def test_occurrences_are_every_find_of_every_literal(text: str, literals: list[str]) -> None:
    expected = {(m.start(), lit) for lit in set(literals) for m in re.finditer(f"(?={re.escape(lit)})", text)}
    assert set(occurrences(text, first_character_patterns(literals))) == expected
