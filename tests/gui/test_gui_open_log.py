""" "Open log" from a quoted line (issue 26, item 5): the log page's line numbers are links that open
the log read-only at that line; a real log file, a pasted log, and a log that is not on this machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.gui.i18n import set_language, t
from fallback_doctor.gui.wizard import DoctorWizard, Page
from PySide6.QtCore import QSettings

pytestmark = pytest.mark.gui

LOG = Path(__file__).parents[1] / "data" / "logs" / "corpus_cudnn8_ort119.log"


def _log_page(qtbot: Any, tmp_path: Path, target: dict[str, Any], paste: str | None = None) -> Any:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard(target, settings=settings, lang="en")
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: not wizard.searching, timeout=10_000)
    if paste is not None:  # as a technician pastes it on the first page
        wizard.start_page.radios["paste"].setChecked(True)
        wizard.start_page.paste.setPlainText(paste)
    for _ in range(len(Page)):
        if wizard.currentId() == Page.LOG:
            break
        wizard.next()
        qtbot.waitUntil(lambda: wizard.running is None, timeout=120_000)
    qtbot.waitUntil(lambda: wizard.running is None and wizard.document is not None, timeout=120_000)
    wizard.flush_rendering()
    return wizard, wizard.pages[Page.LOG]


def _linked(page: Any) -> list[int]:
    """The quotes whose line number is a link on the page (by their index)."""
    html = page.view.toHtml()
    return [i for i, _ in enumerate(page.quotes) if f'href="quote:{i}"' in html]


def test_a_quoted_line_opens_its_log_file_at_that_line(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    wizard, page = _log_page(qtbot, tmp_path, {"kind": "log", "logs": [str(LOG)]})
    try:
        linked = _linked(page)
        assert linked, page.view.toPlainText()
        quote = page.quotes[linked[-1]]
        viewer = page.open_quote(linked[-1])
        assert viewer is not None and viewer.isVisible() and viewer.text.isReadOnly()
        assert viewer.text.toPlainText() == LOG.read_text(encoding="utf-8", errors="replace")
        line = int(quote["line"])
        assert viewer.current_line() == line
        shown = viewer.text.document().findBlockByNumber(line - 1).text()
        assert quote["text"].strip()[:30] in shown  # the quoted words are on the line it opened at
        assert [s.cursor.blockNumber() for s in viewer.text.extraSelections()] == [line - 1]
        viewer.close()
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_pasted_log_opens_the_pasted_text_and_a_log_elsewhere_says_so(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    pasted = LOG.read_text(encoding="utf-8")
    wizard, page = _log_page(qtbot, tmp_path, {"kind": "python"}, paste=pasted)
    try:
        linked = _linked(page)
        assert linked
        viewer = page.open_quote(linked[0])
        assert viewer is not None and viewer.text.toPlainText().rstrip("\n") == pasted.rstrip("\n")
        assert viewer.current_line() == int(page.quotes[linked[0]]["line"])
        viewer.close()
        page.quotes[linked[0]] = {**page.quotes[linked[0]], "file": str(tmp_path / "on-the-customer.log")}
        viewer = page.open_quote(linked[0])  # as from a bundle: the file is on the customer's machine
        assert viewer is not None and viewer.text.isHidden()
        assert viewer.note.text() == t("log.open.missing", path=str(tmp_path / "on-the-customer.log"))
        viewer.close()
    finally:
        wizard.shutdown()
        set_language("en")


def test_a_bundle_s_path_or_a_device_is_never_read_here(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fallback_doctor.gui.log_viewer import log_text

    real = tmp_path / "here.log"
    real.write_text("one\ntwo\n", encoding="utf-8")
    assert log_text(str(real), None) == ("one\ntwo\n", "")
    assert log_text(str(real), None, elsewhere=True)[0] is None  # an opened bundle names the customer's
    assert log_text("/dev/zero", None)[0] is None  # not a regular file: never read (it never ends)


def test_a_long_log_opens_at_its_line_with_the_part_around_it(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 12 MiB log: the pane holds the lines around the quoted one (the whole text took the GUI
    thread about 0.2 s per 4 MiB), the line highlighted and numbered as in the file."""
    from fallback_doctor.gui.log_viewer import AROUND, LogViewer, log_text

    request = "2026-12-05 10:00:00.123 [I] request served in 12 ms\n"
    head = request * (6 * 1024 * 1024 // len(request))
    failure = "[W:onnxruntime:Default] Failed to load libonnxruntime_providers_cuda.so\n"
    path = tmp_path / "server.log"
    path.write_text(head + failure + head, encoding="utf-8")
    line = head.count("\n") + 1
    text, why = log_text(str(path), None)
    assert text is not None and why == ""
    viewer = LogViewer(str(path), line, text, why, None)
    qtbot.addWidget(viewer)
    shown = viewer.text.toPlainText()
    assert len(shown) <= 2 * AROUND + len(failure) and failure.strip() in shown
    assert viewer.current_line() == line
    assert viewer.text.textCursor().block().text() == failure.strip()
    assert f"{viewer.before + 1}" in viewer.note.text()
