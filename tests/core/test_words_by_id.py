"""Sentences core writes in English for machines also carry catalogue ids, and are shown by them:
why no test inference ran (--quick), NVML's state, a replay's provenance, the pasted log's name.
A document without the ids shows its English as written, in every language."""

from __future__ import annotations

from fallback_doctor.core.flow.diagnosis import QUICK_SKIPPED, QUICK_SKIPPED_WORDS
from fallback_doctor.core.flow.steps import empty_inference
from fallback_doctor.core.language.evidence_text import said_text, source_name
from fallback_doctor.core.language.texts import label, words_text
from fallback_doctor.core.readers.collect.log import PASTED_SOURCE
from fallback_doctor.core.readers.sampling.nvml_source import nvml_unavailable_status
from fallback_doctor.core.readers.sampling.sample import SourceStatus, sentence_words_of
from fallback_doctor.core.views.text_report import inference_lines


def test_the_quick_runs_reason_is_said_by_id_and_an_older_document_shows_its_english() -> None:
    keyed = {"inference": empty_inference(QUICK_SKIPPED, QUICK_SKIPPED_WORDS)}
    assert words_text(QUICK_SKIPPED_WORDS) == QUICK_SKIPPED
    korean = inference_lines(keyed, "ko")[0]
    assert label("evidence.skip.quick", "ko") in korean and QUICK_SKIPPED not in korean
    older = {"inference": empty_inference(QUICK_SKIPPED)}
    assert QUICK_SKIPPED in inference_lines(older, "ko")[0]


def test_nvmls_state_is_said_by_id_through_the_document() -> None:
    status = nvml_unavailable_status(12, "NVML Shared Library Not Found")  # NVML_ERROR_LIBRARY_NOT_FOUND
    english = status.sentence()
    words = sentence_words_of(status.to_dict())
    assert words is not None and words_text(words) == english
    korean = said_text(words, english, "ko")
    assert label("evidence.nvml.library_not_found", "ko") in korean and korean != english
    unknown = nvml_unavailable_status(None, "something NVML said")  # a system's own message
    assert unknown.sentence_words() is None
    assert said_text(unknown.sentence_words(), unknown.sentence(), "ko") == unknown.sentence()
    assert sentence_words_of(None) is None


def test_the_pasted_logs_name_is_shown_in_the_readers_language() -> None:
    assert source_name(PASTED_SOURCE, "en") == PASTED_SOURCE
    assert source_name(PASTED_SOURCE, "ko") == label("evidence.pasted_log", "ko") != PASTED_SOURCE
    assert source_name("/var/log/app.log", "ko") == "/var/log/app.log"


def test_a_sources_state_without_a_reason_is_said_by_id_in_the_same_english() -> None:
    for status in (
        SourceStatus("psutil", "ok"),
        SourceStatus("nvml", "not_started"),
        SourceStatus("none", "error"),
    ):
        words = status.sentence_words()
        assert words is not None and words_text(words) == status.sentence()
        assert said_text(words, status.sentence(), "ko") != status.sentence()


def test_a_probe_failure_is_said_by_id_in_the_same_english_and_shown_in_korean() -> None:
    from fallback_doctor.core.document.basics import to_jsonable
    from fallback_doctor.core.language.evidence_text import evidence_words
    from fallback_doctor.core.readers.inference.run_words import doing_words, record_said
    from fallback_doctor.core.readers.probes.runner import ChildOutcome

    doing = doing_words("gpu.session", "CUDA", "evidence.doing.python", "evidence.doing.import")
    for outcome in (
        ChildOutcome(argv=("x",), returncode=-11, stdout="", stderr="", timed_out=False, duration_s=1.0),
        ChildOutcome(argv=("x",), returncode=None, stdout="", stderr="", timed_out=True, duration_s=30.0),
        ChildOutcome(
            argv=("x",), returncode=3, stdout="", stderr="", timed_out=False, duration_s=1.0, retried=True
        ),
    ):
        words = outcome.sentence_words(doing)
        assert words_text(words) == outcome.sentence("creating the CUDA session")
        item = to_jsonable(record_said("evidence.what_happened", outcome.sentence(), words))
        korean = evidence_words(item, "ko")[1]
        assert "CUDA 세션 생성" in korean and "while" not in korean
    older = to_jsonable(record_said("evidence.what_happened", "the probe crashed with SIGSEGV"))
    assert evidence_words(older, "ko")[1] == "the probe crashed with SIGSEGV"


def test_the_watch_line_says_why_gpu_memory_is_unknown_in_the_readers_language() -> None:
    from fallback_doctor.core.model.facts.process import GpuMemoryUse, ProcessFacts
    from fallback_doctor.core.watch.check import _memory_phrase

    words = {"id": "evidence.gpu_memory.not_listed", "params": {"error": "NVML_ERROR_UNKNOWN"}}
    memory = GpuMemoryUse("unknown", reason=words_text(words), reason_words=words)
    process = ProcessFacts(pid=1, executable=None, mapped_libraries=(), environment=None, gpu_memory=memory)
    english = _memory_phrase(process, "en")
    korean = _memory_phrase(process, "ko")
    assert memory.reason is not None and memory.reason in english
    assert label("evidence.gpu_memory.not_listed", "ko", error="NVML_ERROR_UNKNOWN") in korean
    assert memory.reason not in korean
