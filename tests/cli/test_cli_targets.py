"""`fallback-doctor diagnose --target bareun …` on Bareun-like installations with real libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import SAMPLE_CONFIG, make_install


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "BAREUN_ROOT"}


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor", "diagnose", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env or _env(),
    )


def _json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert "Traceback" not in result.stderr, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_cpu_only_lib_path_is_diagnosed_with_the_log_quoted(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    result = _run("--target", "bareun", "--bareun-root", str(root), "--json", "--quick")
    assert result.returncode == 1, result.stderr
    document = _json(result)
    assert document["verdict"] == "gpu_unusable"
    findings = document["findings"]
    causes = [finding["cause"] for finding in findings]
    assert "ep_not_in_build" in causes[:4]  # below only config and lower layers (no GPU on this machine)
    libpath = next(f for f in findings if f["id"] == "target.libpath_cpu_only")
    quoted = [e for e in libpath["evidence"] if e["label"].startswith("log line")]
    log_file = str(root / "var" / "logs" / "bareun.log")
    assert any(
        e["source"] == log_file and e["line"] == 4 and "not enabled in this build" in e["value"]
        for e in quoted
    ), libpath["evidence"]
    assert document["target"]["kind"] == "bareun"
    assert document["target"]["lib_path"] == str(root / "lib")


def test_cpu_configuration_exits_0(tmp_path: Path) -> None:
    root = make_install(
        tmp_path, lib="cpu", config=dict(SAMPLE_CONFIG, executionProvider={"provider": "cpu"})
    )
    result = _run("--target", "bareun", "--bareun-root", str(root), "--json", "--quick")
    assert result.returncode == 0, result.stderr
    document = _json(result)
    assert document["verdict"] == "cpu_by_configuration"
    assert document["findings"][0]["cause"] == "cpu_by_configuration"
    # Wanting the GPU instead is a step a machine can apply: the file's own form, then the restart.
    steps = document["findings"][0]["remediation"]["steps"]
    assert [step["kind"] for step in steps] == ["config", "manual"]
    assert steps[0]["file"].endswith("bareun.json") and steps[0]["value"] in ("gpu", "cuda")
    gpu = [f for f in document["findings"] if f["layer"] not in ("config", "probe")]
    assert gpu and all(f["severity"] == "info" for f in gpu)


def test_auto_finds_bareun_through_bareun_root_and_reads_the_log_named(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu", log=None, config=dict(SAMPLE_CONFIG, executionProvider="cpu"))
    log = tmp_path / "nohup.out"
    log.write_text(
        "Use config file: x\nCUDA execution provider is not enabled in this build.\n", encoding="utf-8"
    )
    result = _run("--log", str(log), "--json", "--quick", env=dict(_env(), BAREUN_ROOT=str(root)))
    document = _json(result)
    assert document["target"]["kind"] == "bareun"
    assert document["target"]["root_found_by"] == "BAREUN_ROOT"
    assert document["environment"]["log"]["sources"] == [str(log)]


def test_malformed_config_reported_with_line_and_column_in_korean_text(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu", config_text='{\n  "executionProvider": "gpu",\n}\n')
    result = _run("--target", "bareun", "--bareun-root", str(root), "--lang", "ko", "--quick")
    assert result.returncode == 1, result.stderr
    assert "설정 파일이 올바른 JSON이 아닙니다" in result.stdout
    assert "3번째 줄 1번째 칸" in result.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (
        ("--bareun-root", str(tmp_path / "missing")),
        ("--config", str(tmp_path / "missing.json")),
        ("--log", str(tmp_path / "missing.log")),
        ("--pid", "0"),
        ("--target", "nonsense"),
        ("--target", "log"),
    ):
        result = _run(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr
    if not any(os.path.exists(root) for root in ("/opt/bareun", "/bareun")):
        result = _run("--target", "bareun")
        assert result.returncode == 2
        assert "no Bareun installation" in result.stderr


def test_a_log_target_turns_the_log_into_findings_that_quote_their_line(tmp_path: Path) -> None:
    """Issue 11: `diagnose --target log --log FILE` once made no finding of the log's causes."""
    log = tmp_path / "server.log"
    log.write_text(
        "server starting\n"
        "2025-11-08 19:02:18.488 [E:onnxruntime:Default, provider_bridge_ort.cc:1546 "
        "TryGetProviderInfo_CUDA] "
        "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
        "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
        "libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open shared object file: "
        "No such file or directory\n",
        encoding="utf-8",
    )
    document = _json(_run("--target", "log", "--log", str(log), "--json"))
    from_log = [f for f in document["findings"] if f["id"].startswith("log.")]
    assert from_log, document["findings"]
    quoted = [e for f in from_log for e in f["evidence"] if e.get("line") == 2]
    assert quoted and "libcublasLt.so.12" in json.dumps(from_log)
