"""Python's garbage collector runs on the GUI thread only, so Qt objects are destroyed there.

The wizard runs short Python calls on pool threads (gui/jobs.py CallJob: opening a bundle,
re-judging a document). Python's automatic collector runs on whichever thread allocates when a
threshold is crossed; on a pool thread it may collect a dead page or wizard, so Qt destroys
widgets off the GUI thread. That thread then waits for a Qt mutex the GUI thread holds while the
GUI thread waits for the interpreter lock: a deadlock (seen in the suite: ``~QObject`` on a
pooled thread inside ``json.loads``). The cure, as in other large PyQt/PySide applications:
automatic collection off, and a timer on the GUI thread that collects when the counts say so.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

_INTERVAL_MS = 500
_guard: _GcOnGuiThread | None = None


class _GcOnGuiThread(QObject):
    """Collects, on the thread it lives in, each generation whose threshold was crossed."""

    def __init__(self) -> None:
        super().__init__()
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(_INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        """Collect the oldest generation whose count passed its threshold (what gc would do)."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                gc.collect(generation)
                return


def collect_on_gui_thread() -> None:
    """Install the guard (once) and keep automatic collection off; call it on the GUI thread."""
    global _guard
    if _guard is None:
        _guard = _GcOnGuiThread()
    gc.disable()


def collect_now_and_restore() -> None:
    """Collect on this (the GUI) thread, then give Python back its automatic collection.

    For code that is done with every wizard (the test suite between tests): nothing of ours
    runs on a pool thread any more, so the collector may run anywhere again.
    """
    gc.collect()
    gc.enable()
