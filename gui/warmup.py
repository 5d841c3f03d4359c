"""What the wizard loads on a pool thread while the technician reads page 0, so the GUI thread never does.

Each of these, done on the GUI thread when first needed, stalled the window for longer than a frame
(benchmarks/bench_gui_stall.py, docs/performance.md): core's page
views, the module that names the probe's phases (the first phase mark on the live graph, ~10 ms),
and the evidence catalog at the first page shown in Korean (read, and then its 343 patterns
compiled: ~60 ms). No Qt object is made here.
"""

from __future__ import annotations

import sys

from fallback_doctor.core import facade

GIL_SWITCH_S = 0.001
"""How long a thread holding the GIL keeps it while another waits (Python's default: 5 ms). The
wizard's pool threads run Python (this preload, core re-judging a document, a step's output read);
with this the GUI thread gets the GIL back within about a millisecond (``keep_the_gil_short``)."""


def keep_the_gil_short() -> None:
    """The interpreter's switch interval at most ``GIL_SWITCH_S`` (process-wide, for the window's life)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_S))


def preload_modules() -> None:
    """The modules the steps' results and the sampler will need (core's, NVML's binding, psutil,
    numpy), then every language's lookups. The GUI thread keeps running
    meanwhile (``keep_the_gil_short``)."""
    facade.preload()
    import numpy  # noqa: F401
    import psutil  # noqa: F401 - the sampler's CPU source opens it when the GPU retry starts
    # Not pyqtgraph: its import copies attributes of PySide6's modules, and doing that on this thread
    # while the GUI thread runs Qt crashed the wizard (SIGSEGV in pyqtgraph/Qt/__init__.py
    # _copy_attrs, seen in a test run). gui/app.py imports it before the window exists.

    try:
        warm_languages()
    except Exception:  # noqa: BLE001 - only a warm-up: the same lookups happen again when needed
        pass


def warm_languages() -> None:
    """Every language's words looked up once, so their catalogs are read (and whatever core
    prepares for a lookup is prepared) here, not on the GUI thread at the first page shown in it."""
    facade.STACK_LAYERS  # noqa: B018 - core's page views (core/views/pages.py and what it imports)
    for lang in facade.LANGUAGES:
        facade.phase_name("gpu.timed", lang)
        facade.label("app.title", lang)
        if lang == "en":  # English is the catalogs' own language: nothing to look up
            continue
        facade.remedy_lines({"commands": ["true  # warm-up"]}, lang)
