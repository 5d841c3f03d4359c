"""Korean reports: evidence, NVML's sentences and command comments in Korean, on real stacks.

`diagnose --lang ko --verbose` and its bundle's report.html, on this interpreter's real broken
stack and on a Bareun-like installation with a real CPU-only ONNX Runtime library
(tests/core/targets/bareun_layout.py). The words expected come from the catalog
(resources/texts/<lang>/labels/) by the ids the document holds (core/language/evidence_text.py
``evidence_words``, core/document/remedy.py), never written here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from fallback_doctor.core.document.remedy import remedy_lines
from fallback_doctor.core.language.evidence_text import evidence_words
from fallback_doctor.core.language.texts import words_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import make_install

DIAGNOSE = (sys.executable, "-m", "fallback_doctor", "diagnose")


def _diagnose(tmp_path: Path, *target: str) -> tuple[str, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    env["LANG"] = "C.UTF-8"
    bundle = tmp_path / "ko.zip"
    done = subprocess.run(
        [*DIAGNOSE, *target, "--lang", "ko", "--verbose", "--runs", "2", "--bundle", str(bundle)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert done.returncode == 1, done.stderr
    with zipfile.ZipFile(bundle) as archive:
        document = json.loads(archive.read("report.json"))
        page = archive.read("report.html").decode("utf-8")
    return done.stdout, document, page


def _check_korean(text: str, document: dict[str, Any], page: str) -> int:
    """Every evidence word and command comment the catalog knows is shown in Korean; how many there were."""
    import html

    shown = html.unescape(page)
    translated = 0
    for finding in document["findings"]:
        for item in finding.get("evidence") or []:
            for english, korean in zip(evidence_words(item, "en"), evidence_words(item, "ko"), strict=True):
                if english and korean != english:
                    translated += 1
                    assert korean in shown, korean
                    if item in (finding.get("evidence") or [])[:12]:
                        assert korean in text, korean
                    assert f"- {english}:" not in text and f"<li>{html.escape(english)}:" not in page
        remediation = finding.get("remediation")
        for (_, line), (_, korean) in zip(
            remedy_lines(remediation, "en"), remedy_lines(remediation, "ko"), strict=True
        ):
            if korean != line:
                translated += 1
                assert korean in text and korean in shown
                assert line not in text
    return translated


def test_a_real_python_stack_in_korean(tmp_path: Path) -> None:
    text, document, page = _diagnose(tmp_path, "--target", "python", "--python", sys.executable)
    assert _check_korean(text, document, page) >= 8
    assert "on the host: the driver must work there first" not in text + page


def test_a_bareun_like_installation_in_korean(tmp_path: Path) -> None:
    root = make_install(tmp_path)
    text, document, page = _diagnose(tmp_path, "--target", "bareun", "--bareun-root", str(root))
    assert _check_korean(text, document, page) >= 8
    assert "Restart the server." not in text


def test_a_replayed_recordings_provenance_is_said_once_and_in_korean() -> None:
    """report.html's note over the graph: the recording's provenance (core's English) in Korean."""
    import html

    from fallback_doctor.core.bundle.html import render_html
    from fallback_doctor.core.bundle.record import samples_csv_from_rows
    from fallback_doctor.core.readers.sampling.recordings import load_recording

    recording = load_recording(
        Path(__file__).parents[1] / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
    )
    document = json.loads(
        (Path(__file__).parents[1] / "data" / "gpu_run" / "h200-working.json").read_text(encoding="utf-8")
    )
    series = document["inference"]["series"]
    series.update(
        recorded_here=False, provenance=recording.provenance(), provenance_words=recording.provenance_words()
    )
    samples = samples_csv_from_rows(series["samples"])
    english = html.unescape(render_html(document, lang="en", samples_csv=samples))
    assert english.count("recorded elsewhere and replayed, not measured here") == 1
    korean = html.unescape(render_html(document, lang="ko", samples_csv=samples))
    assert words_text(recording.provenance_words(), "ko") in korean
    assert "recorded elsewhere" not in korean
    series.pop("provenance_words")  # a document of a previous version: its English, as written
    assert recording.provenance() in html.unescape(render_html(document, lang="ko", samples_csv=samples))
