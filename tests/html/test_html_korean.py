"""Korean reports: evidence, NVML's sentences and command comments in Korean, on real stacks.

`diagnose --lang ko --verbose` and its bundle's report.html, on this interpreter's real broken
stack and on a Bareun-like installation with a real CPU-only ONNX Runtime library
(tests/core/targets/bareun_layout.py). The words expected come from the catalog
(resources/texts/evidence/words.json) through core/language/evidence_words.py, never written here.
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
from fallback_doctor.core.language.evidence_words import (
    _catalog,
    command_text,
    evidence_label,
    evidence_source,
    evidence_value,
)

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
            for english, korean in (
                (str(item["label"]), evidence_label(item["label"], "ko")),
                (str(item["value"]), evidence_value(item["value"], "ko")),
                (str(item.get("source") or ""), evidence_source(item.get("source"), "ko")),
            ):
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


def test_the_catalog_is_whole() -> None:
    catalog = _catalog()
    for kind in ("labels", "values", "comments", "manual"):
        for entry in catalog[kind]:
            assert (entry["en"] and entry["ko"] and entry["ko"] != entry["en"]) or "preload" in entry["en"]
    for entry in catalog["sources"].values():
        assert entry["ko"]


def test_particles_follow_the_value_and_unknown_comments_stay_as_written() -> None:
    assert evidence_value("libcudnn.so.9 (needed by /opt/a/libfoo.so)", "ko").endswith(
        "libfoo.so가 필요로 함)"
    )
    assert evidence_value("libcudnn.so.9 (needed by /opt/a/libfoo.so.10)", "ko").endswith(
        "so.10이 필요로 함)"
    )
    assert (
        command_text('grep "#" x    # a comment nobody wrote down', "ko")
        == 'grep "#" x    # a comment nobody wrote down'
    )
    assert command_text("nvidia-smi    # on the host", "en") == "nvidia-smi    # on the host"


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
    series.update(recorded_here=False, provenance=recording.provenance())
    samples = samples_csv_from_rows(series["samples"])
    english = html.unescape(render_html(document, lang="en", samples_csv=samples))
    assert english.count("recorded elsewhere and replayed, not measured here") == 1
    korean = html.unescape(render_html(document, lang="ko", samples_csv=samples))
    assert evidence_value(recording.provenance(), "ko") in korean
    assert "recorded elsewhere" not in korean
