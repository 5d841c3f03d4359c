"""A log given with ``--log`` becomes findings with its quoted lines, on every target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LOG = (
    "Use config file: /opt/bareun/config/bareun.json\n"
    "2026-01-04 10:00:01 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 TryGetProviderInfo_CUDA] "
    "FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
    "libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
)


def diagnose_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "diagnose", "--quick", "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert result.stdout, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("target", ["log", "python"])
def test_the_logs_cause_is_a_finding_with_its_quoted_line(tmp_path: Path, target: str) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG, encoding="utf-8")
    extra = ["--python", sys.executable] if target == "python" else []
    report = diagnose_json("--target", target, "--log", str(log), *extra)
    causes = [cause["cause"] for cause in report["environment"]["log"]["causes"]]
    assert causes[:2] == ["cuda_major_mismatch", "cuda_runtime_missing"] or causes[:2] == [
        "cuda_runtime_missing",
        "cuda_major_mismatch",
    ]
    quoted = [
        evidence
        for finding in report["findings"]
        for evidence in finding["evidence"]
        if evidence["label"].startswith("log line")
    ]
    assert quoted, [finding["id"] for finding in report["findings"]]
    assert any(
        "libcublasLt.so.12: cannot open shared object file" in item["value"] and item["line"] == 2
        for item in quoted
    )
    log_findings = [finding for finding in report["findings"] if finding["id"] == "log.cause"]
    if log_findings:
        assert log_findings[0]["cause"] in ("cuda_major_mismatch", "cuda_runtime_missing")
