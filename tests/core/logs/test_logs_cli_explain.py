"""explain-log end to end: a real subprocess, JSON Lines, stdin, exit codes, both languages."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from fallback_doctor.cli.explain_log import add_parser, run

DATA = Path(__file__).resolve().parents[2] / "data" / "logs"


def explain(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor.cli.explain_log", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_json_lines_one_object_per_file_and_exit_2_for_an_unreadable_one(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    result = explain("--json", str(DATA / "journal.txt"), str(missing), str(DATA / "korean_cp949.log"))
    assert result.returncode == 2
    assert "missing.log" in result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [Path(record["file"]).name for record in records] == ["journal.txt", "korean_cp949.log"]
    first = records[0]["causes"][0]
    assert set(first) >= {"cause", "layer", "confidence", "evidence"}
    assert first["cause"] == "cudnn_missing" and first["layer"] == "cudnn"
    assert first["evidence"][0]["line"] == 3
    assert records[1]["causes"][0]["cause"] == "windows_dll_load_error"


def test_stdin_and_exit_0(tmp_path: Path) -> None:
    text = b"CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version\n"
    result = explain("--json", "-", stdin=text)
    assert result.returncode == 0
    record = json.loads(result.stdout.decode())
    assert record["file"] == "-" and record["causes"][0]["cause"] == "driver_too_old"
    assert record["causes"][0]["evidence"][0]["file"] == "<stdin>"


def test_text_output_in_korean_and_english() -> None:
    korean = explain("--lang", "ko", str(DATA / "windows_utf16le_bom.log"))
    assert korean.returncode == 0
    out = korean.stdout.decode()
    # cublasLt64_12.dll missing: absent, or another CUDA major; the log alone leaves both open
    assert "판단: 로그만으로는 여러 원인" in out and "후보 원인" in out and "cuda_major_mismatch" in out
    assert "windows_utf16le_bom.log:2" in out
    english = explain(str(DATA / "ansi_crlf.log")).stdout.decode()
    assert "Answer: The log leaves several causes open" in english and "Candidate causes" in english


def test_the_three_answers_in_text_and_json() -> None:
    """Named: one first cause. Not said: no cause, and the commands to run there. None: no failure."""
    named = explain(
        "-", stdin=b"Failed to initialize NVML: Driver/library version mismatch\n"
    ).stdout.decode()
    assert "Answer: The log names the cause." in named and "Most likely cause" in named
    fallback = b"UserWarning: Falling back to ['CPUExecutionProvider'] and retrying.\n"
    not_said = explain("--lang", "ko", "-", stdin=fallback).stdout.decode()
    assert "이유는 나와 있지 않아" in not_said and "nvidia-smi" in not_said and "후보 원인" not in not_said
    record = json.loads(explain("--json", "-", stdin=fallback).stdout)
    assert record["outcome"] == "not_said" and record["causes"][0]["cause"] == "unknown"
    calm = json.loads(explain("--json", "-", stdin=b"INFO server started on port 8080\n").stdout)
    assert calm["outcome"] == "no_failure"


def test_bad_arguments_exit_2() -> None:
    assert explain("--lang", "fr", "x.log").returncode == 2


def test_run_directly_with_registered_parser(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "app.log"
    log.write_text("nothing to see\n", encoding="utf-8")
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["explain-log", "--json", str(log)])
    assert run(args) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["causes"][0]["cause"] == "unknown"
