"""The log's finding is worded by what the text settles: it names the cause, leaves several
open (or this machine's libraries settle them), does not say, or shows no failure; a
different title and detail for each, in English and Korean (resources/texts/<lang>/findings/log.json),
chosen where shown: the finding carries the key and parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks.log import check_log_cause, wording
from fallback_doctor.core.language.texts import (
    LANGUAGES,
    finding_words,
    label,
    label_ref,
    load_texts,
    text_ref,
    words_of,
)
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.result import Finding, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.libraries import collect_libraries
from fallback_doctor.core.readers.collect.log import collect_log
from fallback_doctor.core.readers.targets.spec import TargetSpec

NOT_AVAILABLE = (  # ONNX Runtime's Python binding (onnxruntime_inference_collection.py)
    "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names."
    "Available providers: 'AzureExecutionProvider, CPUExecutionProvider'"
)
CUBLAS11 = (  # provider_bridge_ort.cc: missing, or CUDA 12 beside a CUDA 11 build
    "Failed to load library libonnxruntime_providers_cuda.so with error: "
    "libcublasLt.so.11: cannot open shared object file: No such file or directory"
)
RUNNING_WITH_A_HINT = (  # the GPU provider listed, an error name beside it, no failure line
    "providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
    "[W:onnxruntime:, session_state.cc:1280] Some nodes were not assigned to the preferred "
    "execution providers\ncudaErrorInsufficientDriver"
)
WORDINGS = ("named", "settled", "several_open", "not_said", "no_failure")


def _finding(tmp_path: Path, text: str, libraries: bool = False) -> tuple[str, Finding]:
    tmp_path.mkdir()
    path = tmp_path / "app.log"
    path.write_text(text + "\n", encoding="utf-8")
    target = TargetFacts(
        kind="bareun",
        root=None,
        config_path=None,
        log_paths=(str(path),),
        lib_path=None,
        requested_provider="cuda",
    )
    log = collect_log(target, TargetSpec())
    assert log is not None
    found = None
    if libraries:  # a real, empty site-packages: no CUDA library of any major here
        empty = tmp_path / "site-packages"
        empty.mkdir()
        found = collect_libraries(
            site_packages=[str(empty)], provider_libraries=[], env={}, system_places=False, cache_path=None
        )
    (finding,) = check_log_cause(EnvironmentSnapshot(log=log, libraries=found))
    return log.outcome, finding


def test_every_wording_has_its_title_and_detail_in_both_languages() -> None:
    entry = load_texts()["log.cause"]
    for lang in LANGUAGES:
        for said in WORDINGS:
            assert entry[lang][f"title_{said}"] and entry[lang][f"detail_{said}"], (lang, said)
    titles = {entry["en"][f"title_{said}"] for said in WORDINGS}
    assert len(titles) == len(WORDINGS)


@pytest.mark.parametrize(
    ("outcome", "machine", "said"),
    [
        ("named", "", "named"),
        ("several_open", "machine_unknown", "several_open"),
        ("several_open", "machine_none", "settled"),
        ("several_open", "machine_same", "settled"),
        ("not_said", "", "not_said"),
        ("no_failure", "", "no_failure"),
        ("", "", "named"),  # a log read before outcomes were recorded
    ],
)
def test_the_wording_follows_the_outcome(outcome: str, machine: str, said: str) -> None:
    assert wording(outcome, machine) == said


def test_each_outcome_gets_its_own_title_and_detail(tmp_path: Path) -> None:
    cases = {
        "named": _finding(tmp_path / "a", NOT_AVAILABLE),
        "several_open": _finding(tmp_path / "b", CUBLAS11),
        "settled": _finding(tmp_path / "c", CUBLAS11, libraries=True),
        "no_failure": _finding(tmp_path / "d", RUNNING_WITH_A_HINT),
    }
    outcomes = {said: outcome for said, (outcome, _) in cases.items()}
    assert outcomes == {
        "named": "named",
        "several_open": "several_open",
        "settled": "several_open",
        "no_failure": "no_failure",
    }
    entry = load_texts()["log.cause"]
    for said, (_, finding) in cases.items():
        for lang in LANGUAGES:
            words = words_of(finding, lang)
            title = entry[lang]["title"].replace("{headline}", "")
            lead = title + entry[lang][f"title_{said}"].split("{")[0]
            assert words["title"].startswith(lead), (said, lang, words["title"])
            for other in set(WORDINGS) - {said}:
                other_lead = title + entry[lang][f"title_{other}"].split("{")[0]
                assert not words["title"].startswith(other_lead), (said, other)
    open_finding = cases["several_open"][1]
    assert open_finding.severity == Severity.WARNING
    assert "\u201cA CUDA runtime library is missing\u201d" in open_finding.detail  # the other cause, named
    assert "cannot tell them apart" in open_finding.detail
    assert "this machine's libraries settle it" in cases["settled"][1].detail
    assert "no CUDA library" in cases["settled"][1].detail
    assert cases["named"][1].severity == Severity.ERROR and "say so" in cases["named"][1].detail
    assert "may well have loaded" in cases["no_failure"][1].detail
    for _, finding in cases.values():
        assert words_of(finding, "ko")["detail"] != words_of(finding, "en")["detail"]
        assert finding.texts == {} and finding.text["key"] == "log.cause"  # a key, no words per language


def test_a_phrase_of_a_text_is_a_parameter_put_in_the_language_where_shown() -> None:
    """log.cause's phrases (a wording, the other causes quoted) are parameters by key and part;
    a cause's title inside one is a label, all put in the language where the finding is shown."""
    title = label_ref("log_cause.cudnn_missing.title")
    said = text_ref("log.cause", {"first": title}, part="others_one")
    finding = {"text": {"key": "log.hidden.other", "params": {"reason": "r", "says": said}}}
    for lang in LANGUAGES:
        quoted = "\u201c" + label("log_cause.cudnn_missing.title", lang) + "\u201d"
        assert finding_words(finding, lang)["detail"] == quoted
    assert finding_words(finding, "ko")["detail"] != finding_words(finding, "en")["detail"]
