"""The whole-file scan: the most recent start-up found wherever it is, in bounded memory.

Large files are made sparse (a hole reads as NUL bytes without using disk), so a 1 GiB log
costs the test what its text does, plus the kernel's zero-filled reads.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from fallback_doctor.core.readers.logs.diagnose_log import explain_file
from fallback_doctor.core.readers.logs.rotation import read_log
from fallback_doctor.core.readers.logs.scan import scan_file

STARTUP = b"Use config file: /opt/bareun/config/bareun.json\n"
FAILURE = (
    b"2026-01-04 10:00:01.1 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 TryGetProviderInfo_CUDA] "
    b"[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
    b"libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
)
FALLBACK = (
    b"2026-01-04 10:00:01.2 [W:onnxruntime:Default] Falling back to ['CPUExecutionProvider'] and retrying.\n"
)
CHATTER = b"2026-02-01 12:00:00.000 INFO request served in 12 ms\n"
GIB = 1024 * 1024 * 1024


def sparse_log(path: Path, head: bytes, size: int, tail: bytes) -> Path:
    """``head``, then a hole up to ``size - len(tail)`` (ended by a newline), then ``tail``."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.seek(size - len(tail) - 1)
        handle.write(b"\n" + tail)
    return path


@pytest.mark.slow
def test_a_1_gib_log_with_its_start_up_at_the_head(tmp_path: Path) -> None:
    log = sparse_log(tmp_path / "server.log", STARTUP + FAILURE + FALLBACK, GIB, CHATTER * 2000)
    diagnosis = explain_file(log)
    assert diagnosis.top.cause in ("cuda_runtime_missing", "cuda_major_mismatch")
    assert {c.cause for c in diagnosis.causes[:2]} == {"cuda_runtime_missing", "cuda_major_mismatch"}
    assert diagnosis.scope == "latest start-up"
    assert diagnosis.startup is not None and diagnosis.startup.line == 1
    cause_line = diagnosis.top.evidence[0]
    assert cause_line.line == 2 and "libcublasLt.so.12: cannot open shared object file" in cause_line.text
    texts = read_log(log)
    assert texts[0].form == "scanned" and "whole file scanned" in texts[0].note
    assert texts[0].lines[-1].line == 4 + 2000  # three lines, the hole (one line of NULs), 2000 lines
    assert texts[0].lines[-1].text == CHATTER.decode().strip()


def test_the_most_recent_start_up_wins(tmp_path: Path) -> None:
    old_run = STARTUP + FAILURE
    new_run = STARTUP + b"2026-03-01 INFO CUDA provider ready\n" + CHATTER * 10
    log = sparse_log(tmp_path / "server.log", old_run, 64 * 1024 * 1024, new_run + CHATTER * 300_000)
    text = scan_file(log)
    startup_lines = [line for line in text.lines if line.text.startswith("Use config file")]
    assert startup_lines and text.lines[0].text.startswith("Use config file")
    assert (
        text.lines[0].offset is not None
        and text.lines[0].offset > 64 * 1024 * 1024 - len(new_run) - 20_000_000
    )
    assert explain_file(log).top.cause == "unknown"


def test_the_start_up_in_a_gzip_rotation(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_bytes(CHATTER * 200_000)  # 10 MB of the current run, no start-up
    with gzip.open(tmp_path / "app.log.1.gz", "wb") as rotated:
        rotated.write(CHATTER * 1000 + STARTUP + FAILURE + FALLBACK + CHATTER * 100_000)
    with gzip.open(tmp_path / "app.log.2.gz", "wb") as older:
        older.write(STARTUP + b"nothing wrong then\n")
    diagnosis = explain_file(tmp_path / "app.log")
    assert diagnosis.top.cause in ("cuda_runtime_missing", "cuda_major_mismatch")
    assert diagnosis.startup is not None and diagnosis.startup.source.endswith("app.log.1.gz")
    assert diagnosis.startup.line == 1001
    assert (
        diagnosis.top.evidence[0].source.endswith("app.log.1.gz") and diagnosis.top.evidence[0].line == 1002
    )
    sources = [text.source for text in read_log(tmp_path / "app.log")]
    assert [Path(s).name for s in sources] == ["app.log", "app.log.1.gz"]


def test_keyword_lines_between_head_and_tail_are_kept(tmp_path: Path) -> None:
    body = STARTUP + CHATTER * 200_000 + FAILURE + CHATTER * 200_000
    log = tmp_path / "app.log"
    log.write_bytes(body)
    text = scan_file(log)
    kept = [line for line in text.lines if "libcublasLt.so.12" in line.text]
    assert len(kept) == 1 and kept[0].line == 200_002
    assert len(text.lines) < 200_000  # not the whole file: head, keyword lines, tail


def test_a_folder_reads_past_an_empty_newest_file(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_bytes(STARTUP + FAILURE + FALLBACK)
    os.utime(tmp_path / "server.log", (1_000_000, 1_000_000))
    (tmp_path / "server-new.log").write_bytes(b"")
    diagnosis = explain_file(tmp_path)
    assert diagnosis.top.cause in ("cuda_runtime_missing", "cuda_major_mismatch")
    texts = read_log(tmp_path)
    skipped = [text for text in texts if text.form == "skipped"]
    assert [Path(t.source).name for t in skipped] == ["server-new.log"] and "empty" in skipped[0].note


def test_a_folder_prefers_the_file_with_a_start_up(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(STARTUP + FAILURE)
    os.utime(tmp_path / "a.log", (1_000_000, 1_000_000))
    (tmp_path / "b.log").write_bytes(CHATTER * 10)
    assert [Path(t.source).name for t in read_log(tmp_path)] == ["a.log"]


@pytest.mark.parametrize("threads", [1, 3])
def test_line_numbers_stay_exact_across_small_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """Blocks much smaller than the lines (each block used where it was read, a cut line joined
    to the next block's first line), searched in one thread or several: every kept line has
    its own line number and text."""
    import fallback_doctor.core.readers.logs.scan as scan

    monkeypatch.setattr(scan, "BLOCK", 97)
    monkeypatch.setattr(scan, "SEARCH_THREADS", threads)
    monkeypatch.setattr(scan, "HEAD_BYTES", 600)
    lines = [CHATTER.rstrip(b"\n") + b" " + b"x" * (i % 150) for i in range(400)]
    lines[5] = STARTUP.rstrip(b"\n")
    for at in (120, 121, 250, 333):
        lines[at] = FAILURE.rstrip(b"\n")
    log = tmp_path / "app.log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    text = scan.to_text(scan.scan_stream(log.open("rb"), str(log), 600), log.stat().st_size)
    for line in text.lines:
        assert line.line is not None
        assert line.text.encode() == lines[line.line - 1], line.line
    kept = [line.line for line in text.lines if "libcublasLt" in line.text]
    assert kept == [121, 122, 251, 334]
    assert text.lines[0].line == 6  # the start-up
