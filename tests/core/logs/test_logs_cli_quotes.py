"""explain-log's text output: quotes keep the decisive words; what was not read says why."""

from __future__ import annotations

import os
from pathlib import Path

from fallback_doctor.cli.explain_log import render_text
from fallback_doctor.core.readers.logs.diagnose_log import explain_texts
from fallback_doctor.core.readers.logs.rotation import read_log

LONG = (
    "2024-08-22 10:38:52.670883465 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 "
    "TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1637 "
    "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : "
    "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: "
    "cannot open shared object file: No such file or directory"
)


def test_a_long_quote_keeps_the_library_and_the_loaders_words(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_text("Use config file: x\n" + LONG + "\n", encoding="utf-8")
    texts = read_log(tmp_path / "app.log")
    output = render_text("app.log", texts, explain_texts(texts), "en")
    quote = next(line for line in output.splitlines() if "app.log:2:" in line)
    assert "libcublasLt.so.12: cannot open shared object file: No such file or directory" in quote
    assert len(quote) < len(LONG)
    assert "told apart by:" in output


def test_a_folder_lists_the_empty_file_it_did_not_read(tmp_path: Path) -> None:
    (tmp_path / "old.log").write_text("Use config file: x\n" + LONG + "\n", encoding="utf-8")
    (tmp_path / "new.log").write_text("", encoding="utf-8")
    os.utime(tmp_path / "old.log", (1_000_000, 1_000_000))
    texts = read_log(tmp_path)
    output = render_text(str(tmp_path), texts, explain_texts(texts), "ko")
    assert "new.log (읽지 않음: an empty file" in output
