"""The textfile's text format, checked by Prometheus' own parser for any label text."""

from __future__ import annotations

from pathlib import Path

import pytest
from fallback_doctor.core.watch.check import State, WatchResult, status_line
from fallback_doctor.core.watch.textfile import render_textfile, write_textfile
from hypothesis import given, settings
from hypothesis import strategies as st

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is in the test extras")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.text(max_size=20), st.sampled_from(list(State)))
def test_any_target_name_and_provider_round_trip_through_the_parser(
    name: str, provider: str, state: State
) -> None:
    result = WatchResult(state, "not_running", "message | with a bar\nand a newline", name, provider or None)
    families = {f.name: f for f in parser.text_string_to_metric_families(render_textfile(result, name))}
    [status] = families["fallback_doctor_check_status"].samples
    assert status.labels == {"target": name} and status.value == state.value
    [configured] = families["fallback_doctor_configured_provider_info"].samples
    assert configured.labels["provider"] == (provider or "unknown")
    assert families["fallback_doctor_check_status"].type == "gauge"
    line = status_line(result)
    assert "\n" not in line and line.count("|") == 1 and line.startswith(f"{state.name} - ")


def test_the_file_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "fallback_doctor.prom"
    target.write_text("old\n")
    result = WatchResult(State.UNKNOWN, "not_running", "no running server process found", "server")
    write_textfile(target, render_textfile(result))
    assert "fallback_doctor_check_status" in target.read_text()
    assert [path.name for path in tmp_path.iterdir()] == ["fallback_doctor.prom"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_bad_value_on_the_command_line_is_unknown_for_nagios() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "check", "--pid", "abc"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 3 and proc.stdout.startswith("UNKNOWN - "), (proc.stdout, proc.stderr)
