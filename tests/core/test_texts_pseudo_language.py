"""A language is a catalogue folder, added without touching code (issue 24 item 1).

A pseudo-language ``xx`` (every English string of the catalogue reversed, its ``{fields}`` kept) is
built in a temporary folder named by FALLBACK_DOCTOR_CATALOGUES. A real document, diagnosed before
``xx`` existed, is then shown in it as text, report.html, fix scripts, the wizard pages' words and a
fleet summary: no English sentence of the catalogue remains, and ``xx`` is a ``--lang`` choice.
So are a log diagnosis's words (the log findings, the hidden signals' notes, explain-log's text): the
log knowledge's words are catalogue labels too (resources/texts/<lang>/labels/log_*.json).
A document of the previous version (words per language in ``texts``, no ``text``) still opens.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.language import texts
from fallback_doctor.core.platform.resource_files import RESOURCES

sys.path.insert(0, str(Path(__file__).resolve().parent / "bundle"))

_TOKEN = re.compile(r"(\{\{|\}\}|\{[^{}]*\})")


def reversed_words(template: str) -> str:
    """The template with the text between its fields reversed (fields and escaped braces kept)."""
    return "".join(part if _TOKEN.fullmatch(part) else part[::-1] for part in _TOKEN.split(template))


def _reverse(value: Any) -> Any:
    if isinstance(value, str):
        return reversed_words(value)
    if isinstance(value, dict):
        return {key: _reverse(item) for key, item in value.items() if key != "source"}
    return value


def write_pseudo_language(root: Path, lang: str = "xx") -> None:
    """Every English catalogue file, reversed, as the catalogue of ``lang`` under ``root``."""
    english = RESOURCES / "texts" / "en"
    for kind in ("findings", "labels"):
        for path in sorted((english / kind).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            kept = {key: _reverse(value) for key, value in data.items() if not key.startswith("_")}
            target = root / lang / kind / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")


def english_sentences() -> set[str]:
    """The English catalogue's phrases of three words or more, between fields (what must not show)."""
    found: set[str] = set()

    def add(template: str) -> None:
        for part in _TOKEN.split(template):
            part = part.strip(" .,:;()—-\n")
            if not _TOKEN.fullmatch(part) and len(part.split()) >= 3 and len(part) >= 15:
                found.add(part)

    for entry in texts.catalogue("en", "labels").values():
        add(str(entry))
    for entry in texts.catalogue("en", "findings").values():
        for part in ("title", "detail", "fix", "verify"):
            add(str(entry.get(part, "")))
    return found


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from bundle_plants import real_document

    found = real_document()  # diagnosed before xx exists: its findings carry keys, not xx words
    assert found["findings"] and all(finding.get("text") for finding in found["findings"])
    for finding in found["findings"]:
        # The evidence's values are the checks' own English until evidence carries keys too
        # (the evidence branch of issue 24): not the finding texts' words tested here.
        finding["evidence"] = []
    return found


@pytest.fixture
def xx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    write_pseudo_language(tmp_path / "catalogues")
    monkeypatch.setenv(texts.CATALOGUES_VARIABLE, str(tmp_path / "catalogues"))
    return "xx"


def _english_left(shown: str) -> list[str]:
    return sorted(sentence for sentence in english_sentences() if sentence in shown)


def test_a_catalogue_folder_is_a_language_and_a_lang_choice(xx: str) -> None:
    from fallback_doctor.cli.main import build_parser

    assert texts.languages() == ("en", "ko", "xx")
    assert "xx" in texts.LANGUAGES
    assert texts.label("language.name", "xx") == "hsilgnE"
    assert texts.label("language.name", "ko") == "한국어"
    assert build_parser().parse_args(["diagnose", "--lang", "xx"]).lang == "xx"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["diagnose", "--lang", "zz"])


def test_every_renderer_shows_a_document_in_the_pseudo_language(xx: str, document: dict[str, Any]) -> None:
    from fallback_doctor.core.bundle.html import render_html
    from fallback_doctor.core.document.script import fix_script
    from fallback_doctor.core.views import pages
    from fallback_doctor.core.views.pages_stack import fact_rows, layer_line, layer_parts, stack_layers
    from fallback_doctor.core.views.text_report import render_text

    shown = {
        "text": render_text(document, xx, verbose=True),
        "report.html": render_html(document, lang=xx),
        "scripts": "\n".join(fix_script(finding, xx) for finding in document["findings"]),
        "pages": "\n".join(
            " ".join(pages.finding_words(finding, xx).values()) for finding in document["findings"]
        )
        + pages.verdict_words(document, xx),
        "stack page": "\n".join(
            "\n".join([layer_line(layer, xx), *layer_parts(layer, xx).values()])
            + "\n".join(f"{name}: {value}" for name, value in fact_rows(layer, xx))
            for layer in stack_layers(document)
        ),
    }
    for where, words in shown.items():
        assert words.strip(), where
        assert _english_left(words) == [], where
    first = document["findings"][0]
    assert (
        pages.finding_words(first, xx)["title"]
        == texts.render_text(first["text"]["key"], "xx", first["text"]["params"])["title"]
    )
    english = render_text(document, "en", verbose=True)
    assert _english_left(english), "the check itself: English shows its own sentences"


