"""The readers of what many hosts send (issue 28): fleet-summary over a hostile status file, and
the check's status line and textfile over any name, provider and message.

Each call runs what a user runs: ``fleet-summary DIR --save --json`` (cli/fleet.py's ``run``)
printing to a strict UTF-8 standard output, as a terminal has; the check's line and textfile
encoded as strict UTF-8. A traceback, a lone surrogate or a raw escape in the output fails.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from strategies import PLANTS, Reader, _short_texts, json_values

STATUS_SCHEMA = "gpu-fallback-doctor/fleet-host"
ESCAPES = ("\x1b]0;PWNED\x07", "\x1b]52;c;cm0gLXJmIH4=\x07", "\u202egnp.exe", "\x9b2J", "\ud800", "\udcff")

_names = st.sampled_from(["h", "dup a", "dup_a", "x" * 300 + ".zip", "h.zip", "../h.zip", "a/b", *ESCAPES])
_hostile_text = st.lists(st.sampled_from([*ESCAPES, *PLANTS]) | st.text(max_size=12), max_size=5).map("".join)
_status_document = st.fixed_dictionaries(
    {"schema": st.just(STATUS_SCHEMA)},
    optional={
        "host": _hostile_text | _names | json_values,
        "state": st.sampled_from(["diagnosed", "unreachable", "tool_failed"]) | json_values,
        "message": _hostile_text | json_values,
        "bundle": _names | json_values,
        "rc": json_values,
    },
)
status_bytes = st.one_of(
    _status_document.map(lambda value: json.dumps(value).encode()),
    st.integers(1, 120_000).map(lambda depth: ("[" * depth + "]" * depth).encode()),
    st.integers(1, 50_000).map(lambda depth: ('{"a":' * depth + "1" + "}" * depth).encode()),
    st.binary(max_size=200),
)
"""A status file: the playbook's document with hostile fields (surrogates as JSON escapes), deep
nesting within the size bound, or any bytes."""

fleet_cases = st.tuples(st.sampled_from(["h", "dup a", "dup_a", "é", "h~0123456789abcdef"]), status_bytes)


def _strict_stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)


def _fleet_summary(case: tuple[str, bytes]) -> object:
    from fallback_doctor.cli.fleet import run

    stem, data = case
    with tempfile.TemporaryDirectory(prefix="gfd-hostile-fleet-") as folder:
        Path(folder, f"{stem}.status.json").write_bytes(data)
        out, err = _strict_stream(), _strict_stream()
        arguments = argparse.Namespace(folder=folder, json=True, html=None, save=True, lang="en")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(arguments)
        printed = out.buffer.getvalue()  # type: ignore[attr-defined]
        assert code in (0, 1), err.buffer.getvalue()  # type: ignore[attr-defined]
        assert b"\x1b" not in printed and "\u202e".encode() not in printed
        assert json.loads(printed)["hosts_total"] == 1
        for name in ("fleet-summary.txt", "fleet-summary.json", "fleet-summary.html"):
            saved = Path(folder, name).read_text(encoding="utf-8")  # strict: no lone surrogate
            assert "\x1b" not in saved and "\u202e" not in saved, name
    return printed


def _check_line(case: tuple[str, str, str]) -> object:
    from fallback_doctor.core.watch.check import State, WatchResult, status_line
    from fallback_doctor.core.watch.textfile import render_textfile

    name, provider, message = case
    result = WatchResult(State.WARNING, "no_onnxruntime", message, name, provider or None)
    line = status_line(result)
    line.encode("utf-8")
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    return render_textfile(result, name).encode("utf-8")


check_cases = st.tuples(_hostile_text, _short_texts, _hostile_text)


def fleet_readers() -> list[Reader]:
    """The fleet-summary and check readers (added to strategies.readers())."""
    examples: tuple[Any, ...] = (
        ("h", json.dumps({"schema": STATUS_SCHEMA, "host": "h\ud800", "message": "\x1b]0;x\x07"}).encode()),
        ("h", b"[" * 100_000 + b"]" * 100_000),
        ("h", json.dumps({"schema": STATUS_SCHEMA, "host": "h", "bundle": "x" * 300 + ".zip"}).encode()),
    )
    return [
        Reader(
            "fleet-summary over a status file (--save --json)", fleet_cases, _fleet_summary, examples=examples
        ),
        Reader(
            "check status line and textfile",
            check_cases,
            _check_line,
            examples=(("enc\udcffder", "cuda\ud800", "\x1b]0;PWNED\x07 | x\ny"),),
        ),
    ]
