"""The fleet tests reuse the scenario stacks and the Bareun-like layouts (imported by file name)."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS / "scenarios", TESTS / "core" / "targets", TESTS / "fleet"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
