"""``diagnose --env-file FILE``: the environment the application starts with (issue 26, item 5), the
CLI's form of page 1's field. A real diagnosis of this interpreter; the control runs without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HIDES = "device.cuda_visible_devices_hides_all"


def _diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    command = [sys.executable, "-m", "fallback_doctor", "diagnose", "--quick", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=180, check=False)


def _document(*args: str) -> dict[str, Any]:
    done = _diagnose("--json", *args)
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_the_start_up_environment_is_the_diagnosis_environment(tmp_path: Path) -> None:
    unit = tmp_path / "app.env"
    unit.write_text("# the service's drop-in\nEnvironment=CUDA_VISIBLE_DEVICES=-1\n", encoding="utf-8")
    given = _document("--env-file", str(unit))
    assert given["environment"]["environment"].get("CUDA_VISIBLE_DEVICES") == "-1"
    assert HIDES in [f["id"] for f in given["findings"]]
    without = _document()  # the control: this shell hides nothing
    assert HIDES not in [f["id"] for f in without["findings"]]


def test_an_env_file_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    done = _diagnose("--env-file", str(tmp_path / "missing.env"))
    assert done.returncode == 2 and "--env-file" in done.stderr and "No such file" in done.stderr
