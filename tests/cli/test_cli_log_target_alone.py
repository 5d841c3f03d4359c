"""`diagnose --target log --log FILE` on this machine: the log alone (issue 26, item 2).

A customer's log read on the technician's laptop once came back diagnosed together with the
laptop ("No NVIDIA driver inside this container" ranked first). This machine has no NVIDIA
driver, so any fact of it that leaked into a log target would show as a driver.* / device.* /
container finding; the last test shows that the same log with another target does bring them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.language.texts import finding_words, label

LOGS = Path(__file__).parents[1] / "data" / "logs"
CORPUS_LOGS = ("corpus_cublaslt11.log", "corpus_cudnn8_ort119.log")
THIS_MACHINE = ("platform", "python", "onnxruntime", "torch", "driver", "device", "libraries", "native")
"""The environment's parts only the machine the tool runs on could fill."""


def _diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "diagnose", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def _document(*args: str) -> dict[str, Any]:
    result = _diagnose(*args, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize("name", CORPUS_LOGS)
def test_a_log_target_holds_nothing_of_this_machine(name: str) -> None:
    log = str(LOGS / name)
    document = _document("--target", "log", "--log", log)
    ids = [f["id"] for f in document["findings"]]
    assert ids and all(i.startswith("log.") for i in ids), ids
    assert ids[0] == "log.cause"
    environment = document["environment"]
    assert {part: environment[part] for part in THIS_MACHINE} == dict.fromkeys(THIS_MACHINE)
    assert environment["environment"] == {}
    assert [c["name"] for c in environment["collectors"]] == ["target", "log"]
    assert document["target"] == {"kind": "log", "logs": log}
    cause = document["findings"][0]
    assert any(e.get("source") == log and e.get("line") for e in cause["evidence"]), cause
    assert "another machine" in finding_words(cause, "en")["detail"]
    assert "not collected" not in finding_words(cause, "en")["detail"]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_text_report_of_a_log_says_whose_it_is_and_why_nothing_ran(lang: str) -> None:
    result = _diagnose("--target", "log", "--log", str(LOGS / CORPUS_LOGS[0]), "--lang", lang)
    assert result.returncode == 1, result.stderr
    assert label("nothing_to_run.log", lang) in result.stdout
    assert label("summary.elsewhere", lang) in result.stdout
    assert "(log.cause)" in result.stdout
    for leaked in ("driver.", "device.", "container", "a log-only target"):
        assert leaked not in result.stdout, leaked


def test_this_machines_facts_come_with_another_target_plus_the_log() -> None:
    """The check above can fail: the same log beside a Python target does read this machine
    (no driver here), and its driver finding is there."""
    document = _document("--target", "python", "--log", str(LOGS / CORPUS_LOGS[0]), "--quick")
    ids = [f["id"] for f in document["findings"]]
    assert "log.cause" in ids
    assert any(i.startswith(("driver.", "device.")) for i in ids), ids
    assert document["environment"]["driver"] is not None
