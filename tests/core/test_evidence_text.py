"""Evidence said with the catalogue's keys is shown in the reader's language from the keys
(core/language/evidence_text.py), and a document from before the keys still shows its words."""

from __future__ import annotations

import json

from fallback_doctor.core.document.basics import to_jsonable
from fallback_doctor.core.language.evidence_text import evidence_words, named, said
from fallback_doctor.core.language.texts import label, load_labels, words_text
from fallback_doctor.core.model.result import Words, finding_from_dict


def _shown(evidence: object, lang: str) -> tuple[str, str, str]:
    """The evidence as a renderer sees it: through the JSON document."""
    return evidence_words(json.loads(json.dumps(to_jsonable(evidence))), lang)


def test_keys_are_shown_in_korean_and_the_english_stays_for_machines() -> None:
    item = said(
        "evidence.driver_version",
        "evidence.driver_below_minimum",
        source="nvidia-smi",
        version="470.82",
        minimum="525.60.13",
        major=12,
        system="Linux",
    )
    assert item.label == "driver version"
    assert item.value == "470.82 < 525.60.13 (minimum for CUDA 12 on Linux)"
    assert _shown(item, "en") == (item.label, item.value, "nvidia-smi")
    assert _shown(item, "ko") == (
        "드라이버 버전",
        "470.82 < 525.60.13(Linux에서 CUDA 12에 필요한 최소 버전)",
        "nvidia-smi",
    )


def test_data_is_shown_as_written_in_every_language() -> None:
    item = named("cuInit(0)", "803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)", source="the probe")
    assert _shown(item, "ko") == ("cuInit(0)", "803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)", "the probe")


def test_a_parameter_can_be_words_rendered_in_the_same_language() -> None:
    nested = Words("evidence.none")
    item = said("evidence.name", "evidence.driver_cuda_below_build", name="x", version=nested, major=12)
    assert item.value == "none < 12.0 (what the ONNX Runtime build needs)"
    assert _shown(item, "ko")[1].startswith("없음 < 12.0")
    assert words_text([Words("evidence.none"), "/opt/a"], "ko") == "없음, /opt/a"


def test_a_finding_read_back_keeps_its_keys() -> None:
    item = said(
        "evidence.kernel_module", value="NVRM version: 550.54", source="cat /proc/driver/nvidia/version"
    )
    finding = {
        "id": "driver.library_mismatch",
        "cause": "x",
        "layer": "driver",
        "severity": "error",
        "evidence": [to_jsonable(item)],
    }
    assert finding_from_dict(finding).evidence == (item,)


def test_a_document_from_before_the_keys_shows_its_english() -> None:
    old = {"label": "cuInit(0)", "value": "35 (CUDA_ERROR_INSUFFICIENT_DRIVER)", "source": None}
    assert _shown(old, "en") == ("cuInit(0)", "35 (CUDA_ERROR_INSUFFICIENT_DRIVER)", "")


def test_every_evidence_word_has_korean_and_the_same_fields() -> None:
    import string

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    import json

    from fallback_doctor.core.platform.resource_files import RESOURCES

    sources: dict[str, str] = {}  # each id's source: a note beside the English words
    for path in RESOURCES.joinpath("texts", "en", "labels").glob("evidence_*.json"):
        notes = json.loads(path.read_text(encoding="utf-8"))
        sources.update({k.removeprefix("_source."): v for k, v in notes.items() if k.startswith("_source.")})
    evidence = {key: entry for key, entry in load_labels().items() if key.startswith("evidence.")}
    assert len(evidence) > 10
    for key, entry in evidence.items():
        assert entry.get("ko") and sources.get(key), key
        assert fields(entry["en"]) == fields(entry["ko"]), key
        assert label(key, "ko", **dict.fromkeys(fields(entry["en"]), "1")), key


def test_no_module_reads_english_back_with_regular_expressions() -> None:
    """Words are chosen by id where shown, never by reading English back (issue 24 item 1): the
    templates that matched the checks' English (core/language/evidence_words.py, resources/texts/evidence/
    words.json) are gone, nothing of core, cli or gui imports them, and the modules that put ids
    into words hold no regular expression."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert not list((root / "core").rglob("evidence_words.py"))
    assert not (root / "resources" / "texts" / "evidence" / "words.json").exists()
    for name in ("language/evidence_text.py", "language/texts.py", "document/remedy.py"):
        text = (root / "core" / name).read_text(encoding="utf-8")
        assert "import re\n" not in text and "re.compile" not in text, name
    readers = sorted(
        str(path.relative_to(root))
        for folder in ("core", "cli", "gui")
        for path in (root / folder).rglob("*.py")
        if "evidence_words import" in path.read_text(encoding="utf-8")
        or "core.language.evidence_words" in path.read_text(encoding="utf-8")
        or "texts/evidence/words" in path.read_text(encoding="utf-8")
    )
    assert readers == []
