"""The configuration page: the whole file, numbered, the keys that matter highlighted, findings' lines marked.

Rendered from the report document alone (a real diagnosis of a Bareun-like installation), offscreen Qt.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.bundle.safe_open import open_bundle
from fallback_doctor.core.flow.step_child import run_inspection
from fallback_doctor.gui.i18n import set_language, t
from fallback_doctor.gui.page_config import ConfigPage
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings
from PySide6.QtGui import QTextDocument, QTextFormat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import SAMPLE_CONFIG, make_install

pytestmark = pytest.mark.gui


@pytest.fixture
def config_page(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    set_language("en")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard(settings=settings, lang="en")
    qtbot.addWidget(wizard)

    def show(document: dict[str, Any]) -> ConfigPage:
        wizard.document = document
        page = wizard.pages[Page.CONFIG]
        assert isinstance(page, ConfigPage)
        page.draw()
        return page

    return show


def _block_of(document: QTextDocument, needle: str) -> tuple[int, Any]:
    block = document.begin()
    while block.isValid():
        if needle in block.text():
            return block.blockNumber() + 1, block
        block = block.next()
    raise AssertionError(f"{needle!r} is not shown")


def _highlighted(block: Any) -> bool:
    return bool(block.blockFormat().hasProperty(QTextFormat.Property.BackgroundBrush))


def test_the_whole_file_is_shown_with_the_keys_that_matter_highlighted(config_page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = make_install(tmp_path, config={**SAMPLE_CONFIG, "executionProvider": "cpu"}, log=None)
    text = (root / "config" / "bareun.json").read_text(encoding="utf-8")
    document = run_inspection({"kind": "bareun", "bareun_root": str(root)})
    page = config_page(document)
    shown = page.file.document()
    # Every line of the file, in order, with its number.
    lines = text.splitlines()
    assert shown.blockCount() == len(lines)
    for number, line in enumerate(lines, start=1):
        block = shown.findBlockByNumber(number - 1)
        assert block.text().lstrip().startswith(str(number)), number
        assert block.text().endswith(line), number
    provider_line = next(n for n, line in enumerate(lines, start=1) if '"executionProvider"' in line)
    number, block = _block_of(shown, '"executionProvider"')
    assert number == provider_line and _highlighted(block)
    assert page.line_marks[provider_line] == "cpu"  # it asks for the CPU: the answer at once
    for key in ("libPath", "logPath", "modelPath", "licenseFile"):
        number, block = _block_of(shown, f'"{key}"')
        assert _highlighted(block), key
        # libPath holds a CPU-only library: a finding (info, as the CPU is asked for) points at it
        assert page.line_marks[number] == ("info" if key == "libPath" else "key"), key
    _number, plain = _block_of(shown, '"hasTestWeb"')
    assert not _highlighted(plain)
    assert page.file.accessibleName() == t("config.text.name")
    assert "executionProvider" in page.legend.text()
    # The same page from the bundle's report.json (redacted, opened on "another machine").
    bundle = tmp_path / "bundle.zip"
    export_bundle(document, bundle, (), BundleOptions(created="2025-11-03T09:15:00+00:00"))
    opened = open_bundle(bundle).document
    again = config_page(opened)
    assert again.line_marks == page.line_marks
    assert again.file.document().blockCount() == len(lines)


def test_a_malformed_configuration_marks_its_error_line(config_page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = json.dumps(SAMPLE_CONFIG, indent=2).replace('"libDevel": false,', '"libDevel": false')
    lines = text.splitlines()
    broken = next(n for n, line in enumerate(lines, start=1) if '"tracePath"' in line)
    root = make_install(tmp_path, config_text=text, log=None)
    document = run_inspection({"kind": "bareun", "bareun_root": str(root)})
    issues = document["environment"]["target"]["config_issues"]
    assert [issue["line"] for issue in issues if issue["code"] == "malformed"] == [broken]
    page = config_page(document)
    assert page.line_marks[broken] == "error"
    number, block = _block_of(page.file.document(), '"tracePath"')
    assert number == broken and _highlighted(block)
    assert "\u2716" in block.text()
    # The keys that matter are still found by their text in a file that is not JSON.
    # (marked "error" here: libPath holds a CPU-only library and the finding points at that line)
    lib_line = next(n for n, line in enumerate(lines, 1) if '"libPath"' in line)
    assert facade.config_view(document)["key_lines"]["libPath"] == lib_line
    assert page.line_marks[lib_line] == "error"


def test_a_python_target_shows_what_decides_instead_of_a_file(config_page, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """issue 13: for a Python target the left half was empty; it now lists what decides CPU or GPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    document = run_inspection({"kind": "python"})
    page = config_page(document)
    assert page.line_marks == {}
    assert page.file.isVisibleTo(page) and page.legend.isVisibleTo(page)
    shown = page.file.toPlainText()
    import onnxruntime

    assert f"{t('config.python.packages')}" in shown and onnxruntime.__version__ in shown
    assert "CUDAExecutionProvider" in shown  # the providers in the build
    assert "CUDA_VISIBLE_DEVICES" in shown and "-1" in shown
    assert t("config.python.not_set") in shown  # LD_LIBRARY_PATH and the others, said to be unset
    assert "providers=[" in shown  # the code decides, and we say where to look
    hidden = [f for f in facade.all_findings(document) if "CUDA_VISIBLE_DEVICES" in json.dumps(f)]
    assert hidden, "a hidden GPU is a finding"
    row = next(r for r in facade.config_view(document)["settings"] if r["key"] == "CUDA_VISIBLE_DEVICES")
    assert row["severity"] in ("error", "warning", "info")
    assert "\u2716" in shown or "\u26a0" in shown or "\u2139" in shown  # its mark beside the row
    assert t("config.python.none") in page.view.toPlainText().replace("\n", " ")


def test_the_libpath_line_is_marked_when_libpath_is_the_problem(config_page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """issue 13: the legend promised a mark beside libPath; the finding now points at its line."""
    root = make_install(tmp_path, lib="cpu", log=None)
    document = run_inspection({"kind": "bareun", "bareun_root": str(root)})
    assert any(f["id"] == "target.libpath_cpu_only" for f in facade.all_findings(document))
    page = config_page(document)
    number, block = _block_of(page.file.document(), '"libPath"')
    assert page.line_marks[number] == "error"
    assert "\u2716" in block.text()


def test_configuration_issues_are_worded_in_the_window_s_language(config_page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """issue 9 item 7: the reader's English message is not what the Korean window shows."""
    text = json.dumps(SAMPLE_CONFIG, indent=2).replace('"libDevel": false,', '"libDevel": false')
    root = make_install(tmp_path, config_text=text, log=None)
    document = run_inspection({"kind": "bareun", "bareun_root": str(root)})
    issue = next(i for i in document["environment"]["target"]["config_issues"] if i["code"] == "malformed")
    english = config_page(document).view.toPlainText()
    set_language("ko")
    try:
        korean = config_page(document).view.toPlainText()
    finally:
        set_language("en")
    words = facade.issue_words(issue, "ko")
    assert words != issue["message"] and any("\uac00" <= ch <= "\ud7a3" for ch in words)
    assert words in korean and issue["message"] not in korean
    assert facade.issue_words(issue, "en") in english
