"""Python's garbage collector runs on the GUI thread only, so Qt objects are destroyed there.

The wizard runs short Python calls on pool threads (gui/jobs.py CallJob: opening a bundle,
re-judging a document). Python's automatic collector runs on whichever thread allocates when a
threshold is crossed; on a pool thread it may collect a dead page or wizard, so Qt destroys
widgets off the GUI thread. That thread then waits for a Qt mutex the GUI thread holds while the
GUI thread waits for the interpreter lock: a deadlock (seen in the suite: ``~QObject`` on a
pooled thread inside ``json.loads``). The cure, as in other large PyQt/PySide applications:
automatic collection off, and a timer on the GUI thread that collects when the counts say so.

A collection walks every object of the generations it collects. The modules the wizard preloads
on a pool thread (numpy, pyqtgraph, core's: some 10^5 objects) all land in the youngest
generation, so the guard's next collection walked them all on the GUI thread: 23-40 ms, the
longest stall of a run (bench_gui_stall.py). So the guard holds its collections while they load
(:func:`hold_collections`), and :func:`freeze_survivors` then moves what is alive out of every
generation (``gc.freeze``): later collections walk only what was made after it.
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
        self.held = False
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(_INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        """Collect the oldest generation whose count passed its threshold (what gc would do)."""
        if self.held:
            return
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


def hold_collections() -> None:
    """No collection until :func:`freeze_survivors` (while modules load on a pool thread)."""
    if _guard is not None:
        _guard.held = True


def freeze_survivors() -> None:
    """Exempt every object alive now from later collections (``gc.freeze``, constant time), and
    collect again as before.

    For the modules just loaded and the window's own objects, which live as long as the window:
    the next collections then walk only what is new, each within a frame. A cycle that is garbage
    already stays in memory (no destructor runs off the GUI thread either way)."""
    gc.freeze()
    if _guard is not None:
        _guard.held = False


def collect_now_and_restore() -> None:
    """Collect on this (the GUI) thread, then give Python back its automatic collection.

    For code that is done with every wizard (the test suite between tests): nothing of ours
    runs on a pool thread any more, so the collector may run anywhere again; what
    :func:`freeze_survivors` exempted is collected again too.
    """
    if _guard is not None:
        _guard.held = False
    gc.unfreeze()
    gc.collect()
    gc.enable()
