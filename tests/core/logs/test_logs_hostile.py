"""Hostile logs: special files refused without blocking, bounded cost, no traceback.

Every crash or hang found against the log readers is kept here as an explicit example; the
Hypothesis strategies below write logs of every encoding and compression to real files.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import socket
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest
from fallback_doctor.core.readers.logs.diagnose_log import explain_file, explain_text, explain_texts
from fallback_doctor.core.readers.logs.reader import MAX_LINES, LogReadError, read_tail
from fallback_doctor.core.readers.logs.rotation import read_log
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]
FAILURE = b"FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory\n"  # noqa: E501

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX special files")


def explain_log_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor.cli.explain_log", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- special files --------------------------------------------------------------------------------


@posix_only
@pytest.mark.timeout(10)
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "app.log"
    os.mkfifo(fifo)
    with pytest.raises(LogReadError, match=r"app\.log: refused: a FIFO"):
        read_tail(fifo)
    with pytest.raises(LogReadError, match="FIFO"):
        explain_file(fifo)


@posix_only
@pytest.mark.timeout(10)
def test_a_fifo_as_a_rotation_is_skipped_saying_why(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_bytes(b"2026-01-01 INFO no start-up in this file\n")
    os.mkfifo(tmp_path / "app.log.1")
    with gzip.open(tmp_path / "app.log.2.gz", "wb") as older:
        older.write(b"Use config file: /opt/bareun/bareun.json\n" + FAILURE)
    texts = read_log(tmp_path / "app.log")
    skipped = [text for text in texts if text.form == "skipped"]
    assert len(skipped) == 1 and skipped[0].source.endswith("app.log.1") and "FIFO" in skipped[0].note
    assert explain_texts(texts).top.cause in ("cudnn_missing", "cudnn_major_mismatch")


@posix_only
@pytest.mark.timeout(10)
def test_socket_device_directory_and_symlink_loop_are_refused(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.log"))
    (tmp_path / "loop.log").symlink_to(tmp_path / "loop.log")
    cases = {
        tmp_path / "sock.log": "a socket",
        Path("/dev/zero"): "a character device",
        tmp_path / "loop.log": "symbolic link",
    }
    try:
        for path, words in cases.items():
            with pytest.raises(LogReadError, match=words):
                read_tail(path)
        with pytest.raises(LogReadError, match="a directory"):
            read_tail(tmp_path)
    finally:
        server.close()


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_permission(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(FAILURE)
    log.chmod(0)
    with pytest.raises(LogReadError, match=r"(?i)permission denied"):
        read_tail(log)


@pytest.mark.timeout(20)
def test_a_sparse_2_gb_file_is_read_within_budget(tmp_path: Path) -> None:
    log = tmp_path / "sparse.log"
    with log.open("wb") as handle:
        handle.truncate(2 * 1024 * 1024 * 1024)
    tracemalloc.start()
    try:
        diagnosis = explain_file(log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert diagnosis.top.cause == "unknown"
    assert peak < 300 * 1024 * 1024


def test_empty_and_binary_files_say_they_are_not_logs(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    with pytest.raises(LogReadError, match="empty file"):
        read_tail(tmp_path / "empty.log")
    (tmp_path / "program").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40)
    with pytest.raises(LogReadError, match="ELF"):
        read_tail(tmp_path / "program")
    (tmp_path / "blob.bin").write_bytes(bytes(range(1, 32)) * 200)
    with pytest.raises(LogReadError, match="binary data"):
        read_tail(tmp_path / "blob.bin")


# -- bounded cost ---------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [b"x\n", b"\n"])
def test_8_mib_of_short_lines_is_bounded(tmp_path: Path, line: bytes) -> None:
    log = tmp_path / "short.log"
    log.write_bytes(line * (8 * 1024 * 1024 // len(line)))
    text = read_tail(log)  # peak memory and time: benchmarks/bench_log_scan.py
    diagnosis = explain_texts([text])
    assert len(text.lines) <= MAX_LINES
    assert text.lines[-1].line == 8 * 1024 * 1024 // len(line)
    assert diagnosis.top.cause == "unknown"


def test_a_gzip_bomb_stops_at_the_inflated_cap(tmp_path: Path) -> None:
    bomb = tmp_path / "app.log.1.gz"
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with bomb.open("wb") as handle:
        handle.write(compressor.compress(b"Use config file: x\n" + FAILURE))
        block = b"\0" * (1024 * 1024)
        for _ in range(64):
            handle.write(compressor.compress(block))
        handle.write(compressor.flush())
    assert bomb.stat().st_size < 200_000
    text = read_tail(bomb, inflated_cap=8 * 1024 * 1024)
    assert "stopped after 8,388,608 inflated bytes" in text.note
    assert text.size <= 8 * 1024 * 1024


# -- crashes kept as examples ---------------------------------------------------------------------


def test_json_nested_100000_deep_is_text() -> None:
    line = '{"log": ' + "[" * 100_000 + "]" * 100_000 + "}"
    diagnosis = explain_text([line, FAILURE.decode()])
    assert diagnosis.top.cause in ("cudnn_missing", "cudnn_major_mismatch")


def test_corrupt_gzip_and_corrupt_rotation_do_not_stop_the_other_files(tmp_path: Path) -> None:
    good = tmp_path / "good.log"
    good.write_bytes(FAILURE)
    corrupt = tmp_path / "bad.log.gz"
    corrupt.write_bytes(gzip.compress(FAILURE * 100)[:40] + b"\xff" * 64)
    (tmp_path / "app.log").write_bytes(b"INFO nothing\n")
    (tmp_path / "app.log.1.gz").write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(200))
    with pytest.raises(LogReadError, match=r"bad\.log\.gz"):
        read_tail(corrupt)
    texts = read_log(tmp_path / "app.log")
    assert any(text.form == "skipped" and text.source.endswith("app.log.1.gz") for text in texts)
    result = explain_log_cli("--json", str(corrupt), str(good), str(tmp_path / "app.log"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "bad.log.gz" in result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [Path(record["file"]).name for record in records] == ["good.log", "app.log"]


@posix_only
@pytest.mark.timeout(60)
def test_diagnose_log_on_a_fifo_says_why_not_no_such_file(tmp_path: Path) -> None:
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fallback_doctor",
            "diagnose",
            "--quick",
            "--target",
            "log",
            "--log",
            str(fifo),
            "--verbose",  # the evidence (why the file was not read) is in the full report
        ],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
        cwd=ROOT,
    )
    output = result.stdout + result.stderr
    assert "no such file" not in output
    assert "FIFO" in output


# -- Hypothesis: logs of every encoding and compression --------------------------------------------

LINE = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        [
            FAILURE.decode().strip(),
            "Use config file: /opt/bareun/bareun.json",
            '{"MESSAGE": "CUDA failure 35: CUDA driver version is insufficient", "_PID": 7}',
            '{"log": "LoadLibrary failed with error 126 \\"\\" when trying to load \\"x.dll\\"\\n"}',
            "\x1b[0;31mError\x1b[m \r progress 10% \r done",
            "[" * 500 + "]" * 500,
        ]
    ),
)
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-16", "cp949"])
COMPRESSIONS = st.sampled_from(["plain", "gzip", "gzip-corrupt", "truncated"])


def write_log(
    path: Path, lines: list[str], encoding: str, newline: str, compression: str, junk: bytes
) -> Path:
    text = newline.join(lines)
    data = text.encode(encoding, errors="replace")
    if encoding in ("utf-16-le", "utf-16-be") and lines and lines[0].startswith("Use"):
        data = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + data
    data += junk
    if compression.startswith("gzip"):
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
        if compression == "gzip-corrupt":
            data = data[: len(data) // 2] + b"\x00garbage"
    elif compression == "truncated":
        data = data[: len(data) // 2]
    path.write_bytes(data)
    return path


def _reads_or_refuses(path: Path) -> None:
    try:
        texts = read_log(path, 64 * 1024)
    except LogReadError:
        return
    diagnosis = explain_texts(texts)
    assert diagnosis.causes
    json.dumps(diagnosis.to_dict())


LOG_EXAMPLES = given(
    lines=st.lists(LINE, max_size=30),
    encoding=ENCODINGS,
    newline=st.sampled_from(["\n", "\r\n"]),
    compression=COMPRESSIONS,
    junk=st.binary(max_size=64),
)


@LOG_EXAMPLES
@example(
    lines=['{"log": ' + "[" * 100_000 + "]" * 100_000 + "}"],
    encoding="utf-8",
    newline="\n",
    compression="plain",
    junk=b"",
)
@example(lines=[FAILURE.decode()], encoding="utf-8", newline="\n", compression="gzip-corrupt", junk=b"")
@example(lines=["x"] * 30, encoding="utf-16-le", newline="\n", compression="truncated", junk=b"\xff")
@example(lines=[], encoding="utf-8", newline="\n", compression="plain", junk=b"")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_log_file_reads_or_is_refused(
    tmp_path: Path, lines, encoding, newline, compression, junk
) -> None:  # type: ignore[no-untyped-def]
    _reads_or_refuses(write_log(tmp_path / "app.log", lines, encoding, newline, compression, junk))


@pytest.mark.slow
@LOG_EXAMPLES
@settings(
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_log_file_reads_or_is_refused_10000(
    tmp_path: Path, lines, encoding, newline, compression, junk
) -> None:  # type: ignore[no-untyped-def]
    _reads_or_refuses(write_log(tmp_path / "app.log", lines, encoding, newline, compression, junk))
