"""The application's own model as the running process shows it (core/readers/inference/model_seen.py).

Real processes: one started with its model on its command line (relative to its working folder,
and as ``--model=PATH``), one holding its model open; then ``diagnose --pid`` of such a process
runs that model, and gives way to the bundled encoder, saying why, when it cannot be run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import app_models
import pytest
from fallback_doctor.core.readers.inference.model_seen import SeenModel, models_seen

pytest.importorskip("onnx")

HOLD_OPEN = "import sys, time; handle = open(sys.argv[1], 'rb'); print('ready', flush=True); time.sleep(120)"
SLEEP = "import time; print('ready', flush=True); time.sleep(120)"


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.wait(timeout=10)


def _start(started: list[subprocess.Popen[str]], cwd: Path, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, *args], cwd=cwd, stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    started.append(process)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"  # exec'd, running
    return process


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def test_a_model_on_the_command_line_is_read_from_the_process_s_own_folder(tmp_path, processes) -> None:
    model = app_models.write_conv_model(tmp_path / "vision.onnx")
    (tmp_path / "absent.onnx").touch()
    os.unlink(tmp_path / "absent.onnx")
    app = _start(processes, tmp_path, "-c", SLEEP, "absent.onnx", "--model=vision.onnx")
    seen = models_seen(app.pid, _cmdline(app.pid))
    assert seen == [SeenModel(str(model), "cmdline")]  # the file that is not there is not a model


def test_a_model_held_open_is_seen(tmp_path, processes) -> None:
    model = app_models.write_transformer_model(tmp_path / "held.onnx")
    app = _start(processes, tmp_path, "-c", HOLD_OPEN, str(model))
    seen = models_seen(app.pid, [sys.executable, "-c", "..."])
    assert seen == [SeenModel(str(model), "open_file")]
    assert models_seen(2**22 + 12345, []) == []  # no such process: nothing, no error


def _diagnose(pid: int, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    command = [
        sys.executable,
        "-m",
        "fallback_doctor",
        "diagnose",
        "--pid",
        str(pid),
        "--python",
        sys.executable,
    ]
    return subprocess.run(
        [*command, "--runs", "2", *extra], capture_output=True, text=True, timeout=240, env=env, check=False
    )


def test_diagnose_pid_runs_the_model_the_process_was_started_with(tmp_path, processes) -> None:
    app_models.write_transformer_model(tmp_path / "tiny_encoder.onnx")
    app = _start(processes, tmp_path, "-c", SLEEP, "tiny_encoder.onnx")
    done = _diagnose(app.pid, "--dim", "batch_size=2", "--dim", "sequence_length=8")
    assert done.returncode == 1, done.stderr
    assert (
        "Test inference model: tiny_encoder.onnx (batch_size=2 (given), sequence_length=8 (given)); "
        "named on the running process's command line"
    ) in done.stdout
    assert "Node placement in the GPU retry: CPU 18 of 18 nodes" in done.stdout


def test_a_model_seen_that_cannot_be_run_gives_way_to_the_bundled_encoder(tmp_path, processes) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model at all\n")
    app = _start(processes, tmp_path, "-c", SLEEP, str(broken))
    done = _diagnose(app.pid, "--json")
    assert done.returncode == 1, done.stderr
    import json

    model = json.loads(done.stdout)["inference"]["model"]
    assert model["name"] == "encoder.onnx" and model["source"] == "bundled"
    assert model["seen_not_run"].startswith(f"{broken}: not an ONNX model this tool can read")
