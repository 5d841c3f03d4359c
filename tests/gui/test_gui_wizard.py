"""The wizard with the real core on this machine (no NVIDIA driver: it falls back), offscreen Qt."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import psutil
import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.language.texts import finding_words, load_labels
from fallback_doctor.core.readers.sampling.recordings import load_recording
from fallback_doctor.core.readers.sampling.sources import ReplaySource
from fallback_doctor.gui.app import build_parser, target_from_args
from fallback_doctor.gui.i18n import set_language
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui

FAST = {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}}
RECORDING = Path(__file__).parents[1] / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
STEP_TIMEOUT_MS = 120_000


@pytest.fixture
def make_wizard(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    made: list[DoctorWizard] = []

    def make(target=None, **kwargs):  # type: ignore[no-untyped-def]
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        wizard = DoctorWizard(
            target or {"kind": "python"},
            settings=settings,
            probe_options=FAST,
            lang=kwargs.pop("lang", "en"),
            **kwargs,
        )
        qtbot.addWidget(wizard)
        wizard.show()
        qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
        made.append(wizard)
        return wizard

    yield make
    for wizard in made:
        wizard.shutdown()
    set_language("en")


def _next(qtbot, wizard: DoctorWizard) -> None:  # type: ignore[no-untyped-def]
    wizard.next()
    qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
    wizard.flush_rendering()


def test_every_label_of_the_catalog_has_korean_with_the_same_fields() -> None:
    for key, entry in load_labels().items():
        assert entry.get("en") and entry.get("ko"), key
        fields = sorted(re.findall(r"\{(\w+)", entry["en"]))
        assert sorted(re.findall(r"\{(\w+)", entry["ko"])) == fields, key


def test_full_walk_through_on_this_machine(qtbot, make_wizard) -> None:  # type: ignore[no-untyped-def]
    wizard = make_wizard()
    assert wizard.currentId() == Page.START
    _next(qtbot, wizard)
    document = wizard.document
    assert document is not None and document["schema"] == "gpu-fallback-doctor/report"
    config = wizard.pages[Page.CONFIG]
    assert "no configuration file" in config.view.toPlainText()
    _next(qtbot, wizard)
    assert "No log was read" in wizard.pages[Page.LOG].view.toPlainText()
    _next(qtbot, wizard)
    stack = wizard.pages[Page.STACK]
    layers = [layer["layer"] for layer in stack.layers]
    assert layers == ["driver", "cuda", "cudnn", "onnxruntime", "application"]
    assert stack.layers[0]["status"] == "error"
    assert "BROKEN" in stack.buttons["driver"].text()
    stack.buttons["onnxruntime"].click()
    assert "1.31.1" in stack.buttons["onnxruntime"].text()
    assert "libonnxruntime_providers_cuda.so" in stack.detail.toPlainText()
    _next(qtbot, wizard)
    cpu = wizard.pages[Page.CPU]
    assert cpu.table.item(0, 1).text().endswith("ms")
    assert "CPU baseline measured" in cpu.status.text()
    _next(qtbot, wizard)
    gpu = wizard.pages[Page.GPU]
    assert "FELL BACK TO THE CPU" in gpu.verdict.text()
    assert "Why:" in gpu.verdict.text()
    # The CPU column is the CPU step's own figure, and the page says so (issue 13: 148.8 vs 256.0 ms).
    cpu_p50 = cpu.table.item(0, 1).text()
    cells = [
        gpu.table.item(r, c).text()
        for r in range(gpu.table.rowCount())
        for c in range(gpu.table.columnCount())
    ]
    assert cpu_p50 in cells, (cpu_p50, cells)
    assert gpu.cpu_note.text() and "CPU step" in gpu.cpu_note.text()
    # No NVML here: the GPU plot is replaced by words, and no GPU line is drawn.
    assert gpu.plot.gpu_available is False
    assert "No GPU readings" in gpu.plot._no_gpu.text() and gpu.plot._no_gpu.isVisible()
    assert not gpu.plot._gpu_plot.isVisible()
    assert len(gpu.plot._curves["gpu"].getData()[0] or []) == 0
    assert gpu.plot.samples_drawn > 0  # the probe's CPU use was drawn
    series = wizard.document["inference"]["series"]
    assert series["samples"] and all(s["utilization_percent"] is None for s in series["samples"])
    _next(qtbot, wizard)
    diagnosis = wizard.pages[Page.DIAGNOSIS]
    ids = [f.id for f in diagnosis.findings]
    assert "inference.fell_back" in ids and ids[0].startswith(("driver.", "device."))
    assert "The fix" in diagnosis.detail.toPlainText()
    assert diagnosis.fix_text()
    diagnosis._on_copy()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == diagnosis.fix_text()
    # A code step is shown and copied as code, never as a "$" shell line (issue 11).
    diagnosis.list.setCurrentRow(ids.index("inference.fell_back"))
    copied = diagnosis.fix_text()
    assert "onnxruntime.InferenceSession" in copied and "$ " not in copied
    assert "$ session" not in diagnosis.detail.toPlainText()
    # Every finding, fix and verdict shown has its Korean words.
    for finding in facade.all_findings(wizard.document):
        korean = finding_words(finding, "ko")  # chosen from the finding's key, as the page does
        assert any("\uac00" <= ch <= "\ud7a3" for ch in korean["title"]), finding["id"]
        assert korean["detail"], finding["id"]
        if finding.get("remediation"):
            assert korean["fix"], finding["id"]
    assert wizard.document["verdict_text"]["ko"]
    wizard.switch_language("ko")
    wizard.flush_rendering()
    assert "해결 방법" in diagnosis.detail.toPlainText()
    assert "CPU로 전환됨" in gpu.verdict.text()
    assert wizard.button(wizard.WizardButton.NextButton).text().startswith("다음")


def test_go_back_and_run_a_step_again(qtbot, make_wizard) -> None:  # type: ignore[no-untyped-def]
    wizard = make_wizard()
    _next(qtbot, wizard)
    first = wizard.document["created"]
    for _ in range(3):
        _next(qtbot, wizard)
    assert wizard.currentId() == Page.CPU
    first_cpu = wizard.document["inference"]["cpu_baseline"]["started"]
    wizard.back()
    wizard.back()
    assert wizard.currentId() == Page.LOG
    qtbot.mouseClick(
        wizard.pages[Page.LOG].again, __import__("PySide6.QtCore").QtCore.Qt.MouseButton.LeftButton
    )
    assert wizard.running == "diagnose"
    qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
    assert wizard.document["created"] >= first
    assert "cpu_baseline" in wizard.document["steps"]  # the test inference is kept
    assert wizard.document["inference"]["cpu_baseline"]["started"] == first_cpu
    _next(qtbot, wizard)
    _next(qtbot, wizard)
    wizard.pages[Page.CPU].again.click()
    qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
    assert wizard.document["inference"]["cpu_baseline"]["started"] > first_cpu


def test_cancel_during_the_probe_kills_it(qtbot, make_wizard) -> None:  # type: ignore[no-untyped-def]
    wizard = make_wizard()
    _next(qtbot, wizard)
    wizard.probe_options = {"runs": 5000, "warmup": 1, "dims": {"batch": 16, "seq": 128}}
    wizard.run_step("gpu")
    qtbot.waitUntil(lambda: wizard.job is not None and wizard.job.pid is not None, timeout=10_000)
    step = psutil.Process(wizard.job.pid)
    qtbot.waitUntil(lambda: bool(step.children(recursive=True)), timeout=20_000)  # the probe child runs
    tree = [step, *step.children(recursive=True)]
    scratch = step.environ()["TMPDIR"]  # the step's temporary folder: the probe's work folder is in it
    qtbot.waitUntil(
        lambda: any(name.startswith("gfd-probe-") for name in os.listdir(scratch)), timeout=20_000
    )
    started = time.monotonic()
    wizard.button(wizard.WizardButton.CustomButton1).click()
    assert wizard.running is None
    assert time.monotonic() - started < 2
    _gone, alive = psutil.wait_procs(tree, timeout=5)
    assert not alive
    qtbot.waitUntil(lambda: not os.path.exists(scratch), timeout=5_000)  # a killed step leaves no files
    assert "Stopped" in wizard.failures["gpu"]
    assert wizard.pages[Page.GPU].isComplete()
    wizard.flush_rendering()
    # issue 13: no stale "Running the test model on the GPU… (2 s)" above "Stopped."
    assert "Running" not in wizard.pages[Page.GPU].status.text()
    assert "Stopped" in wizard.pages[Page.GPU].verdict.text()
    wizard.probe_options = FAST
    wizard.run_step("gpu")
    qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
    assert wizard.document["inference"]["verdict"]


def test_the_plot_draws_a_replayed_real_recording(qtbot, make_wizard) -> None:  # type: ignore[no-untyped-def]
    recording = load_recording(RECORDING)
    assert recording.samples
    wizard = make_wizard(sample_source=lambda: ReplaySource(recording, speed=None))
    _next(qtbot, wizard)
    # Long enough for the sampler (one replayed tick per 0.1 s read) to deliver several ticks while
    # the step runs, however busy the machine: the FAST probe can end before the fourth read.
    wizard.probe_options = {"runs": 5000, "warmup": 1, "dims": {"batch": 2, "seq": 16}}
    wizard.run_step("gpu")
    plot = wizard.pages[Page.GPU].plot
    qtbot.waitUntil(lambda: plot.samples_drawn > 3, timeout=STEP_TIMEOUT_MS)  # drawn live
    assert wizard.running is not None
    assert plot.gpu_available is True
    assert plot._gpu_plot.isVisible() or not plot.isVisible()
    wizard.button(wizard.WizardButton.CustomButton1).click()  # Stop: the graph so far stays
    assert wizard.running is None
    wizard.flush_rendering()
    xs, ys = plot._curves["gpu"].getOriginalDataset()
    recorded = {s.utilization_percent for s in recording.samples}
    assert len(xs) > 3 and {float(y) for y in ys if y == y} <= recorded
    note = plot.note.text()
    assert "recorded elsewhere and replayed, not measured here" in note and note.count("replayed") == 1
    wizard.switch_language("ko")  # the recording's provenance in the page's language
    wizard.flush_rendering()
    assert "다른 곳에서 기록한 값을 재생함" in plot.note.text() and "recorded" not in plot.note.text()
    wizard.switch_language("en")
    # A finished run draws the series the report holds, every sample of it.
    wizard.probe_options = FAST
    wizard.run_step("gpu")
    qtbot.waitUntil(lambda: wizard.running is None, timeout=STEP_TIMEOUT_MS)
    wizard.flush_rendering()
    series = wizard.document["inference"]["series"]
    assert series["recorded_here"] is False and series["marks"]
    assert plot.samples_drawn == len(series["samples"])
    xs, ys = plot._curves["gpu"].getOriginalDataset()
    assert {float(y) for y in ys if y == y} <= recorded


def test_pasted_log_text_shows_the_decisive_lines(qtbot, make_wizard) -> None:  # type: ignore[no-untyped-def]
    text = (Path(__file__).parents[1] / "data" / "logs" / "docker_timestamps.log").read_text(encoding="utf-8")
    wizard = make_wizard(target={"kind": "python"})
    page = wizard.start_page
    page.radios["paste"].setChecked(True)
    page.paste.setPlainText(text)
    _next(qtbot, wizard)
    _next(qtbot, wizard)
    shown = wizard.pages[Page.LOG].view.toPlainText()
    assert "libcudnn.so.9: cannot open shared object file" in shown
    assert "cause" in shown
    remembered = QSettings(wizard.settings.fileName(), QSettings.Format.IniFormat).value("target")
    assert "log" in str(remembered) and "libcudnn" not in str(remembered)


def test_start_page_refuses_a_missing_path(qtbot, make_wizard, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wizard = make_wizard()
    page = wizard.start_page
    page.radios["log"].setChecked(True)
    page.fields["log"].setText(str(tmp_path / "absent.log"))
    wizard.next()
    assert wizard.currentId() == Page.START
    assert "Not found" in page.problem.text()


def test_command_line_options_become_the_target() -> None:
    args = build_parser().parse_args(["--bareun-root", "/opt/bareun", "--log", "a.log", "--pid", "42"])
    assert target_from_args(args) == {
        "kind": "bareun",
        "bareun_root": "/opt/bareun",
        "logs": ["a.log"],
        "pid": 42,
    }
    assert target_from_args(build_parser().parse_args([])) == {"kind": "auto"}
    assert target_from_args(build_parser().parse_args(["--python", "/usr/bin/python3"]))["kind"] == "python"


def test_a_bundle_shows_the_same_pages(qtbot, make_wizard, tmp_path) -> None:  # type: ignore[no-untyped-def]
    export = pytest.importorskip("fallback_doctor.core.bundle.export")
    wizard = make_wizard()
    _next(qtbot, wizard)
    path = tmp_path / "bundle.zip"
    export.export_bundle(wizard.document, path, (), export.BundleOptions(redact=False))
    other = make_wizard(target={"kind": "bundle", "bundle": str(path)})
    _next(qtbot, other)
    assert other.bundle_mode and other.document is not None
    assert other.document["verdict"] == wizard.document["verdict"]
    assert [f["id"] for f in facade.all_findings(other.document)] == [
        f["id"] for f in facade.all_findings(wizard.document)
    ]
    assert not other.pages[Page.CONFIG].again.isEnabled()


def test_the_cpu_page_says_the_applications_code_will_run_before_it_runs(  # type: ignore[no-untyped-def]
    qtbot, make_wizard
) -> None:
    """Issue 10: the technician is told, before pressing Run, that the test runs the application's
    own code as this user, for a limited time (the progress line says the exact limit once it runs)."""
    wizard = make_wizard()
    page = wizard.pages[Page.CPU]
    page.retranslate()  # the page's words as it draws them
    assert "as this user" in page.subTitle() and "limited time" in page.subTitle()
    assert wizard.running is None


def test_a_failed_cpu_baseline_is_told_in_the_pages_language(make_wizard) -> None:  # type: ignore[no-untyped-def]
    """The probe's failure sentence (core's English) is shown in the catalog's Korean words."""
    import json

    document = json.loads(
        (Path(__file__).parents[1] / "data" / "gpu_run" / "h200-working.json").read_text(encoding="utf-8")
    )
    sentence = "the probe failed while importing onnxruntime and numpy: No module named 'numpy'"
    words = {  # as the probe's runner says it (ProbeFailure.words): ids, the library's message as data
        "id": "evidence.probe.failed_while",
        "params": {
            "doing": {"id": "evidence.doing.import", "params": {}},
            "error": "No module named 'numpy'",
        },
    }
    document["inference"]["cpu_baseline"] = {
        "session": {},
        "failure": {"kind": "error", "sentence": sentence, "phase": "import", "words": words},
    }
    wizard = make_wizard(lang="ko")
    page = wizard.pages[Page.CPU]  # (built now if the window had not built it yet)
    wizard.document = document
    wizard._render_all()
    wizard.flush_rendering()
    shown = page.status.text()
    assert "No module named 'numpy'" in shown  # the library's own message, as it was
    assert "the probe failed while" not in shown and "importing onnxruntime" not in shown
    assert (
        facade.label(
            "evidence.probe.failed_while",
            "ko",
            doing=facade.label("evidence.doing.import", "ko"),
            error="No module named 'numpy'",
        )
        in shown
    )


