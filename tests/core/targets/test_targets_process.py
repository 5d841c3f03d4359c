"""``--pid``: the process's own interpreter, found from what it really has (real processes only).

Each case starts a real process; the evidence the reader must use is the one the case leaves:
a site-packages file mapped, only VIRTUAL_ENV, only the command line, only /proc/PID/exe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fallback_doctor.core.readers.targets.process import describe_process, read_running_process
from fallback_doctor.core.readers.targets.resolve import TargetNotFound, resolve_target
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")

BASE = os.path.realpath(f"/proc/{os.getpid()}/exe")
"""The base interpreter the tool's virtual environment was made from."""
SLEEP = "import sys, time; print('ready', flush=True); time.sleep(60)"


@contextmanager
def started(argv: list[str], env: dict[str, str] | None = None) -> Iterator[int]:
    """A real process, ready (it printed its line), ended by its pid afterwards."""
    clean = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**clean, **(env or {})})
    try:
        assert process.stdout is not None
        process.stdout.readline()
        yield process.pid
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_virtual_environment_is_found_from_the_site_packages_it_mapped() -> None:
    code = "import psutil; " + SLEEP  # psutil's extension lives in the venv's site-packages
    with started([sys.executable, "-c", code]) as pid:
        running = read_running_process(pid)
    assert running.executable == BASE  # /proc/PID/exe names the base interpreter, not the venv
    assert running.is_python and running.found_by == "maps"
    assert running.prefix == os.path.realpath(sys.prefix)
    assert running.interpreter == os.path.join(os.path.realpath(sys.prefix), "bin", "python")
    assert running.environment_read and running.environment_error is None
    assert running.cwd == os.getcwd()


def test_virtual_env_of_the_process_when_nothing_of_it_is_mapped() -> None:
    with started([BASE, "-S", "-c", SLEEP], {"VIRTUAL_ENV": sys.prefix}) as pid:
        running = read_running_process(pid)
    assert running.found_by == "virtual_env"
    assert running.interpreter == os.path.join(sys.prefix, "bin", "python")


def test_the_command_line_when_neither_maps_nor_environment_say() -> None:
    with started([sys.executable, "-S", "-c", SLEEP]) as pid:
        running = read_running_process(pid)
    assert running.found_by == "argv"
    assert running.interpreter == sys.executable


def test_the_executable_itself_for_a_plain_interpreter() -> None:
    with started([BASE, "-S", "-c", SLEEP]) as pid:
        running = read_running_process(pid)
        described = describe_process(running)
    assert running.found_by == "exe" and running.interpreter == BASE
    assert described["pid"] == str(pid) and described["python"] == BASE
    assert described["environment"] == "process" and described["python_found_by"] == "exe"


def test_a_python_pid_becomes_a_python_target_with_its_own_interpreter() -> None:
    code = "import psutil; " + SLEEP
    with started([sys.executable, "-c", code]) as pid:
        target = resolve_target(TargetSpec(kind=TargetKind.AUTO, pid=pid), {}, roots=())
    assert target.kind == "python"
    assert target.python == os.path.join(os.path.realpath(sys.prefix), "bin", "python")
    assert target.process is not None and target.process.pid == pid


def test_a_native_process_without_onnxruntime_is_said_not_diagnosed_as_the_tool() -> None:
    with started(["/bin/sh", "-c", "echo ready; exec sleep 60"]) as pid:
        running = read_running_process(pid)
        assert not running.is_python and running.interpreter is None
        with pytest.raises(TargetNotFound, match=f"process {pid} has no ONNX Runtime library mapped"):
            resolve_target(TargetSpec(kind=TargetKind.AUTO, pid=pid), {}, roots=())