def test_a_fleet_summary_shows_in_the_pseudo_language(
    xx: str, document: dict[str, Any], tmp_path: Path
) -> None:
    from fallback_doctor.core.bundle.export import export_bundle
    from fallback_doctor.core.bundle.preview import BundleOptions
    from fallback_doctor.core.fleet.hosts import read_fleet
    from fallback_doctor.core.fleet.render import render_html, render_text
    from fallback_doctor.core.fleet.summary import summary_document

    folder = tmp_path / "fleet"
    folder.mkdir()
    export_bundle(
        document, folder / "web-1.zip", options=BundleOptions(lang="en"), mapping_directory=tmp_path / "m"
    )
    summary = summary_document(read_fleet(folder), "now", str(folder))
    for words in (render_text(summary, xx), render_html(summary, xx)):
        assert _english_left(words) == []


def test_a_document_of_the_previous_version_opens_with_its_own_words(document: dict[str, Any]) -> None:
    """Before keys, a finding held its words per language (``texts``) and nothing else."""
    from fallback_doctor.core.views.text_report import render_text

    old = copy.deepcopy(document)
    for finding in old["findings"]:
        del finding["text"]
        finding["texts"] = {
            lang: {"title": f"OLD {lang} {finding['id']}", "detail": "d"} for lang in ("en", "ko")
        }
    assert f"OLD ko {old['findings'][0]['id']}" in render_text(old, "ko")
    assert f"OLD en {old['findings'][0]['id']}" in render_text(old, "en")
    new = render_text(document, "ko")
    assert "OLD" not in new and texts.finding_words(document["findings"][0], "ko")["title"] in new


LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
HIDDEN_LOG = (  # a fallback without its reason, and the settings that kept the reason out
    "sess_options.log_severity_level = 3\n"
    'warnings.filterwarnings("ignore")\n'
    "SessionOptionsImpl: DirectML is for Windows only. Fallback to cpu!\n"
)


@pytest.fixture(scope="module")
def log_documents(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Real documents of ``diagnose --target log`` (made before xx exists): a corpus log whose
    text leaves causes open, one that names its cause, one whose reason was kept out of it."""
    import subprocess

    hidden = tmp_path_factory.mktemp("logs") / "hidden.log"
    hidden.write_text(HIDDEN_LOG, encoding="utf-8")
    documents = []
    for log in (LOGS / "corpus_cublaslt11.log", LOGS / "corpus_cudnn8_ort119.log", hidden):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "fallback_doctor",
                "diagnose",
                "--target",
                "log",
                "--log",
                str(log),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        documents.append(json.loads(result.stdout))
    return documents


def test_the_log_step_of_a_document_shows_in_the_pseudo_language(
    xx: str, log_documents: list[dict[str, Any]]
) -> None:
    """The log's findings carry a key and parameters (a cause's words, the wording by outcome, the
    hidden signals' notes are catalogue keys too): no English of ours in any view of them."""
    from fallback_doctor.core.bundle.html import render_html
    from fallback_doctor.core.views import pages
    from fallback_doctor.core.views.text_report import render_text

    ids = {finding["id"] for document in log_documents for finding in document["findings"]}
    assert {"log.cause", "log.fell_back", "log.hidden.log_severity"} <= ids, ids
    for document in log_documents:
        assert all(finding.get("text") and not finding.get("texts") for finding in document["findings"])
        for finding in document["findings"]:  # the evidence's words are the evidence branch's (issue 24)
            finding["evidence"] = []
        hidden = pages.log_view(document)["hidden"]
        assert all(isinstance(signal["says"], str) for signal in hidden)
        shown = {
            "text": render_text(document, xx, verbose=True),
            "report.html": render_html(document, lang=xx),
            "pages": "\n".join(
                " ".join(pages.finding_words(finding, xx).values()) for finding in document["findings"]
            ),
            "hidden notes": "\n".join(texts.label(signal["says"], xx) for signal in hidden),
        }
        for where, words in shown.items():
            assert _english_left(words) == [], (where, document["findings"][0]["id"])
        english = "\n".join(" ".join(pages.finding_words(f, "en").values()) for f in document["findings"])
        assert _english_left(english), "the check itself: English shows its own sentences"


@pytest.mark.parametrize("name", ["corpus_cublaslt11.log", "corpus_cudnn8_ort119.log", "hidden.log"])
def test_explain_log_shows_a_log_in_the_pseudo_language(xx: str, name: str, tmp_path: Path) -> None:
    """explain-log's text: the cause's title, explanation and fix, what tells the candidates apart
    and why the reason may be hidden, all from the catalogues."""
    from fallback_doctor.cli.explain_log import _json_record, render_text
    from fallback_doctor.core.readers.logs.diagnose_log import explain_texts
    from fallback_doctor.core.readers.logs.rotation import read_log

    path = LOGS / name
    if name == "hidden.log":
        path = tmp_path / name
        path.write_text(HIDDEN_LOG, encoding="utf-8")
    read = read_log(str(path))
    diagnosis = explain_texts(read)
    shown = render_text(name, read, diagnosis, xx)
    assert _english_left(shown) == []
    record = _json_record(name, read, diagnosis, xx)
    assert _english_left(json.dumps(record, ensure_ascii=False)) == []
    for cause in record["causes"]:  # the separating check: its key, and its words in --lang
        key = cause["told_apart_by"]
        assert cause["told_apart"] == (texts.label(key, xx) if key else ""), cause
    english = render_text(name, read, diagnosis, "en")
    assert _english_left(english), "the check itself: English shows its own sentences"
    if diagnosis.hidden:
        assert texts.label(diagnosis.hidden[0].says, xx) in shown
