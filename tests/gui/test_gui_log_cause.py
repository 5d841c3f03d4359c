"""The log page names the likely cause in words (issue 26): "cuda_major_mismatch (confidence 60%)"
and "unknown (confidence 0%)" were shown, in Korean too ("unknown (신뢰도 0%)"). Real logs: the
first corpus log (a CUDA 11 library asked for by a CUDA 12 host) and a log that says nothing."""

from __future__ import annotations

import pytest
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.readers.logs.diagnose_log import explain_text
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.page_log import cause_words, hidden_words

pytestmark = pytest.mark.gui

MISMATCH = (
    "2025-11-08 19:02:18.488301611 [E:onnxruntime:Default, provider_bridge_ort.cc:1546 "
    "TryGetProviderInfo_CUDA] \n/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 "
    "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : \nFAIL : "
    "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot "
    "open shared object file: No such file or directory\n"
)


def _first_cause(text: str) -> dict[str, object]:
    return explain_text(text).top.to_dict()  # type: ignore[no-any-return]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_likely_cause_is_said_in_words_never_its_code(lang: str) -> None:
    named, silent = _first_cause(MISMATCH), _first_cause("server started\nlistening on :5757\n")
    assert named["cause"] == "cuda_major_mismatch" and silent["cause"] == "unknown"
    set_language(lang)
    try:
        for cause in (named, silent):
            said = cause_words(cause)
            assert not any(code.value in said for code in Cause), said
        assert label("cause.cuda_major_mismatch", lang) in cause_words(named)
        assert cause_words(silent) == label("log.cause_none", lang)  # no "(confidence 0%)"
    finally:
        set_language("en")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_hidden_signal_is_said_by_its_key_and_an_older_document_by_its_words(lang: str) -> None:
    """The log page's note on a hidden reason: the document holds the note's key (issue 24); a
    document of a previous version holds the words per language."""
    (signal,) = explain_text("sess_options.log_severity_level = 3\n").hidden
    assert signal.says == "log_says.hidden.ort_log_severity"
    set_language(lang)
    try:
        assert hidden_words(signal.to_dict(), lang) == label(signal.says, lang) != ""
        older = {"says": {"en": "old English", "ko": "옛 한국어"}}
        assert hidden_words(older, lang) == older["says"][lang]
        assert hidden_words({"says": "log_says.no_such_key"}, lang) == ""
    finally:
        set_language("en")