def test_an_unreadable_environment_is_said_first_in_text_and_html_in_both_languages() -> None:
    from fallback_doctor.core.bundle.html import render_html
    from fallback_doctor.core.model.facts.target import RunningProcess
    from fallback_doctor.core.views.text_report import process_lines

    running = RunningProcess(
        pid=4242,
        executable="/usr/bin/python3.11",
        argv=("/srv/app/venv/bin/python", "app.py"),
        cwd="/srv/app",
        is_python=True,
        interpreter="/srv/app/venv/bin/python",
        prefix="/srv/app/venv",
        found_by="argv",
        environment_error="PermissionError: Permission denied",
    )
    document = {"target": {"kind": "python", **describe_process(running)}, "verdict": "gpu_unusable"}
    english = process_lines(document, "en")
    assert english[0] == "Process 4242: /srv/app/venv/bin/python app.py"
    assert "interpreter: /srv/app/venv/bin/python (found from the process's command line)" in english[1]
    assert "not readable (PermissionError: Permission denied); the shell's environment stood in" in english[2]
    korean = process_lines(document, "ko")
    assert korean[2].strip().startswith("환경: 읽을 수 없음(PermissionError: Permission denied)")
    page = render_html(document, lang="en")
    assert page.index("Process 4242") < page.index("Verdict")


def test_a_document_without_a_process_has_no_process_lines() -> None:
    from fallback_doctor.core.views.text_report import process_lines

    assert process_lines({"target": {"kind": "python", "python": "/usr/bin/python3"}}, "en") == []


@pytest.mark.skipif(
    not os.path.isfile("/usr/lib/python3/dist-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so")
    or not os.path.isfile("/usr/bin/python3.11"),
    reason="needs Debian's python3.11 with python3-cffi-backend",
)
def test_a_system_interpreter_with_dist_packages_is_itself() -> None:
    with started(["/usr/bin/python3", "-c", "import _cffi_backend; " + SLEEP]) as pid:
        running = read_running_process(pid)
    assert running.found_by == "maps" and running.prefix == "/usr"
    assert running.interpreter == "/usr/bin/python3.11"  # not /usr/bin/python, which may be another


def test_a_native_process_with_onnxruntime_mapped_is_a_native_target_said_as_such() -> None:
    """``sleep`` with onnxruntime-node's libonnxruntime.so.1 preloaded: a real native process that
    has ONNX Runtime mapped (no Python anywhere in it)."""
    from bareun_layout import cpu_library
    from fallback_doctor.core.views.text_report import process_lines

    library = cpu_library()
    process = subprocess.Popen(["sleep", "60"], env={**os.environ, "LD_PRELOAD": str(library)})
    try:
        for _ in range(100):  # until the loader has mapped it
            if "libonnxruntime.so" in Path(f"/proc/{process.pid}/maps").read_text():
                break
            time.sleep(0.05)
        target = resolve_target(TargetSpec(kind=TargetKind.AUTO, pid=process.pid), {}, roots=())
    finally:
        process.kill()
        process.wait(timeout=30)
    assert target.kind == "native" and target.lib_path == str(library.parent)
    assert target.process is not None and not target.process.is_python
    described = describe_process(target.process)
    assert "python" not in described and described["executable"].endswith("/sleep")
    lines = process_lines({"target": described}, "en")
    assert lines[1].strip().startswith("no Python interpreter: a native program (")


def test_the_files_a_process_writes_its_output_to_are_its_log(tmp_path: Path) -> None:
    """stderr into a file is read as the process's log; a pipe and a deleted file are not."""

    from fallback_doctor.core.readers.targets.process import output_files

    log, gone = tmp_path / "app.log", tmp_path / "gone.log"
    with log.open("w") as err, gone.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(30)"], stdout=out, stderr=err
        )
    try:
        assert output_files(f"/proc/{child.pid}") == (str(gone), str(log))
        gone.unlink()
        assert output_files(f"/proc/{child.pid}") == (str(log),)
    finally:
        child.kill()
        child.wait()
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    piped = subprocess.Popen(sleeper, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert output_files(f"/proc/{piped.pid}") == ()
    finally:
        piped.kill()
        piped.wait()
