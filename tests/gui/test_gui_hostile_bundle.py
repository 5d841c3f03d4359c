"""A crafted bundle in the wizard: its texts are shown as text, never as markup (issue 10, injection).

A bundle's ``verdict_text`` in a label in AutoText mode once drew a green "GPU VERIFIED" banner on a
``gpu_unusable`` report and loaded a local image. The wizard now takes the verdict's words from the
catalog by its code, shows document texts in Qt.PlainText labels, and escapes them where it draws
its own rich text (tooltips too). A bundle of the wrong shape is refused with the field's path.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.flow.step_child import run_inspection
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QListWidget, QTextBrowser

pytestmark = pytest.mark.gui

IMAGE = "file:///tmp/fallback-doctor-pwned.png"
BANNER = "<b style='color:#388e3c;font-size:xx-large'>GPU VERIFIED</b>"
CRAFTED = f"<img src='{IMAGE}'>{BANNER}"


def _hostile_document() -> dict[str, Any]:
    """A real document made hostile the way an attacker would: markup in every text it carries."""
    document = json.loads(json.dumps(run_inspection({"kind": "python"})))
    assert document["verdict"] == "gpu_unusable" and document["findings"]
    document["verdict_text"] = {"en": CRAFTED, "ko": CRAFTED}
    for index, finding in enumerate(document["findings"]):
        finding["title"] = CRAFTED
        if index == 0:  # its words per language only, as a previous version wrote them
            del finding["text"]
            crafted = {"title": CRAFTED, "detail": f"<a href='{IMAGE}'>{CRAFTED}</a>"}
            finding["texts"] = {"en": dict(crafted), "ko": dict(crafted)}
        else:  # the words by key: markup in every parameter
            params = finding["text"]["params"]
            params.update({name: CRAFTED for name, value in params.items() if isinstance(value, str)})
        for item in finding["evidence"]:
            item["value"] = CRAFTED
    document["target"]["python"] = CRAFTED
    return document


def _open(qtbot: Any, tmp_path: Path, path: Path) -> DoctorWizard:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "bundle", "bundle": str(path)}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    return wizard


def test_document_texts_are_shown_as_text_and_load_nothing(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "crafted.zip"
    export_bundle(_hostile_document(), path, (), BundleOptions(redact=False))
    wizard = _open(qtbot, tmp_path, path)
    try:
        while wizard.currentId() != Page.DIAGNOSIS:
            wizard.next()
            qtbot.waitUntil(lambda: wizard.running is None, timeout=30_000)
        wizard.flush_rendering()
        assert wizard.document is not None and wizard.document["verdict"] == "gpu_unusable"
        diagnosis = wizard.pages[Page.DIAGNOSIS]
        assert facade.verdict_words(wizard.document, "en") in diagnosis.verdict.text()
        assert "GPU VERIFIED" not in diagnosis.verdict.text()
        shown_as_text = 0
        for label in wizard.findChildren(QLabel):
            text = label.text()
            if label.textFormat() != Qt.TextFormat.PlainText:
                assert "<img" not in text and "GPU VERIFIED</b>" not in text, text
            elif CRAFTED in text:
                shown_as_text += 1
        for view in wizard.findChildren(QTextBrowser):
            assert "<img" not in view.toHtml(), view.accessibleName()
            assert "<a " not in view.toHtml(), view.accessibleName()
            if CRAFTED in view.toPlainText():
                shown_as_text += 1
        assert shown_as_text >= 2  # the crafted words are there, as words
        items = [lst.item(row) for lst in wizard.findChildren(QListWidget) for row in range(lst.count())]
        assert items and all("<img" not in item.toolTip() for item in items)
        assert any("&lt;img" in item.toolTip() for item in items)
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_bundle_of_the_wrong_shape_is_refused_in_words(qtbot: Any, tmp_path: Path) -> None:
    good = tmp_path / "good.zip"
    export_bundle(run_inspection({"kind": "python"}), good, (), BundleOptions(redact=False))
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    report = json.loads(members["report.json"])
    report["findings"][0]["text"]["params"] = 5
    members["report.json"] = json.dumps(report).encode()
    manifest = json.loads(members["manifest.json"])
    for entry in manifest["members"]:
        if entry["name"] == "report.json":
            entry["size"] = len(members["report.json"])
            entry["sha256"] = hashlib.sha256(members["report.json"]).hexdigest()
    members["manifest.json"] = json.dumps(manifest).encode()
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    wizard = _open(qtbot, tmp_path, bad)
    try:
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None, timeout=30_000)
        wizard.flush_rendering()
        assert wizard.document is None
        status = wizard.pages[Page.CONFIG].status.text()
        assert "findings[0].text.params" in status and "Traceback" not in status, status
    finally:
        wizard.shutdown()
        set_language("en")
