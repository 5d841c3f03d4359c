"""The log page names the likely cause in words (issue 26): "cuda_major_mismatch (confidence 60%)"
and "unknown (confidence 0%)" were shown, in Korean too ("unknown (신뢰도 0%)"). Real logs: the
first corpus log (a CUDA 11 library asked for by a CUDA 12 host) and a log that says nothing."""

from __future__ import annotations

import pytest
from fallback_doctor.core.causes import Cause
from fallback_doctor.core.logs.diagnose_log import explain_text
from fallback_doctor.core.texts import label
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.page_log import cause_words

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
