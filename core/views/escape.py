"""Showing text that came from outside (a bundle, a status file, a command line) on a terminal.

Control characters are shown, not obeyed: ESC, BEL, BS, CR, DEL, the C1 controls (8-bit CSI and
OSC), bidirectional overrides and lone surrogates become visible escapes (``\\x1b``, ``\\u202e``,
``\\udcff``), so outside text cannot set the window title (OSC 0), write the clipboard (OSC 52),
clear the screen or reorder what is shown, and it can always be encoded as UTF-8. Newlines and
tabs stay. The one rule for every front end: cli/output.py prints through it, the fleet summary
and the check's status line use it.

By hand: ``cat -v FILE`` shows control characters the same way.
"""

from __future__ import annotations

_UNSAFE_CODES = [  # all but newline and tab that a terminal obeys or that reorders text; surrogates
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0xFEFF,
    *range(0xD800, 0xE000),
]


def _escape_of(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE = {code: _escape_of(code) for code in _UNSAFE_CODES}
"""str.translate's table: one pass in C (a regular expression with a Python callback
cost 2 µs per escaped character: 6 s for a fleet folder of escape-filled host names)."""
_TABLE_ON_ONE_LINE = {**_TABLE, 0x0A: _escape_of(0x0A), 0x09: _escape_of(0x09)}


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape (newlines and tabs kept)."""
    return text.translate(_TABLE)


def visible_line(text: str) -> str:
    """``text`` as one line: control characters, newlines and tabs shown as escapes."""
    return text.translate(_TABLE_ON_ONE_LINE)
