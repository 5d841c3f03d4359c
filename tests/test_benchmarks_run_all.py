"""benchmarks/run_all.py: the result-line convention, the failures it reports, the table it writes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _common  # noqa: E402
import run_all  # noqa: E402


def test_every_benchmark_script_follows_the_naming_convention() -> None:
    found = run_all.discover()
    assert found, "no benchmarks/bench_*.py"
    for path in found:
        text = path.read_text(encoding="utf-8")
        assert "def main(" in text, path.name


def test_a_result_line_is_read_back_with_the_ratio() -> None:
    line = _common.result_line(
        "x", [_common.row("a", 90.0, 100.0, aim="at most 1.0x", met=True), _common.row("b", None)]
    )
    result = run_all.parse_result("some words\n" + line + "\n")
    assert result is not None
    assert result["benchmark"] == "x"
    assert result["rows"][0]["ratio"] == pytest.approx(0.9)
    assert result["rows"][0]["met"] is True
    assert result["rows"][1]["now"] is None and result["rows"][1]["met"] is None


@pytest.mark.parametrize("stdout", ["", "no json here\n", "{not json}\n", '{"rows": "x"}\n', "[1, 2]\n"])
def test_output_without_a_result_line_reads_as_none(stdout: str) -> None:
    assert run_all.parse_result(stdout) is None


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "bench_fake.py"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_failing_or_silent_benchmark_is_listed_not_dropped(tmp_path: Path) -> None:
    env = dict(os.environ)
    crashed = run_all.run_one(_script(tmp_path, "raise SystemExit('boom')\n"), env, 60)
    assert crashed["benchmark"] == "fake" and "exited with status 1" in crashed["rows"][0]["note"]
    silent = run_all.run_one(_script(tmp_path, "print('hello')\n"), env, 60)
    assert "no result line" in silent["rows"][0]["note"]
    slow = run_all.run_one(_script(tmp_path, "import time; time.sleep(30)\n"), env, 1)
    assert "did not finish within 1 s" in slow["rows"][0]["note"]
    line = json.dumps({"benchmark": "fake", "rows": [{"what": "w", "now": 2, "peer": 4, "unit": "ms"}]})
    good = run_all.run_one(_script(tmp_path, f"print({line!r})\n"), env, 60)
    assert good["rows"][0]["ratio"] == pytest.approx(0.5)


def test_the_table_replaces_only_its_own_section(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(
        f"# Perf\n\nby hand\n\n{run_all.BEGIN}\nold table\n{run_all.END}\n\nafter\n", encoding="utf-8"
    )
    results = [
        {
            "benchmark": "x",
            "seconds": 3.0,
            "rows": [
                run_all._clean_row(_common.row("quick | json", 90.0, 100.0, aim="at most 1.0x", met=True))
            ],
        }
    ]
    section = run_all.render(results, "2026-12-03 08:00 UTC", "a machine", quick=False)
    run_all.write_section(section, doc)
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Perf\n\nby hand\n\n") and text.rstrip().endswith("after")
    assert "old table" not in text
    assert "| quick \\| json | 90.0 ms | 100 ms | 0.90x | at most 1.0x | yes | `bench_x.py` (3 s) |" in text
    assert "2026-12-03 08:00 UTC" in text and "a machine" in text
    run_all.write_section(section, doc)  # idempotent
    assert doc.read_text(encoding="utf-8") == text


def test_paired_rounds_alternate_and_measure_both(tmp_path: Path) -> None:
    marker = tmp_path / "order.txt"
    ours = [sys.executable, "-c", f"open({str(marker)!r}, 'a').write('a')"]
    theirs = [sys.executable, "-c", f"open({str(marker)!r}, 'a').write('b')"]
    a, b = _common.paired(ours, theirs, dict(os.environ), 4)
    assert len(a) == len(b) == 4 and all(value > 0 for value in a + b)
    assert marker.read_text() == "ab" + "ab" + "ba" + "ab" + "ba"  # warm-ups, then alternating


def test_a_partial_run_keeps_the_other_benchmarks_with_their_date() -> None:
    old = [
        {"benchmark": "a", "when": "day 1", "where": "m", "rows": [run_all._clean_row({"what": "a1"})]},
        {"benchmark": "b", "when": "day 1", "where": "m", "rows": [run_all._clean_row({"what": "b1"})]},
    ]
    fresh = [{"benchmark": "b", "when": "day 2", "where": "m", "rows": [run_all._clean_row({"what": "b2"})]}]
    merged = run_all.merge(old, fresh)
    assert [(r["benchmark"], r["rows"][0]["what"]) for r in merged] == [("a", "a1"), ("b", "b2")]
    section = run_all.render(merged, "day 2", "m", quick=False)
    assert "`bench_a.py` kept from day 1 on: m." in section
    assert "`bench_b.py` kept" not in section
