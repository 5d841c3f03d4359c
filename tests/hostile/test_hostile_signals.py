"""Signals mid-run: SIGINT, SIGTERM or SIGHUP during the package listing ends the tool and every child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_interpreters import make, pids_of, wait_gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and fork: Linux")

TOOL = (sys.executable, "-m", "fallback_doctor")
LONG_RUN = ("--runs", "100000", "--warmup", "1", "--dim", "batch=2", "--dim", "seq=32")


def _wait_for(path_pids: callable, count: int, seconds: float = 30.0) -> list[int]:  # type: ignore[valid-type]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = path_pids()
        if len(pids) >= count:
            return pids
        time.sleep(0.05)
    pytest.fail("the fake interpreter did not start its children")


def _signal_the_tool(tmp_path: Path, signum: int, children: int, delay: float) -> tuple[int, bytes, list]:
    """Run ``diagnose`` on a forking fake interpreter, signal it ``delay`` s after ``children`` of
    the interpreter run; its exit status, its stderr and the children's pids."""
    python = make(tmp_path, "fork")
    tool = subprocess.Popen(
        [sys.executable, "-m", "fallback_doctor", "diagnose", "--python", str(python), "--quick", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        pids = _wait_for(lambda: pids_of(tmp_path, "fork"), children)
        time.sleep(delay)
        tool.send_signal(signum)
        _out, err = tool.communicate(timeout=30)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    return tool.returncode, err, pids


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_listing_leaves_no_process_of_ours(tmp_path: Path, signum: int) -> None:
    # 2.5 s: past the start-up imports, the tool now waits on the listing.
    returncode, err, pids = _signal_the_tool(tmp_path, signum, children=4, delay=2.5)
    assert returncode == 130, err.decode(errors="replace")
    assert b"interrupted" in err
    assert wait_gone(pids, 5.0) == [], "a child of the tool outlived it"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_start_up_ends_the_tool_the_same_way(tmp_path: Path, signum: int) -> None:
    """The listing starts before the core is imported: a signal the moment it runs (while the
    tool may still be importing) ends the tool with 130 and "interrupted", never a traceback."""
    returncode, err, pids = _signal_the_tool(tmp_path, signum, children=1, delay=0.0)
    assert returncode == 130, err.decode(errors="replace")
    assert b"interrupted" in err and b"Traceback" not in err, err.decode(errors="replace")
    assert wait_gone(pids, 5.0) == [], "a child of the tool outlived it"


def test_sigterm_during_the_test_inference_ends_the_probe_too() -> None:
    """SIGTERM while the probe child runs the test model (issue 10: the child was left running)."""
    import psutil

    tool = subprocess.Popen(
        [*TOOL, "test-inference", "--python", sys.executable, *LONG_RUN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        children: list[psutil.Process] = []
        while time.monotonic() < deadline and not children:
            children = [
                child
                for child in psutil.Process(tool.pid).children(recursive=True)
                if any("child" in part for part in child.cmdline())
            ]
            time.sleep(0.05)
        assert children, "the probe child did not start"
        time.sleep(1.0)  # inside the timed runs
        tool.send_signal(signal.SIGTERM)
        _out, err = tool.communicate(timeout=30)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    assert tool.returncode == 130, err.decode(errors="replace")
    assert b"Traceback" not in err
    assert wait_gone([child.pid for child in children], 5.0) == [], "the probe outlived the tool"


def test_an_interrupt_wrapped_by_python_is_still_an_interrupt() -> None:
    """CI saw it: SIGINT while a dataclass was being created raised KeyboardInterrupt inside
    ``Field.__set_name__``, which Python 3.11 wraps in RuntimeError; the launcher must still say
    "interrupted" and exit 130, never print that traceback."""
    from fallback_doctor.launcher import _caused_by_interrupt

    def wrapped() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from interrupt

    with pytest.raises(RuntimeError) as raised:
        wrapped()
    assert _caused_by_interrupt(raised.value)
    assert not _caused_by_interrupt(RuntimeError("a real error"))
