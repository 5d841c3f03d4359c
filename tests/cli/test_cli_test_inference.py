"""`fallback-doctor test-inference` and `diagnose --bundle` end to end, in subprocesses, on real runtimes.

A Python target (this interpreter's onnxruntime-gpu without CUDA libraries: the GPU retry falls back)
and a Bareun-like target (onnxruntime-node's real CPU-only libonnxruntime.so.1 driven through its
C API). No NVIDIA driver here: the sampled series says why it has no GPU readings. The "GPU
active" verdict path is not exercised on a GPU here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import make_install

FAST = ("--runs", "3", "--warmup", "1", "--dim", "batch=2", "--dim", "seq=32")


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    env["LANG"] = "C.UTF-8"
    return env


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(),
        cwd=cwd,
    )


def test_python_target_json_end_to_end() -> None:
    done = _run("test-inference", "--target", "python", "--python", sys.executable, *FAST, "--json")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["verdict"] == "fell_back_to_cpu"
    result = document["result"]
    latency = result["cpu"]["latency"]
    assert latency["p50_ms"] > 0 and latency["p95_ms"] >= latency["p50_ms"] and latency["runs"] == 3
    series = result["series"]
    assert series["sentences"][0].startswith("NVML: ")
    assert any(s["probe_cpu_percent"] is not None and s["pid"] for s in series["samples"])
    assert not any(s["utilization_percent"] is not None for s in series["samples"])  # no zeros
    assert result["gpu_before"]["read"] is False
    fell_back = next(f for f in document["findings"] if f["id"] == "inference.fell_back")
    # The verify line names the target's own interpreter, never a bare "python".
    assert fell_back["verify"].startswith(f"`{sys.executable} -c ")
    assert [step["kind"] for step in fell_back["steps"]] == ["code", "code"]  # the start-up guard


def test_bareun_target_through_the_c_api_end_to_end(tmp_path: Path) -> None:
    root = make_install(tmp_path)
    done = _run("test-inference", "--target", "bareun", "--bareun-root", str(root), *FAST, "--json")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    result = document["result"]
    assert result["kind"] == "capi"
    assert result["runtime"]["ort_location"].startswith(str(root / "lib"))
    latency = result["cpu"]["latency"]
    assert latency["p50_ms"] > 0 and latency["p99_ms"] >= latency["p95_ms"] >= latency["p50_ms"]
    gpu = result["strategies"][0]["gpu"]
    assert gpu["active_providers"] == ["CPUExecutionProvider"]
    fell_back = next(f for f in document["findings"] if f["id"] == "inference.fell_back_native")
    # ONNX Runtime's own words, quoted: its error banner and the strict run's refusal.
    assert "[ONNXRuntimeError]" in fell_back["detail"]
    assert "fallback to CPU EP has been explicitly disabled" in fell_back["detail"]
    # A native server: no Python statement as its fix or verify line, but its process and restart.
    assert "Python" not in fell_back["fix"] and "python -c" not in fell_back["verify"]
    assert "/proc/" in fell_back["verify"] and "restart" in fell_back["fix"] and not fell_back["steps"]
    # The series is part of the result. (Whether a short run yields a CPU % depends on how many
    # 100 ms ticks it lasted: psutil's first reading of a new process is no measurement. The CPU
    # samples themselves are checked on a longer run in tests/core/inference/test_inference_sampled.py.)
    series = result["series"]
    assert series["samples"]
    assert any("NVML" in sentence for sentence in series.get("sentences", []))


def test_text_output_gives_stages_in_words_in_korean(tmp_path: Path) -> None:
    root = make_install(tmp_path)
    done = _run("test-inference", "--target", "bareun", "--bareun-root", str(root), *FAST, "--lang", "ko")
    assert done.returncode == 1, done.stderr
    text = done.stdout
    assert "전략별 결과" in text
    assert "ONNX Runtime은 불러왔으나 GPU 프로바이더의 라이브러리는 불러오지 못함" in text
    assert "runtime_loaded" not in text
    assert "p50 지연 시간(ms)" in text and "프로브 비용: 프로세스 시작" in text
    assert "p50 latency" not in text and "Probe cost" not in text and "with GPU readings" not in text
    assert "NVML" in text and "판정: CPU로 전환됨" in text
    # The columns line up by display width (a Korean character takes two columns).
    head, p50 = next(
        (line, after)
        for line, after in zip(text.splitlines(), text.splitlines()[1:], strict=False)
        if "CPU 기준" in line
    )
    assert _columns(head) == _columns(p50)


def _columns(line: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in line)


def test_diagnose_bundle_holds_samples_and_probe_outputs(tmp_path: Path) -> None:
    bundle = tmp_path / "case.zip"
    done = _run(
        "diagnose", "--target", "python", "--python", sys.executable, "--runs", "2", "--bundle", str(bundle)
    )
    assert done.returncode == 1, done.stderr
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        samples = archive.read("samples.csv").decode("utf-8").splitlines()
        stdout = archive.read("probe/as_is.stdout.txt").decode("utf-8")
    assert "probe/as_is.stderr.txt" in names
    assert samples[0].endswith("probe_cpu_percent,pid,phase")
    phases = {row.rsplit(",", 1)[1] for row in samples[1:]}
    assert phases & {"import", "cpu.session", "cpu.warmup", "cpu.timed", "gpu.session", "gpu.strict"}
    assert '"event"' in stdout


def test_text_output_prints_the_steps_its_fixes_point_at() -> None:
    """Every finding's fix is followed by its steps as the report prints them: code shown as code
    (never a "$ import …" shell line), commands with "$ ", in the report's language."""
    for lang in ("en", "ko"):
        done = _run("test-inference", "--python", sys.executable, *FAST, "--lang", lang)
        assert done.returncode in (0, 1), done.stderr
        text = done.stdout
        assert "$ import" not in text and "$ assert" not in text and "$ session" not in text
        fix_label = "Fix" if lang == "en" else "해결"
        blocks = [block for block in text.split("\n\n") if f"  {fix_label}" in block]
        assert blocks, text
        for block in blocks:
            after = block.split(f"  {fix_label}", 1)[1].splitlines()[1:]
            steps = [line for line in after if line.startswith("    ")]
            if "below" in block or "아래" in block:
                assert steps, block


