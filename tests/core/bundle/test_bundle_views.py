"""The decoded views' escape search: the fast candidate search finds what the plain pattern finds."""

from __future__ import annotations

from fallback_doctor.core.redaction.views import _ESCAPE, _escape_search, decoded_views
from hypothesis import given, settings
from hypothesis import strategies as st

_ESCAPE_HEAVY = st.text(alphabet='\\%u0D8c9aFfn/"bx \n가🔧', max_size=200)


@settings(max_examples=500)
@given(_ESCAPE_HEAVY, st.lists(st.integers(min_value=0, max_value=220), max_size=8))
def test_the_candidate_search_finds_what_the_pattern_finds(text: str, jumps: list[int]) -> None:
    search = _escape_search(text)
    position = 0
    for jump in [0, *sorted(jumps)]:
        position = max(position, jump)
        fast, plain = search(position), _ESCAPE.search(text, position)
        assert (fast and fast.span()) == (plain and plain.span())
        if plain is not None:
            position = plain.end()


def test_escapes_are_decoded_on_their_lines_only() -> None:
    text = "plain line 100%\n" * 3 + 'key: \\"pass\\u0077ord\\" %2Fhome%2Falice 50%zz\n' + "tail\\"
    views = decoded_views(text)
    assert views and '"password" /home/alice' in views[0].text
    assert "plain line" not in views[0].text
