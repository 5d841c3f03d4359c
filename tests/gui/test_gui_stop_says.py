"""After Stop, the diagnosis says what it lacks (issue 26, item 5), and the measures table does not
show the old run's numbers as the new one's while a step runs again.

A real wizard on this interpreter (a python target, its real static diagnosis), a real probe child
for the GPU retry (the GPU replayed from a recording, as in test_gui_plot.py), stopped part-way.
"""

from __future__ import annotations

from typing import Any

import pytest
from fallback_doctor.gui.i18n import set_language, t
from fallback_doctor.gui.wizard import DoctorWizard, Page

pytestmark = pytest.mark.gui


@pytest.fixture
def diagnosed(qtbot, replayed_wizard):  # type: ignore[no-untyped-def]
    """The replayed wizard (tests/gui/conftest.py) after its real static diagnosis."""
    wizard = replayed_wizard
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    wizard.run_step("diagnose")
    qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=120_000)
    return wizard


def _verdict(wizard: DoctorWizard) -> str:
    page = wizard.pages[Page.DIAGNOSIS]
    page.draw()
    return page.verdict.text()


def test_after_stop_the_diagnosis_says_the_gpu_retry_is_missing(qtbot, diagnosed) -> None:  # type: ignore[no-untyped-def]
    wizard = diagnosed
    try:
        assert t("diag.stopped.gpu") not in _verdict(wizard)  # nothing was stopped yet
        wizard.run_step("gpu")
        plot = wizard.gpu_page.plot
        qtbot.waitUntil(lambda: plot.samples_drawn >= 3, timeout=30_000)
        wizard.cancel_step()
        assert wizard.running is None and "gpu_retry" not in (wizard.document or {}).get("steps", [])
        assert t("diag.stopped.gpu") in _verdict(wizard)
        wizard.switch_language("ko")
        assert t("diag.stopped.gpu") in _verdict(wizard) and "중지" in t("diag.stopped.gpu")
    finally:
        wizard.shutdown()
        set_language("en")


def _column(table: Any, column: int) -> list[str]:
    return [table.item(row, column).text() for row in range(table.rowCount())]


def test_while_the_cpu_baseline_runs_again_its_old_figures_are_not_shown(qtbot, diagnosed) -> None:  # type: ignore[no-untyped-def]
    wizard = diagnosed
    try:
        wizard.probe_options = {"runs": 2, "warmup": 1}
        wizard.run_step("cpu")
        qtbot.waitUntil(lambda: wizard.running is None, timeout=120_000)
        wizard.flush_rendering()
        cpu, gpu = wizard.pages[Page.CPU].table, wizard.gpu_page.table
        before = _column(cpu, 1)
        assert before and "…" not in before and any(value not in ("", "-") for value in before)
        wizard.run_step("cpu")  # again: the table must not show the first run's figures as this one's
        assert wizard.running == "cpu"
        assert set(_column(cpu, 1)) == {"…"} and set(_column(gpu, 1)) == {"…"}
        assert cpu.item(0, 1).toolTip() == t("table.measuring")
        qtbot.waitUntil(lambda: wizard.running is None, timeout=120_000)
        wizard.flush_rendering()
        assert "…" not in _column(cpu, 1) and "…" not in _column(gpu, 1)
    finally:
        wizard.shutdown()
        set_language("en")
