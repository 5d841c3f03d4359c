"""Read bareun.json: decode it, parse it with positions, check it, keep its text for the report.

By hand: ``python -m json.tool $BAREUN_ROOT/config/bareun.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from fallback_doctor.core.model.facts.target import ConfigIssue
from fallback_doctor.core.platform.files import read_regular_file
from fallback_doctor.core.readers.targets.bareun_reader import (
    CONFIG_TEXT_LIMIT,
    KEY_LINE_KEYS,
    MAX_CONFIG_BYTES,
    BareunConfig,
    _Reader,
    _shorten,
)
from fallback_doctor.core.readers.targets.jsonpos import (
    JsonPositionError,
    TextPositions,
    parse_with_positions,
)


def read_config(path: str, env: Mapping[str, str], root: str | None) -> BareunConfig:
    """Read bareun.json: parse it with positions and check every key this tool knows.

    Never raises for the file's content: an unreadable, malformed or ill-typed file
    becomes ConfigIssues with line and column. By hand: ``python -m json.tool bareun.json``.
    """
    try:  # never blocks: a FIFO (or a device) as bareun.json is refused at once, by name
        data = read_regular_file(path, MAX_CONFIG_BYTES + 1)
    except OSError as error:
        config = BareunConfig(path=path)
        code = "config_missing" if isinstance(error, FileNotFoundError) else "unreadable"
        reason = str(error.strerror or error).removeprefix(f"{path}: ")
        config.issues.append(
            ConfigIssue(
                code, "error", None, 1, 1, f"{path}: {reason}", params={"file": path, "error": reason}
            )
        )
        return config
    return read_config_bytes(path, data[:MAX_CONFIG_BYTES], env, root)


def read_config_bytes(path: str, data: bytes, env: Mapping[str, str], root: str | None) -> BareunConfig:
    """The same as read_config, for bytes already read (tests, pasted text)."""
    issues: list[ConfigIssue] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        issues.append(
            ConfigIssue(
                "bom",
                "warning",
                None,
                1,
                1,
                "the file starts with a UTF-8 byte order mark, which strict JSON readers refuse",
                params={"file": path},
            )
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as decode_error:
        bad = decode_error.start
        line = data.count(b"\n", 0, bad) + 1
        line_start = data.rfind(b"\n", 0, bad) + 1
        column = len(data[line_start:bad].decode("utf-8", errors="replace")) + 1
        text = data.decode("utf-8", errors="replace")
        byte = f"0x{data[bad]:02x}"
        issues.append(
            ConfigIssue(
                "not_utf8",
                "error",
                None,
                line,
                column,
                f"byte {byte} is not UTF-8 (saved in another encoding, e.g. CP949?)",
                line_text=_shorten(TextPositions(text).line_text(line), 300),
                params={"file": path, "line": str(line), "column": str(column), "byte": byte},
            )
        )
    reader = _Reader(path, text, env, root)
    reader.config.issues.extend(issues)
    reader.config.text = text
    try:
        node = parse_with_positions(text)
    except JsonPositionError as parse_error:
        error = parse_error
        message = _malformed_message(error, text)
        code = "malformed.backslash" if "backslash" in message else "malformed"
        reader.issue(code, "error", None, error.line, error.column, message, error=error.message)
        reader.config.key_lines = key_lines_by_text(text)
        return reader.config
    reader.read(node)
    try:
        reader.config.data = json.loads(text)
    except (ValueError, RecursionError):
        reader.config.data = None
    return reader.config


def key_lines_by_text(text: str) -> dict[str, int]:
    """Where the keys that matter are written in a text that is not valid JSON: the first line
    holding ``"key":``, a best guess for a malformed file. By hand: ``grep -n '"libPath"' bareun.json``."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        for key in KEY_LINE_KEYS:
            if key not in found and re.search(rf'"{key}"\s*:', line):
                found[key] = number
    return found


def config_text_for_report(text: str | None) -> tuple[str | None, str | None]:
    """The text the report keeps (at most CONFIG_TEXT_LIMIT characters, cut at a line) and a note when cut."""
    if text is None or len(text) <= CONFIG_TEXT_LIMIT:
        return text, None
    cut = text.rfind("\n", 0, CONFIG_TEXT_LIMIT)
    kept = text[: cut + 1 if cut > 0 else CONFIG_TEXT_LIMIT]
    note = (
        f"the configuration is {len(text)} characters long; the report keeps its first {len(kept)} "
        f"({kept.count(chr(10))} lines)"
    )
    return kept, note


def _malformed_message(error: JsonPositionError, text: str) -> str:
    message = f"not valid JSON: {error.message}"
    segment = text[text.rfind('"', 0, error.offset) + 1 : error.offset]
    if error.message.startswith("Invalid \\escape") and re.match(r"[A-Za-z]:(?:$|[\\/])", segment):
        message += " (a Windows path needs each backslash written twice, or written as /)"
    return message
