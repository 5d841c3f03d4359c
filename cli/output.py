"""Printing what came from outside (a bundle, a configuration, a log) to a terminal, safely.

- Text: control characters are shown, not obeyed (core/views/escape.py: one rule for every front end,
  the fleet summary and the check's status line included). ESC, BEL, BS, CR, DEL, the C1 controls
  (8-bit CSI and OSC), bidirectional overrides and lone surrogates become visible escapes
  (``\\x1b``, ``\\u202e``), so a bundle cannot set the window title (OSC 0), clear the screen,
  write the clipboard (OSC 52) or reorder what is shown. Newlines and tabs stay.
- JSON: always a whole, valid document or nothing. It is built in memory first; a lone surrogate
  (``"\\ud800"`` in a bareun.json) is written as its JSON escape, C1 and bidirectional controls
  too; a value that cannot be JSON means nothing on standard output, a sentence on standard error
  and exit status 2.

By hand: ``cat -v FILE`` shows control characters the same way.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
from typing import IO, Any

from fallback_doctor.core.door import visible

EXIT_UNPRINTABLE = 2

_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
"""What json.dumps(ensure_ascii=False) leaves raw but a terminal must not get (C0 it escapes itself)."""


TEXT_WIDTH = 100
"""The report's width when standard output is not a terminal and COLUMNS is not set."""


def terminal_width() -> int | None:
    """The width of the terminal the report goes to (COLUMNS first), 40 at the least; None when
    standard output is a pipe or a file and COLUMNS is not set.

    By hand: ``tput cols`` (or ``echo $COLUMNS``).
    """
    if not os.environ.get("COLUMNS", "").strip().isdigit() and not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size((TEXT_WIDTH, 24)).columns)


def text_options() -> dict[str, Any]:
    """How render_text lays the report out for this standard output: the terminal's width, every
    line of prose wrapped; into a pipe, the report's own width and whole lines for grep."""
    width = terminal_width()
    return {"width": width or TEXT_WIDTH, "wrap_prose": width is not None}


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def json_text(document: object) -> str:
    """The document as pretty JSON that is safe on a terminal; ValueError when it is not JSON."""
    try:
        text = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError:
        # NaN or infinity somewhere: JSON has no such numbers; they are written as null.
        text = json.dumps(_finite(document), ensure_ascii=False, indent=2, allow_nan=False)
    except (TypeError, RecursionError) as error:
        raise ValueError(f"the report cannot be written as JSON ({error})") from None
    # These characters can only stand inside JSON strings, where an escape means the same.
    return _JSON_UNSAFE.sub(_json_escape, text)


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _write(stream: IO[str], text: str) -> None:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode(encoding, errors="backslashreplace"))
        buffer.flush()
    else:
        stream.write(text.encode(encoding, errors="backslashreplace").decode(encoding))
    stream.flush()


def write_text(text: str, stream: IO[str] | None = None) -> None:
    """Print ``text`` (a report, an origin line) with its control characters made visible."""
    stream = sys.stdout if stream is None else stream
    stream.flush()
    _write(stream, visible(text))


def write_error(text: str) -> None:
    """One message on standard error, control characters made visible, newline added."""
    write_text(text.rstrip("\n") + "\n", sys.stderr)


def write_json(document: object, stream: IO[str] | None = None) -> int:
    """Print ``document`` as whole JSON and return 0, or print nothing and return 2 (said on stderr)."""
    stream = sys.stdout if stream is None else stream
    try:
        text = json_text(document) + "\n"
    except ValueError as error:
        write_error(f"fallback-doctor: {error}")
        return EXIT_UNPRINTABLE
    stream.flush()
    _write(stream, text)
    return 0
