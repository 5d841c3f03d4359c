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

import re

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
"""Everything but newline and tab that a terminal obeys or that reorders text (and lone surrogates)."""

_UNSAFE_ON_ONE_LINE = re.compile(UNSAFE.pattern[:-1] + "\n\t]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape (newlines and tabs kept)."""
    return UNSAFE.sub(_escape, text)


def visible_line(text: str) -> str:
    """``text`` as one line: control characters, newlines and tabs shown as escapes."""
    return _UNSAFE_ON_ONE_LINE.sub(_escape, text)
