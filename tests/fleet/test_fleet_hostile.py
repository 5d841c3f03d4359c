"""fleet-summary against a hostile fleet folder (issue 28): special files, huge and deep status
files, terminal escapes, lone surrogates, names too long, folders where files go, and hosts that
would be merged, dropped or relabelled. Each runs the real command in a child, with a deadline,
and measures its time and peak memory (every refusal under 5 s, under 300 MB)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.export import BundleOptions, export_bundle
from fallback_doctor.core.fleet.hosts import file_stem, read_fleet

STATUS = {"schema": "gpu-fallback-doctor/fleet-host", "schema_version": 1, "rc": 0}
TITLE = "\x1b]0;PWNED\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
BIDI = "\u202egnp.exe"
LIMIT_S = 5.0
LIMIT_MB = 300


@dataclass(frozen=True)
class Run:
    """One ``fleet-summary`` child: exit status, output, seconds and peak memory (MB)."""

    code: int
    out: bytes
    err: bytes
    seconds: float
    peak_mb: float


def summary(folder: Path, *args: str, timeout: float = 60) -> Run:
    """``fallback-doctor fleet-summary FOLDER ARGS`` in a child whose peak memory is measured."""
    script = (
        "import resource, subprocess, sys, json\n"
        "proc = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "sys.stdout.buffer.write(json.dumps([proc.returncode, proc.stdout.decode('latin-1'),"
        " proc.stderr.decode('latin-1'), peak]).encode())\n"
    )
    command = [sys.executable, "-m", "fallback_doctor", "fleet-summary", str(folder), *args]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, *command], capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"fleet-summary did not finish in {timeout} s")
    seconds = time.monotonic() - started
    code, out, err, peak = json.loads(proc.stdout)
    return Run(code, out.encode("latin-1"), err.encode("latin-1"), seconds, peak / 1024)


def _bounded(run: Run) -> None:
    assert b"Traceback" not in run.err, run.err.decode(errors="replace")
    assert run.seconds < LIMIT_S + 3, run.seconds  # + the interpreter's start-up
    assert run.peak_mb < LIMIT_MB, run.peak_mb


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, diagnose, diagnosis_document
    from fallback_doctor.core.readers.collect.run import CollectRequest

    diagnosis = diagnose(DiagnoseRequest(collect=CollectRequest(python=sys.executable), quick=True))
    return diagnosis_document(diagnosis)


def bundle(document: dict[str, Any], path: Path, host: str | None = None, **changes: Any) -> Path:
    """A real bundle of ``document`` (changed by ``changes``), made for fleet host ``host``."""
    options = BundleOptions(lang="en", fleet_host=host)
    export_bundle({**document, **changes}, path, options=options, mapping_directory=path.parent / ".maps")
    return path


def status(folder: Path, host: str, name: str | None = None, **fields: Any) -> Path:
    """A status file as the playbook writes it (``name``: another file name than the host's)."""
    path = folder / f"{name or file_stem(host)}.status.json"
    path.write_text(json.dumps({**STATUS, "host": host, "state": "diagnosed", **fields}), encoding="utf-8")
    return path


def test_a_fifo_as_a_status_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.status.json")
    os.mkfifo(tmp_path / f"{file_stem('dup a')}.status.json")  # a hashed stem names no other host
    run = summary(tmp_path, "--json", timeout=30)
    _bounded(run)
    rows = json.loads(run.out)["hosts"]
    assert [row["host"] for row in rows] == [file_stem("dup a"), "pipe"]
    for row in rows:
        assert row["state"] == "tool_failed" and "FIFO" in row["message"] and row["identity"] is None


@pytest.mark.parametrize("kind", ["link to /dev/zero", "sparse 3 GB file"])
def test_an_endless_or_huge_status_file_is_read_only_to_its_limit(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "big.status.json"
    if kind.startswith("link"):
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:
            handle.truncate(3 * 1024**3)
    run = summary(tmp_path, "--json", timeout=60)
    _bounded(run)
    [row] = json.loads(run.out)["hosts"]
    assert row["state"] == "tool_failed" and row["host"] == "big", row


def test_a_deeply_nested_status_file_is_a_row(tmp_path: Path) -> None:
    (tmp_path / "deep.status.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deeper.status.json").write_text('{"a":' * 40_000 + "1" + "}" * 40_000)
    run = summary(tmp_path, "--json")
    _bounded(run)
    rows = json.loads(run.out)["hosts"]
    assert [row["host"] for row in rows] == ["deep", "deeper"]
    assert all("unreadable status file" in row["message"] for row in rows)


def test_escapes_from_bundles_and_status_messages_are_shown_not_obeyed(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    attack = f"{TITLE}{CLIPBOARD}{BIDI}\x9b2J"
    finding = {
        "id": "cuda.runtime_not_on_loader_path",
        "cause": "cuda_runtime_missing",
        "layer": "cuda",
        "severity": "error",
        "title": attack,
        "detail": attack,
        "evidence": [],
        "remediation": None,
        "texts": {},
    }
    bundle(document, tmp_path / "web-1.zip", findings=[finding], verdict=attack)
    status(tmp_path, "down", state="tool_failed", bundle=None, message=f"ssh: {attack}\nOK all hosts fine")
    status(tmp_path, f"evil{TITLE}", state="unreachable", bundle=None)
    for args in ([], ["--json"], ["--save"]):
        run = summary(tmp_path, *args)
        _bounded(run)
        for stream in (run.out, run.err):
            assert b"\x1b" not in stream and b"\x07" not in stream and b"\xc2\x9b" not in stream
            assert "\u202e".encode() not in stream
        assert b"PWNED" in run.out or args == ["--save"]
    saved = (tmp_path / "fleet-summary.txt").read_text(encoding="utf-8")
    assert "\x1b" not in saved and "\u202e" not in saved and "\\x1b]0;PWNED\\x07" in saved
    assert "\nOK all hosts fine" not in saved  # a newline in a message cannot forge a line
    page = (tmp_path / "fleet-summary.html").read_text(encoding="utf-8")
    assert "\x1b" not in page and "\u202e" not in page


def test_a_lone_surrogate_in_a_bundle_leaves_every_form_whole(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    bundle(document, tmp_path / "web-1.zip", verdict="gpu_\ud800unusable", created="x\udcff")
    status(tmp_path, "gone\ud800", state="unreachable", bundle=None, message="ssh \udcff")
    run = summary(tmp_path, "--save", "--json")
    _bounded(run)
    assert run.code == 1, run.err.decode(errors="replace")
    assert json.loads(run.out)["hosts_total"] == 2
    for name in ("fleet-summary.txt", "fleet-summary.json", "fleet-summary.html"):
        (tmp_path / name).read_text(encoding="utf-8")  # strict UTF-8: no lone surrogate written
    assert "\\ud800" in (tmp_path / "fleet-summary.txt").read_text(encoding="utf-8")


def test_save_where_a_summary_file_is_a_folder_says_so_and_writes_the_others(tmp_path: Path) -> None:
    status(tmp_path, "gone", state="unreachable", bundle=None)
    (tmp_path / "fleet-summary.json").mkdir()
    run = summary(tmp_path, "--save")
    _bounded(run)
    assert run.code == 2
    assert b"fleet-summary.json" in run.err and b"folder" in run.err
    assert (tmp_path / "fleet-summary.txt").is_file() and (tmp_path / "fleet-summary.html").is_file()
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]  # no temporary left


def test_a_bundle_name_over_255_bytes_fails_its_row_only(tmp_path: Path) -> None:
    status(tmp_path, "long", bundle="x" * 300 + ".zip")
    status(tmp_path, "gone", state="unreachable", bundle=None)
    run = summary(tmp_path, "--json")
    _bounded(run)
    rows = {row["host"]: row for row in json.loads(run.out)["hosts"]}
    assert rows["gone"]["state"] == "unreachable"
    assert rows["long"]["state"] == "tool_failed" and "not a bundle name" in rows["long"]["message"]


def test_seven_files_are_seven_hosts_none_merged_dropped_or_relabelled(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    verified = {**document, "verdict": "gpu_verified", "findings": []}
    broken = {**document, "verdict": "gpu_unusable"}
    bundle(verified, tmp_path / f"{file_stem('good')}.zip", "good", verdict="gpu_verified", findings=[])
    status(tmp_path, "good", bundle="good.zip")
    bundle(broken, tmp_path / f"{file_stem('dup a')}.zip", "dup a", verdict="gpu_unusable")
    status(tmp_path, "dup a", bundle=f"{file_stem('dup a')}.zip")
    status(tmp_path, "dup_a", state="unreachable", bundle=None)
    # a broken host whose status file names the good host's bundle
    status(tmp_path, "broken", state="tool_failed", bundle="good.zip")
    # a status file that names another host than its file name says
    status(tmp_path, "db-1", name="db-2")
    # a bundle collected by hand (no status file)
    bundle(verified, tmp_path / "loose.zip", verdict="gpu_verified", findings=[])
    rows = read_fleet(tmp_path)
    assert sorted(row.host for row in rows) == ["broken", "db-1", "dup a", "dup_a", "good", "loose"]
    by_host = {row.host: row for row in rows}
    assert by_host["good"].category == "gpu_verified" and by_host["good"].identity == "confirmed"
    assert by_host["dup a"].category == "gpu_unusable" and by_host["dup a"].identity == "confirmed"
    assert by_host["dup_a"].category == "unreachable"
    assert by_host["broken"].category != "gpu_verified" and by_host["broken"].identity == "mismatch"
    assert "good.zip" in (by_host["broken"].message or "")
    assert by_host["db-1"].identity == "mismatch" and "db-2.status.json" in (by_host["db-1"].message or "")
    assert by_host["loose"].identity == "unrecorded"


def test_a_bundle_made_for_another_host_is_not_that_hosts_verdict(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    bundle({**document, "verdict": "gpu_verified"}, tmp_path / "web-2.zip", "web-1", verdict="gpu_verified")
    status(tmp_path, "web-2", bundle="web-2.zip")
    bundle(document, tmp_path / "web-3.zip", "web-1")  # loose, made for web-1
    rows = {row.host: row for row in read_fleet(tmp_path)}
    assert rows["web-2"].state == "refused" and rows["web-2"].identity == "mismatch"
    assert "another host" in (rows["web-2"].message or "")
    assert rows["web-3"].state == "refused" and rows["web-3"].identity == "mismatch"


def test_file_stems_are_bounded_distinct_and_plain() -> None:
    names = ["dup a", "dup_a", "a" * 300, "a" * 301, "é", "e", ".hidden", "..", "", "x/y", "host\udcff"]
    stems = [file_stem(name) for name in names]
    assert len(set(stems)) == len(stems)
    for stem in stems:
        assert 0 < len((stem + ".status.json").encode()) <= 255
        assert "/" not in stem and not stem.startswith(".")
    assert file_stem("gpu-01.example.net") == "gpu-01.example.net"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 < 1024  # sanity of the measure


def test_many_status_files_with_the_largest_names_and_messages_stay_bounded(tmp_path: Path) -> None:
    """300 status files at the 256 KiB bound (host names of 90,000 characters, 10,000 of them
    escapes, a bundle name of 80,000, a message of 100,000): without the cut of messages (the last
    2,000 characters) and names (300 shown), 300 such files took 384 MB and 38 s."""
    for index in range(300):
        host = f"h{index}" + "\x1b" * 10_000 + "x" * 80_000
        status(tmp_path, host, name=f"h{index}", bundle="y" * 80_000 + ".zip", message="m" * 100_000)
    run = summary(tmp_path, "--save", "--json", timeout=120)
    _bounded(run)
    rows = json.loads(run.out)["hosts"]
    assert len(rows) == 300
    assert all(len(row["host"]) < 2_000 and len(row["message"]) <= 4_002 for row in rows)