def test_with_no_bareun_installation_found_the_sentence_runs_across_the_row(make_wizard, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Not wrapped into the labels' narrow column (it read as a tower of five short lines)."""
    wizard = make_wizard()
    page = wizard.start_page
    page.show_installations([])
    qtbot.waitUntil(lambda: page.found_label.width() > page.fields["bareun"].x() - page.found_label.x())
    lines = page.found_label.height() / page.found_label.fontMetrics().lineSpacing()
    assert lines < 2.5, lines
    page.show_installations(["/opt/bareun"])
    assert page.found.isVisible()
    qtbot.waitUntil(lambda: page.found_label.geometry().right() < page.found.x())  # beside the list


def test_a_run_on_the_gpu_names_its_top_finding_as_also_found_not_as_why(make_wizard) -> None:  # type: ignore[no-untyped-def]
    """A real H200 run (tests/data/gpu_run, not run here) ran on the GPU with a TensorRT finding:
    that finding is not why anything fell back."""
    import json

    document = json.loads(
        (Path(__file__).parents[1] / "data" / "gpu_run" / "h200-working.json").read_text(encoding="utf-8")
    )
    wizard = make_wizard()
    page = wizard.pages[Page.GPU]
    wizard.document = document
    wizard._render_all()
    wizard.flush_rendering()
    shown = page.verdict.text()
    title = facade.finding_words(facade.all_findings(document)[0], "en")["title"]
    assert f"Also found: {title}" in shown and "Why:" not in shown


def test_why_on_the_gpu_page_is_core_s_first_cause_never_a_context_finding(make_wizard) -> None:  # type: ignore[no-untyped-def]
    """Issue 26: "Why: The licence file is not there yet" was shown for a Bareun whose libPath is
    CPU-only. A document (a bundle of another version) that lists the licence finding first still
    gets core's first cause on the GPU page: the licence file cannot make ONNX Runtime fall back."""
    import json

    from fallback_doctor.core.document.basics import to_jsonable
    from fallback_doctor.core.language.texts import make_finding
    from fallback_doctor.core.model.result import Layer, Severity

    document = json.loads(
        (Path(__file__).parents[1] / "data" / "gpu_run" / "h200-no-visible-gpu.json").read_text(
            encoding="utf-8"
        )
    )
    licence = make_finding(
        "config.path_missing.licenseFile",
        "config_invalid",
        Layer.CONFIG,
        Severity.WARNING,
        params={"file": "bareun.json", "line": 16, "column": 3, "path": "/opt/bareun/var/license.pem"},
    )
    libpath = make_finding(
        "target.libpath_cpu_only",
        "ep_not_in_build",
        Layer.PACKAGE,
        Severity.ERROR,
        params={"version": "1.23.2", "lib_path": "/opt/bareun/lib", "library": "libonnxruntime.so.1"},
    )
    document["findings"] = [to_jsonable(licence), to_jsonable(libpath)]
    document.pop("first_cause", None)
    wizard = make_wizard()
    page = wizard.pages[Page.GPU]
    wizard.document = document
    wizard._render_all()
    wizard.flush_rendering()
    shown = page.verdict.text()
    assert f"Why: {libpath.title}" in shown, shown
    assert licence.title not in shown
