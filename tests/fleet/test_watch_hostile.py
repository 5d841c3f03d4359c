"""`fallback-doctor check` against hostile surroundings (issue 28): a process that only names the
Bareun root in its arguments, a ``--name`` that is not UTF-8, and outside text of any kind in the
status line and the textfile."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fallback_doctor.core.watch.check import State, WatchResult, status_line
from fallback_doctor.core.watch.textfile import render_textfile
from hypothesis import example, given, settings
from hypothesis import strategies as st

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is in the test extras")


def check(*args: str | bytes, timeout: float = 120) -> tuple[int, bytes, bytes, float]:
    """``fallback-doctor check ARGS`` (arguments as bytes where they are not UTF-8)."""
    command: list[str | bytes] = [sys.executable, "-m", "fallback_doctor", "check", *args]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


@pytest.mark.scenario
def test_a_viewer_with_the_configuration_open_is_not_taken_for_the_server(tmp_path: Path) -> None:
    """Before: the oldest process with the root in its first two arguments was the server, so
    ``tail <root>/config/bareun.json -f`` (as ``less`` left open) turned CRITICAL into a WARNING."""
    from fleet_hosts import bareun_host
    from servers import loader

    root = Path(bareun_host(tmp_path / "install", lib="cpu")["fallback_doctor_bareun_root"])
    viewer = subprocess.Popen(
        ["tail", str(root / "config" / "bareun.json"), "-f"],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        time.sleep(0.3)  # the viewer is the oldest process that names the root
        with loader([root / "lib" / "libonnxruntime.so.1"], tmp_path / "server") as server:
            code, out, err, _ = check("--bareun-root", str(root), "--no-log")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(viewer.pid, signal.SIGKILL)
        viewer.wait(timeout=10)
    line = out.decode()
    assert code == 2, (line, err.decode(errors="replace"))
    assert line.startswith("CRITICAL - bareun on the CPU: "), line
    assert str(viewer.pid) not in line and server.pid


def test_a_name_that_is_not_utf8_is_escaped_in_the_line_and_the_textfile(tmp_path: Path) -> None:
    prom = tmp_path / "check.prom"
    name = b"enc\xff\x1b]0;PWNED\x07der"
    code, out, err, seconds = check(
        "--bareun-root", str(tmp_path / "none"), "--name", name, "--prometheus", str(prom)
    )
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert code == 3 and out.startswith(b"UNKNOWN - "), (out, err)
    assert b"\x1b" not in out and b"\x07" not in out
    text = prom.read_text(encoding="utf-8")  # strict UTF-8
    families = {family.name: family for family in parser.text_string_to_metric_families(text)}
    [status] = families["fallback_doctor_check_status"].samples
    assert status.value == 3 and status.labels["target"] == "enc\\udcff\x1b]0;PWNED\x07der"
    assert seconds < 5 + 3


_ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT, _ANY_TEXT)
@example("enc\udcffder", "cuda\ud800")
@example("\x1b]52;c;cm0gLXJmIH4=\x07", "\u202ecpu\x9b2J")
def test_any_name_and_provider_make_one_safe_line_and_a_utf8_textfile(name: str, provider: str) -> None:
    result = WatchResult(State.WARNING, "no_onnxruntime", f"{name} (pid 1) has not loaded it", name, provider)
    line = status_line(result)
    line.encode("utf-8")
    assert "\n" not in line and line.count("|") == 1
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2066" for c in line)
    text = render_textfile(result, name)
    families = {f.name: f for f in parser.text_string_to_metric_families(text.encode("utf-8").decode())}
    assert families["fallback_doctor_check_status"].samples[0].value == 1


def test_a_bad_argument_that_is_not_utf8_is_unknown_and_escaped() -> None:
    """argparse's "unrecognized arguments" repeats them raw: before, their escapes reached Nagios."""
    code, out, err, _ = check("--no-log", b"x\xff\x1b]0;PWNED\x07")
    assert code == 3 and out.startswith(b"UNKNOWN - "), (out, err)
    assert b"Traceback" not in err and b"\x1b" not in out and b"\\udcff" in out
