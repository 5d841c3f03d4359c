"""Reading logs: encodings, forms, rotation, tail reading with line numbers (real files).

The fixtures in tests/data/logs quote real ONNX Runtime / CUDA lines; their wrappers (encodings,
docker and journald framing, rotation, Bareun-like start-up lines) were written by us in the
documented formats, because Bareun's own log format is not published (see the README there).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from fallback_doctor.core.readers.logs.excerpt import has_startup, latest_run
from fallback_doctor.core.readers.logs.reader import (
    LogReadError,
    clean_text,
    decode_line,
    lines_from_text,
    read_stream,
    read_tail,
)
from fallback_doctor.core.readers.logs.rotation import chronological, read_log, rotated_siblings
from hypothesis import given, settings
from hypothesis import strategies as st

DATA = Path(__file__).resolve().parents[2] / "data" / "logs"


def texts_of(path: Path) -> list[str]:
    return [line.text for line in read_tail(path).lines]


@pytest.mark.parametrize("name", ["windows_utf16le_bom.log", "windows_utf16be_bom.log"])
def test_utf16_with_bom_and_crlf(name: str) -> None:
    text = read_tail(DATA / name)
    assert text.encoding.startswith("utf-16")
    assert text.lines[0].text.startswith("Use config file: C:\\Program Files\\bareun")
    assert "LoadLibrary failed with error 126" in text.lines[1].text
    assert not any(line.text.endswith("\r") for line in text.lines)
    assert [line.line for line in text.lines] == [1, 2, 3, 4, 5]


def test_cp949_korean_windows_text() -> None:
    text = read_tail(DATA / "korean_cp949.log")
    assert text.encoding == "cp949"
    assert text.lines[0].text == "2024-09-02 10:00:00 서버를 시작합니다"
    assert text.lines[3].text.endswith("지정된 모듈을 찾을 수 없습니다.")


def test_ansi_colours_stripped() -> None:
    lines = texts_of(DATA / "ansi_crlf.log")
    assert all("\x1b" not in line and "[1;31m" not in line for line in lines)
    assert lines[0].startswith("2024-08-22 10:38:52.670883465 [E:onnxruntime")
    assert lines[1].endswith("and that your GPU is supported.")


def test_docker_timestamps_kept_as_text() -> None:
    lines = texts_of(DATA / "docker_timestamps.log")
    assert lines[1].startswith("2025-01-15T08:00:01.123456789Z ")
    assert "libcudnn.so.9" in lines[1]


def test_docker_raw_stream_headers_removed() -> None:
    text = read_tail(DATA / "docker_raw_stream.log")
    assert text.form == "docker-raw"
    assert text.lines[0].text == "Starting the server"
    assert "CUDA failure 35" in text.lines[1].text


def test_docker_json_file_unwrapped() -> None:
    text = read_tail(DATA / "docker_json_file.log")
    assert text.form == "docker-json"
    assert text.lines[1].text.endswith("No such file or directory")


def test_journalctl_text_and_json() -> None:
    journal = texts_of(DATA / "journal.txt")
    assert journal[0].startswith("-- Boot ")
    as_json = read_tail(DATA / "journal.json")
    assert as_json.form == "journal-json"
    assert as_json.lines[0].text == "systemd[1]: Starting bareun.service - Bareun server..."
    assert "CUDA failure 35" in as_json.lines[1].text  # MESSAGE stored as a byte array
    assert as_json.lines[2].text == "bareun[1234]: "


def test_rotation_read_newest_first_until_a_startup(tmp_path: Path) -> None:
    assert [p.name for p in rotated_siblings(DATA / "rotated" / "app.log")] == [
        "app.log.1",
        "app.log.2.gz",
    ]
    texts = read_log(DATA / "rotated" / "app.log", stop_when=has_startup)
    assert [Path(t.source).name for t in texts] == ["app.log", "app.log.1", "app.log.2.gz"]
    lines = list(chronological(texts))
    run, start = latest_run(lines)
    assert start is not None and start.text.startswith("Use config file:")
    assert start.source.endswith("app.log.2.gz") and start.line == 2
    assert run[-1].source.endswith("app.log")


def test_directory_means_its_newest_log() -> None:
    texts = read_log(DATA / "rotated", follow_rotation=False)
    assert texts[0].source.endswith("app.log")


def test_tail_of_a_large_file_keeps_exact_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {n}\n" for n in range(1, 20001)), encoding="utf-8")
    text = read_tail(path, budget=4096)
    assert not text.complete
    assert text.lines[-1].text == "line 20000" and text.lines[-1].line == 20000
    first = text.lines[0]
    assert first.text == f"line {first.line}"  # the cut first line was dropped


def test_tail_past_the_counting_limit_reports_position_from_end(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {n}\n" for n in range(1, 5001)), encoding="utf-8")
    text = read_tail(path, budget=1024, exact_line_limit=0)
    last = text.lines[-1]
    assert last.line is None and last.from_end == 0
    assert "lines before the end" in text.lines[0].where()
    assert last.offset is not None and path.read_bytes()[last.offset :].startswith(b"line 5000")


def test_utf16_tail_is_aligned(tmp_path: Path) -> None:
    path = tmp_path / "w.log"
    body = "".join(f"줄 {n}\r\n" for n in range(1, 3001))
    path.write_bytes(b"\xff\xfe" + body.encode("utf-16-le"))
    text = read_tail(path, budget=2001)
    assert text.lines[-1].text == "줄 3000" and text.lines[-1].line == 3000
    assert all(line.text == f"줄 {line.line}" for line in text.lines)


def test_stdin_stream_and_gz_tail_have_exact_numbers(tmp_path: Path) -> None:
    data = "".join(f"row {n}\n" for n in range(1, 3001)).encode()
    text = read_stream(io.BytesIO(data), budget=2000)
    assert text.lines[-1].line == 3000 and text.lines[0].text == f"row {text.lines[0].line}"
    gz = tmp_path / "x.log.gz"
    with gzip.open(gz, "wb") as handle:
        handle.write(data)
    from_gz = read_tail(gz, budget=2000)
    assert from_gz.size == len(data) and from_gz.lines[-1].line == 3000


def test_unreadable_file_names_file_and_reason(tmp_path: Path) -> None:
    with pytest.raises(LogReadError, match=r"nothere\.log"):
        read_tail(tmp_path / "nothere.log")
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(LogReadError, match=r"broken\.log\.gz"):
        read_tail(broken)


def test_pasted_text_lines() -> None:
    lines = lines_from_text("a\r\nb\n\x1b[31mc\x1b[0m")
    assert [(line.text, line.line) for line in lines] == [("a", 1), ("b", 2), ("c", 3)]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4000), st.integers(min_value=1, max_value=5000))
def test_any_bytes_read_without_exception(data: bytes, budget: int) -> None:
    text = read_stream(io.BytesIO(data), budget=budget)
    for line in text.lines:
        assert "\n" not in line.text and "\x1b" not in line.text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=500))
def test_decode_line_never_raises(raw: bytes) -> None:
    text, encoding = decode_line(raw)
    assert encoding in ("utf-8", "cp949", "utf-8/replace")
    clean_text(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000))
def test_clean_text_total(text: str) -> None:
    cleaned = clean_text(text)
    assert "\x1b" not in cleaned and "\r" not in cleaned
