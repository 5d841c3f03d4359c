"""Where the bundled knowledge lies: ``resources/`` beside ``core/``.

The same in every layout the tool runs from: the source tree (``package-dir`` maps
``fallback_doctor.core`` to ``core/`` and ``fallback_doctor.resources`` to ``resources/``), an
installed wheel (``fallback_doctor/core``, ``fallback_doctor/resources``) and the frozen build
(packaging/fallback-doctor.spec puts the data at ``fallback_doctor/resources`` beside the
modules' ``__file__``). A plain path instead of ``importlib.resources``: that import alone cost
the quick diagnosis ≈12 ms (docs/performance.md), and every reader here wants a real file.
"""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parent.parent
"""This package's folder (``fallback_doctor/core``)."""

RESOURCES = CORE.parent / "resources"
"""The data folder (``fallback_doctor/resources``): texts, signatures, compatibility tables, the model."""
