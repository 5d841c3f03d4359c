"""The wizard with a pasted log (issue 26, item 2): the log alone, never this machine beside it.

Offscreen Qt, the real core on this machine (no NVIDIA driver here: a fact of this machine that
leaked in would show as a driver.* finding and a broken driver card). Every page says what it has
and what it cannot have for a log, in English and in Korean; a bundle made from it and opened
again shows the same pages.
"""

from __future__ import annotations

import html
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.language.texts import label, load_texts
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui

LOG = Path(__file__).parents[1] / "data" / "logs" / "corpus_cudnn8_ort119.log"
"""A customer's log (the corpus's ort-029): names ONNX Runtime 1.19.2, CUDA 12.1 and cuDNN 8907."""
STEP_TIMEOUT_MS = 120_000


def _wizard(qtbot: Any, tmp_path: Path, target: dict[str, Any], lang: str) -> DoctorWizard:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard(target, settings=settings, probe_options={"runs": 2, "warmup": 1}, lang=lang)
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    return wizard


def _walk_to_the_end(qtbot: Any, wizard: DoctorWizard) -> None:
    while wizard.currentId() != Page.DIAGNOSIS:
        wizard.next()
        qtbot.waitUntil(
            lambda: wizard.running is None and wizard.document is not None, timeout=STEP_TIMEOUT_MS
        )
        wizard.flush_rendering()


def _assert_every_page_is_the_logs(wizard: DoctorWizard, lang: str) -> None:
    """What each page has (the log's lines, the versions it names) and what it cannot have."""
    document = wizard.document
    assert document is not None
    ids = [f["id"] for f in facade.all_findings(document)]
    assert ids and all(i.startswith("log.") for i in ids), ids
    assert facade.first_cause(document)["id"] == "log.cause"
    assert label("config.none", lang) in wizard.pages[Page.CONFIG].view.toPlainText()
    log = wizard.pages[Page.LOG].view.toPlainText()
    assert "LoadLibrary failed with error 126" in log
    assert load_texts()["log.cause"][lang]["machine_elsewhere"] in log
    stack = wizard.pages[Page.STACK]
    assert not stack.note.isHidden() and stack.note.text() == label("stack.elsewhere.log", lang)
    buttons = {name: button.text() for name, button in stack.buttons.items()}
    assert label("stack.unchecked.elsewhere", lang) in buttons["driver"]
    assert label("status.error", lang) not in buttons["driver"]
    assert label("stack.log_names", lang, version="12.1") in buttons["cuda"]
    assert label("stack.log_names", lang, version="8.x") in buttons["cudnn"]
    assert label("stack.log_names", lang, version="1.19.2") in buttons["onnxruntime"]
    why = label("nothing_to_run.log", lang)
    cpu = wizard.pages[Page.CPU]
    assert cpu.status.text() == why and cpu.table.isHidden()
    gpu = wizard.pages[Page.GPU]
    assert why in gpu.verdict.text() and gpu.measured.isHidden()
    shown = [wizard.pages[p].status.text() for p in (Page.CPU, Page.GPU)] + [log, *buttons.values()]
    for leaked in ("NVIDIA driver", "드라이버가 없", "a log-only target", "-\n"):
        assert all(leaked not in words for words in shown), leaked


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_pasted_log_is_diagnosed_alone_on_every_page(qtbot, tmp_path, lang) -> None:  # type: ignore[no-untyped-def]
    wizard = _wizard(qtbot, tmp_path, {"kind": "python"}, lang)
    try:
        page = wizard.start_page
        page.radios["paste"].setChecked(True)
        page.paste.setPlainText(LOG.read_text(encoding="utf-8"))
        _walk_to_the_end(qtbot, wizard)
        assert wizard.document is not None and wizard.document["target"]["kind"] == "log"
        _assert_every_page_is_the_logs(wizard, lang)
        other = "en" if lang == "ko" else "ko"
        wizard.switch_language(other)
        wizard.flush_rendering()
        _assert_every_page_is_the_logs(wizard, other)
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_bundle_of_a_log_opened_again_shows_the_same(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    made = _wizard(qtbot, tmp_path, {"kind": "log", "logs": [str(LOG)]}, "en")
    try:
        _walk_to_the_end(qtbot, made)
        _assert_every_page_is_the_logs(made, "en")
        document = made.document
    finally:
        made.shutdown()
    assert document is not None
    path = tmp_path / "customer-log.zip"
    export_bundle(document, path, facade.bundle_members(document), BundleOptions(lang="en"))
    with zipfile.ZipFile(path) as bundle:
        name = next(n for n in bundle.namelist() if n.endswith("report.html"))
        page = html.unescape(bundle.read(name).decode("utf-8"))
    assert label("stack.elsewhere.log", "en") in page and "driver.missing" not in page
    wizard = _wizard(qtbot, tmp_path, {"kind": "bundle", "bundle": str(path)}, "ko")
    try:
        _walk_to_the_end(qtbot, wizard)
        assert wizard.bundle_mode
        assert [f["id"] for f in facade.all_findings(wizard.document)] == [
            f["id"] for f in facade.all_findings(document)
        ]
        _assert_every_page_is_the_logs(wizard, "ko")
    finally:
        wizard.shutdown()
        set_language("en")
