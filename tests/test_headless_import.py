"""The core and the CLI never import Qt, pyqtgraph or the GUI (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import importlib, json, pkgutil, sys
import fallback_doctor.core, fallback_doctor.cli
names = []
for package in (fallback_doctor.core, fallback_doctor.cli):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if any(part.endswith("_child") for part in info.name.split(".")):
            continue  # self-contained scripts run by other interpreters
        importlib.import_module(info.name)
        names.append(info.name)
forbidden = sorted(m for m in sys.modules
                   if m.split(".")[0] in {"PySide6", "shiboken6", "pyqtgraph"}
                   or m.startswith("fallback_doctor.gui"))
print(json.dumps({"imported": names, "forbidden": forbidden}))
"""


def test_core_and_cli_import_no_qt() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(result.stdout)
    assert len(report["imported"]) > 10
    assert report["forbidden"] == []
