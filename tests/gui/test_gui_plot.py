"""The GPU page's graph (gui/plot.py), read from its plot items: a bundle from another machine holding a
replayed real recording, the time axis, the CPU line beside the GPU's, the phases, the graph kept
after Stop. Offscreen Qt, the real core.

The GPU readings are REPLAYED from a real recording (tests/data/gpu_series/04-…: a GTX 1660 Ti
running ONNX Runtime on CUDA, published by its author; not measured here). The CPU line is real:
psutil reading a real process on this machine that is busy, then idle.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fallback_doctor.core import facade
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.flow.step_child import run_inspection
from fallback_doctor.core.readers.sampling.recordings import load_recording
from fallback_doctor.core.readers.sampling.sampler import Sampler
from fallback_doctor.core.readers.sampling.sources import PsutilCpuSource, ReplaySource
from fallback_doctor.gui.i18n import set_language, t
from fallback_doctor.gui.plot import GpuPlot
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QPointF, QSettings

pytestmark = pytest.mark.gui

RECORDING = Path(__file__).parents[1] / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
TICKS = 30
BUSY_S = 0.6  # the probe-like process computes, then waits (its CPU line falls)
EARLY_S = 1.5  # the import phase began before the sampler's first tick (was a -1.5 s axis)


def _replayed_series() -> dict:
    """A series as the wizard's sampler makes it: the recording replayed one row per tick, the CPU of
    a real process read by psutil, phase marks (one before the first sample)."""
    worker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import time\nend = time.time() + {BUSY_S}\nwhile time.time() < end: pass\ntime.sleep(30)",
        ]
    )
    try:
        sampler = Sampler(
            ReplaySource(load_recording(RECORDING), speed=None),
            PsutilCpuSource(include_children=True),
            pid=worker.pid,
            interval_s=0.05,
            stop_when_finished=False,
        )
        sampler.open()
        started = time.time()
        sampler.mark_phase("import", at=started - EARLY_S)
        sampler.mark_phase("cpu.timed")
        for tick in range(TICKS):
            if tick == 11:  # where the recording's GPU load rises
                sampler.mark_phase("gpu.timed")
            sampler.sample_once()
            time.sleep(0.05)
        return sampler.stop(timeout=1.0).to_dict()  # type: ignore[no-any-return]
    finally:
        worker.kill()
        worker.wait()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, dict]:  # type: ignore[no-untyped-def]
    series = _replayed_series()
    document = run_inspection({"kind": "python"})
    document["inference"] = {**(document.get("inference") or {}), "series": series}
    path = tmp_path_factory.mktemp("bundle") / "from-another-machine.zip"
    export_bundle(
        document, path, facade.bundle_members(document), BundleOptions(created="2025-11-03T09:15:00+00:00")
    )
    return path, series


def _open_on_gpu_page(qtbot, tmp_path, path: Path) -> DoctorWizard:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "bundle", "bundle": str(path)}, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=20_000)
    for _ in range(int(Page.GPU) - int(Page.CONFIG)):
        wizard.next()
    wizard.flush_rendering()
    assert wizard.currentId() == int(Page.GPU)
    return wizard


def test_a_bundle_from_another_machine_draws_its_samples_in_seconds_from_the_start(  # type: ignore[no-untyped-def]
    qtbot, tmp_path, bundle
) -> None:
    path, series = bundle
    set_language("en")
    wizard = _open_on_gpu_page(qtbot, tmp_path, path)
    try:
        plot = wizard.pages[Page.GPU].plot
        samples = series["samples"]
        assert plot.samples_drawn == len(samples) == TICKS  # every row of samples.csv
        assert plot.gpu_available is True and plot._gpu_plot.isVisible() and not plot._no_gpu.isVisible()
        xs, gpu = (list(map(float, a)) for a in plot._curves["gpu"].getOriginalDataset())
        # Time: seconds from the series' start (the early import mark), never negative, never scaled.
        start = min(s["timestamp"] for s in [*samples, *series["marks"]])
        assert xs == pytest.approx([s["timestamp"] - start for s in samples], abs=1e-3)
        assert min(xs) >= EARLY_S - 0.01 and all(b > a for a, b in itertools.pairwise(xs))
        assert xs[-1] - xs[0] == pytest.approx(samples[-1]["timestamp"] - samples[0]["timestamp"], abs=1e-3)
        axis = plot._cpu_plot.getAxis("bottom")
        assert axis.labelText == t("plot.time") == "seconds"
        assert axis.autoSIPrefixScale == 1.0 and "x0.001" not in axis.labelString()  # never scaled
        (left, right), _ = plot._cpu_plot.viewRange()
        assert left == 0.0 and xs[-1] <= right < xs[-1] * 2  # from 0 s to past the last sample
        # One time axis: a moment is drawn in the same column of both plots (GPU above, CPU below).
        for moment in (0.0, xs[11], xs[-1]):
            above = plot._gpu_plot.vb.mapViewToScene(QPointF(moment, 0)).x()
            below = plot._cpu_plot.vb.mapViewToScene(QPointF(moment, 0)).x()
            assert above == pytest.approx(below, abs=1.0)
        # Each level's ticks as the axis writes them, with that level's own spacing (the range,
        # and so the levels, follow the real sampler's timing: one spacing for all was flaky).
        for spacing, ticks in axis.tickValues(left, right, 600):
            strings = axis.tickStrings(ticks, 1.0, spacing)
            assert all(
                float(text) == pytest.approx(value, abs=spacing / 2)
                for value, text in zip(ticks, strings, strict=True)
            ), (spacing, ticks, strings)
        # The GPU line is the recording's, as replayed: idle, then rising to ~99 %.
        assert gpu == [s["utilization_percent"] for s in samples]
        assert gpu[0] <= 2.0 and max(gpu[11:]) >= 98.0
        assert "samples.csv" in plot.note.text()
        wizard.switch_language("ko")  # whose readings, in the page's language
        wizard.flush_rendering()
        assert "다른 컴퓨터에서 기록" in plot.note.text() and "recorded" not in plot.note.text()
        wizard.switch_language("en")
        wizard.flush_rendering()
        # The CPU line beside it: the real process busy, then falling.
        _cpu_xs, cpu = (list(map(float, a)) for a in plot._curves["cpu"].getOriginalDataset())
        readings = [v for v in cpu if not math.isnan(v)]
        assert len(readings) >= TICKS - 2
        # (busy: a core's worth where the machine has one free, a third of it on a loaded one)
        assert max(cpu[1:10]) > max(20.0, 2 * max(cpu[-8:])) and max(cpu[-8:]) < 20.0
        # The phases: dotted lines at their times (the early one at 0 s), named under the graph.
        marks_x = list(map(float, plot._curves["cpu_marks"].getOriginalDataset()[0]))
        assert marks_x[0] == 0.0 and all(x >= 0 for x in marks_x)
        assert marks_x[::2] == pytest.approx([m["timestamp"] - start for m in series["marks"]], abs=1e-3)
        assert list(plot._curves["gpu_marks"].getOriginalDataset()[0]) == marks_x
        assert "CPU runs" in plot.phases.text() and "GPU runs" in plot.phases.text()
    finally:
        wizard.shutdown()


def test_unreadable_timestamps_still_draw_and_marks_before_the_samples_do_not_go_negative(qtbot) -> None:  # type: ignore[no-untyped-def]
    set_language("en")
    plot = GpuPlot()
    qtbot.addWidget(plot)
    samples = [
        {"timestamp": "[REDACTED]", "utilization_percent": str(v), "probe_cpu_percent": 100.0 - v}
        for v in (0.0, 50.0, 99.0)
    ]
    plot.show_series(
        {"samples": samples, "marks": [], "gpu_status": {"source": "replay"}, "recorded_here": False}
    )
    xs, ys = (list(map(float, a)) for a in plot._curves["gpu"].getOriginalDataset())
    assert ys == [0.0, 50.0, 99.0] and xs == pytest.approx([0.0, 0.1, 0.2])
    plot.show_series(
        {
            "samples": [{"timestamp": 100.0 + i, "utilization_percent": 10.0 * i} for i in range(4)],
            "marks": [{"name": "import", "timestamp": 98.5, "sequence": 0}],
            "gpu_status": {"source": "nvml"},
        }
    )
    xs = list(plot._curves["gpu"].getOriginalDataset()[0])
    assert xs == [1.5, 2.5, 3.5, 4.5] and list(plot._curves["cpu_marks"].getOriginalDataset()[0]) == [
        0.0,
        0.0,
    ]
    assert plot._cpu_plot.viewRange()[0][0] == 0.0  # the axis starts at the series' start, not at -1.5 s


def test_after_stop_the_graph_drawn_so_far_is_kept(qtbot, replayed_wizard) -> None:  # type: ignore[no-untyped-def]
    """Stop during the GPU retry (a real probe child, the GPU replayed): the partial graph stays."""
    set_language("en")
    wizard = replayed_wizard
    try:
        wizard.target = {"kind": "python"}
        wizard.run_step("gpu")
        plot = wizard.gpu_page.plot
        qtbot.waitUntil(lambda: plot.samples_drawn >= 5, timeout=30_000)
        wizard.cancel_step()
        drawn = plot.samples_drawn
        xs, ys = (list(map(float, a)) for a in plot._curves["gpu"].getOriginalDataset())
        assert wizard.running is None and wizard.partial_series is not None
        assert len(wizard.partial_series["samples"]) >= drawn
        wizard.flush_rendering()  # the GPU page renders with no finished series …
        assert plot.kept_partial and plot.samples_drawn == drawn  # … and keeps the graph
        assert [list(map(float, a)) for a in plot._curves["gpu"].getOriginalDataset()] == [xs, ys] and len(
            xs
        ) >= 5
        assert "Stopped after" in plot.phases.text()
        assert plot.stack.currentWidget() is plot._graphics
        wizard.set_target({"kind": "log", "log_text": "x"})  # another target: the old graph goes
        wizard.flush_rendering()
        assert not plot.kept_partial and plot.samples_drawn == 0 and wizard.partial_series is None
        assert plot.stack.currentWidget() is plot.waiting
    finally:
        wizard.shutdown()


def test_the_memory_line_is_the_probes_own_never_mixed_with_the_devices(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A real H200 run (scripts/gpu-check.sh, tests/data/gpu_run): its first sample was read before
    the probe started (the device's 615 MiB in use, no per-process figure); the rest carry the
    probe's own memory. The line is the probe's: the first reading is a gap, not a drop from 615."""
    import json
    import math

    document = json.loads(
        (Path(__file__).parents[1] / "data" / "gpu_run" / "h200-working.json").read_text(encoding="utf-8")
    )
    series = document["inference"]["series"]
    own = [s.get("process_memory_mib") for s in series["samples"]]
    assert own[0] is None and series["samples"][0]["memory_used_mib"] > 600 and max(o or 0 for o in own) > 0
    set_language("en")
    plot = GpuPlot()
    qtbot.addWidget(plot)
    plot.show_series(series)
    _, drawn = plot._curves["mem"].getOriginalDataset()
    assert math.isnan(drawn[0])
    assert [float(v) for v in drawn[1:]] == [float(o) for o in own[1:]]
    # Without any per-process figure (a published recording: nvidia-smi's device totals), the device's.
    for sample in series["samples"]:
        sample["process_memory_mib"] = None
    plot.show_series(series)
    _, drawn = plot._curves["mem"].getOriginalDataset()
    assert [float(v) for v in drawn] == [float(s["memory_used_mib"]) for s in series["samples"]]