def test_diagnose_says_whose_code_runs_and_for_how_long_before_the_test_inference() -> None:
    """Issue 10: the technician is told before the application's code runs, with the bound the
    whole test inference has, and how to lengthen it."""
    done = _run("diagnose", "--python", sys.executable, "--runs", "2", "--inference-timeout", "7", "--json")
    assert "the application's code runs, as this user, for at most 7 s" in done.stderr, done.stderr
    assert "--inference-timeout" in done.stderr
    json.loads(done.stdout)  # the notice is on stderr: stdout stays whole JSON


def test_a_failed_package_listing_is_never_called_not_installed() -> None:
    from fallback_doctor.core.flow.step_run import skip_reason
    from fallback_doctor.core.model.facts.target import TargetFacts

    target = TargetFacts(
        kind="python", root=None, config_path=None, log_paths=(), lib_path=None, requested_provider=None
    )
    why = skip_reason(target, ort_installed=None, python_read=False)
    assert why is not None and "not installed" not in why and "unknown" in why


def test_without_runs_the_timed_runs_stop_once_steady() -> None:
    """By default the runs stop once the median is known within 2 % (at least 5, at most 20);
    `--runs N` (the test above) runs exactly N."""
    fast = ("--warmup", "1", "--dim", "batch=2", "--dim", "seq=32")
    done = _run("test-inference", "--target", "python", "--python", sys.executable, *fast, "--json")
    assert done.returncode == 1, done.stderr
    latency = json.loads(done.stdout)["result"]["cpu"]["latency"]
    assert 5 <= latency["runs"] <= 20
