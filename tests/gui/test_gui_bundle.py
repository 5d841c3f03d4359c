"""The wizard's bundle preview (export) and opening a bundle, with the real core, offscreen Qt."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.flow.step_child import run_inspection
from fallback_doctor.core.readers.sampling.recordings import load_recording
from fallback_doctor.core.readers.sampling.sources import ReplaySource
from fallback_doctor.gui.bundle_dialog import SHOWN_CHARACTERS, BundleDialog
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QLineEdit, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import SAMPLE_CONFIG, make_install

pytestmark = pytest.mark.gui

RECORDING = Path(__file__).parents[1] / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
API_KEY = "koba-7Q2XJ4LLD6AAAZQBK3GTE5YVIA"
CUSTOMER = "acme-steelworks-busan"


@pytest.fixture
def bareun_document(tmp_path):  # type: ignore[no-untyped-def]
    config = {**SAMPLE_CONFIG, "apiKey": API_KEY, "siteName": CUSTOMER}
    root = make_install(tmp_path, config=config)
    with (root / "var" / "logs" / "bareun.log").open("a", encoding="utf-8") as log:
        log.write(f"2025/11/03 09:14:24 site {CUSTOMER} licensed\n")
    return run_inspection({"kind": "bareun", "bareun_root": str(root)})


@pytest.fixture
def dialog_for(qtbot):  # type: ignore[no-untyped-def]
    set_language("en")

    def make(document):  # type: ignore[no-untyped-def]
        dialog = BundleDialog(document)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: dialog.preview is not None and dialog.save.isEnabled(), timeout=20_000)
        return dialog

    return make


def _refreshed(qtbot, dialog: BundleDialog, change) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(dialog.signals.prepared, timeout=20_000):
        change()


def _members(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()}


def test_preview_highlights_every_redaction_and_writes_only_what_was_chosen(  # type: ignore[no-untyped-def]
    qtbot, dialog_for, bareun_document, tmp_path
) -> None:
    dialog = dialog_for(bareun_document)
    preview = dialog.preview
    for widget in dialog.findChildren(QWidget):
        if (
            isinstance(widget, (QAbstractButton, QAbstractItemView, QLineEdit))
            and widget.isVisible()
            and widget.isEnabled()
            and widget.focusPolicy() & Qt.FocusPolicy.TabFocus
        ):
            assert widget.accessibleName(), type(widget).__name__
    names = [member.name for member in preview.members]
    config = next(m for m in preview.members if m.kind == "config")
    log = next(m for m in preview.members if m.kind == "log")
    assert API_KEY in config.original and API_KEY not in config.redacted
    # Every member: as many highlighted spans as the preview has redactions for it.
    assert dialog.members.count() == len(names)
    total = 0
    for row, member in enumerate(preview.members):
        dialog.members.setCurrentRow(row)
        if len(member.original) <= SHOWN_CHARACTERS:
            assert dialog.text.highlighted_spans() == len(member.redactions), member.name
            total += len(member.redactions)
    assert total > 0
    dialog.members.setCurrentRow(names.index(config.name))
    assert API_KEY in dialog.text.toPlainText()  # shown as read, highlighted
    dialog.as_written.setChecked(True)
    assert API_KEY not in dialog.text.toPlainText() and dialog.text.highlighted_spans() == 0
    dialog.as_written.setChecked(False)
    # Leave the log out; mask the customer's name everywhere.
    _refreshed(qtbot, dialog, lambda: dialog.set_included(log.name, False))
    assert not dialog.preview.member(log.name).included
    dialog.more.setText(CUSTOMER)
    _refreshed(qtbot, dialog, dialog.add.click)
    assert dialog.preview.options.redact_more == (CUSTOMER,)
    assert not dialog.preview.member(log.name).included
    config_now = dialog.preview.member(config.name)
    assert any(r.kind == "extra" for r in config_now.redactions)
    dialog.members.setCurrentRow([m.name for m in dialog.preview.members].index(config.name))
    assert dialog.text.highlighted_spans() == len(config_now.redactions)
    target = tmp_path / "out.zip"
    with qtbot.waitSignal(dialog.accepted, timeout=20_000):
        dialog.save_to(str(target))
    assert dialog.written == str(target)
    members = _members(target)
    assert log.name not in members and config.name in members
    for name, text in members.items():
        assert CUSTOMER not in text, name
        assert API_KEY not in text, name
    manifest = json.loads(members["manifest.json"])
    assert manifest["redaction"]["enabled"] is True


def test_an_existing_file_is_replaced_only_when_asked(qtbot, dialog_for, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dialog = dialog_for(run_inspection({"kind": "python"}))
    target = tmp_path / "kept.zip"
    target.write_bytes(b"keep me")
    questions: list[str] = []
    dialog.ask = lambda title, text: questions.append(text) or False  # type: ignore[method-assign]
    dialog.save_to(str(target))
    assert target.read_bytes() == b"keep me" and "kept.zip" in questions[0]
    assert "Not saved" in dialog.note.text()
    dialog.ask = lambda title, text: True  # type: ignore[method-assign]
    with qtbot.waitSignal(dialog.accepted, timeout=20_000):
        dialog.save_to(str(target))
    assert zipfile.is_zipfile(target)


def test_turning_redaction_off_needs_a_confirmation(qtbot, dialog_for, bareun_document, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dialog = dialog_for(bareun_document)
    dialog.ask = lambda title, text: False  # type: ignore[method-assign]
    dialog.redact_box.click()
    assert dialog.redact_box.isChecked() and dialog.redact and dialog.preview.options.redact
    dialog.ask = lambda title, text: True  # type: ignore[method-assign]
    _refreshed(qtbot, dialog, dialog.redact_box.click)
    assert not dialog.preview.options.redact
    assert "MASKING IS OFF" in dialog.summary.text()
    target = tmp_path / "plain.zip"
    with qtbot.waitSignal(dialog.accepted, timeout=20_000):
        dialog.save_to(str(target))
    members = _members(target)
    assert json.loads(members["manifest.json"])["redaction"]["enabled"] is False
    assert any(API_KEY in text for text in members.values())


FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}


def test_a_bundle_opens_marked_as_from_another_machine_with_its_graph(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    recording = load_recording(RECORDING)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    live = DoctorWizard(
        {"kind": "python"},
        settings=settings,
        probe_options=FAST,
        sample_source=lambda: ReplaySource(recording, speed=None),
        lang="en",
    )
    qtbot.addWidget(live)
    try:
        qtbot.waitUntil(lambda: not live.searching, timeout=10_000)
        live.run_step("diagnose")
        qtbot.waitUntil(lambda: live.running is None, timeout=120_000)
        live.run_step("gpu")  # the wizard's sampler replays a real recording (it says so)
        qtbot.waitUntil(lambda: live.running is None, timeout=120_000)
    finally:
        live.shutdown()
    document = live.document
    samples = document["inference"]["series"]["samples"]
    assert samples
    path = tmp_path / "from-elsewhere.zip"
    result = export_bundle(
        document, path, facade.bundle_members(document), BundleOptions(created="2025-11-03T09:15:00+00:00")
    )
    assert "samples.csv" in _members(path)
    wizard = DoctorWizard({"kind": "bundle", "bundle": str(path)}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    try:
        qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
        assert not wizard.start_page.banner.isVisible()
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=20_000)
        wizard.flush_rendering()
        assert wizard.bundle_mode
        banner = wizard.pages[Page.CONFIG].banner
        assert banner.isVisible()
        assert "BUNDLE FROM ANOTHER MACHINE" in banner.text()
        assert "2025-11-03T09:15:00" in banner.text()
        assert str(result.manifest["tool_version"]) in banner.text()
        assert [f["id"] for f in facade.all_findings(wizard.document)] == [
            f["id"] for f in facade.all_findings(document)
        ]
        # Every page after the start says whose machine it describes (issue 13), not only two.
        for _ in range(int(Page.GPU) - int(Page.CONFIG)):
            wizard.next()
            wizard.flush_rendering()
            page = wizard.pages[Page(wizard.currentId())]
            assert page.banner.isVisible() and "BUNDLE FROM ANOTHER MACHINE" in page.banner.text(), page
        gpu = wizard.pages[Page.GPU]
        assert gpu.banner.isVisible()
        plot = gpu.plot
        assert plot.samples_drawn == len(samples)  # replayed from samples.csv
        assert plot.gpu_available is True
        _xs, ys = plot._curves["gpu"].getOriginalDataset()
        assert {float(y) for y in ys if y == y} <= {float(s["utilization_percent"]) for s in samples}
        assert "samples.csv" in plot.note.text()
        assert wizard.document["inference"]["series"]["recorded_here"] is False
        wizard.next()
        wizard.flush_rendering()
        assert wizard.pages[Page.DIAGNOSIS].banner.isVisible()
        wizard.switch_language("ko")
        wizard.flush_rendering()
        assert "다른 컴퓨터에서 만든 번들" in gpu.banner.text()
    finally:
        wizard.shutdown()
        set_language("en")
