"""core/platform/frozen.py without a build: the environment a child gets, the probe commands, the dispatch.

A frozen build is imitated with ``sys.frozen`` / ``sys._MEIPASS`` (what PyInstaller sets); the
real build is tested in test_frozen_build.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.platform import frozen

BUNDLE = "/opt/fallback-doctor/_internal"


@pytest.fixture
def as_frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This interpreter dressed as a frozen build whose executable is tmp_path/fallback-doctor."""
    exe = tmp_path / "fallback-doctor"
    exe.write_text("")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", BUNDLE, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    return exe


def test_outside_a_frozen_build_the_environment_is_kept_as_it_is() -> None:
    env = {"LD_LIBRARY_PATH": f"{BUNDLE}:/usr/local/cuda/lib64", "LD_LIBRARY_PATH_ORIG": "/x"}
    assert frozen.target_environment(env) == env
    assert frozen.target_environment(env) is not env


def test_the_bootloaders_library_path_is_taken_back() -> None:
    env = {
        "LD_LIBRARY_PATH": f"{BUNDLE}:/usr/local/cuda/lib64",
        "LD_LIBRARY_PATH_ORIG": "/usr/local/cuda/lib64",
    }
    assert frozen.target_environment(env, BUNDLE) == {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}


def test_no_original_library_path_means_none_at_all() -> None:
    assert frozen.target_environment({"LD_LIBRARY_PATH": BUNDLE, "HOME": "/root"}, BUNDLE) == {
        "HOME": "/root"
    }


def test_an_empty_original_is_restored_empty() -> None:
    env = {"LD_LIBRARY_PATH": BUNDLE, "LD_LIBRARY_PATH_ORIG": ""}
    assert frozen.target_environment(env, BUNDLE) == {"LD_LIBRARY_PATH": ""}


def test_entries_others_put_first_stay_and_only_the_bundles_go() -> None:
    # read_library_version puts the libPath first on the environment the tool was given.
    env = {
        "LD_LIBRARY_PATH": f"/srv/bareun/lib:{BUNDLE}:/usr/local/cuda/lib64",
        "LD_LIBRARY_PATH_ORIG": "/usr/local/cuda/lib64",
        "PATH": f"{BUNDLE}/bin:/usr/bin",
        "QT_PLUGIN_PATH": f"{BUNDLE}/PySide6/Qt/plugins",
        "_PYI_ARCHIVE_FILE": "/opt/fallback-doctor/fallback-doctor",
        "_PYI_PARENT_PROCESS_LEVEL": "1",
    }
    assert frozen.target_environment(env, BUNDLE) == {
        "LD_LIBRARY_PATH": "/srv/bareun/lib:/usr/local/cuda/lib64",
        "PATH": "/usr/bin",
        # Kept: the executable re-invoked for a probe then does not restart with its folder first.
        "_PYI_ARCHIVE_FILE": "/opt/fallback-doctor/fallback-doctor",
        "_PYI_PARENT_PROCESS_LEVEL": "1",
    }


def test_a_folder_that_only_starts_like_the_bundle_is_not_inside_it() -> None:
    env = {"LD_LIBRARY_PATH": f"{BUNDLE}-other/lib"}
    assert frozen.target_environment(env, BUNDLE) == env


def test_probe_commands_outside_a_frozen_build() -> None:
    assert frozen.probe_argv(
        "/usr/bin/python3", Path("/x/native_child.py"), "--driver-first", flags=("-I",)
    ) == [
        "/usr/bin/python3",
        "-B",
        "-I",
        "/x/native_child.py",
        "--driver-first",
    ]
    assert frozen.module_argv("/v/bin/python", "fallback_doctor.core.flow.step_child") == [
        "/v/bin/python",
        "-m",
        "fallback_doctor.core.flow.step_child",
    ]


def test_a_frozen_build_re_invokes_itself_for_its_own_probes(as_frozen: Path) -> None:
    script = Path(frozen.probes_dir()) / "native_child.py"
    assert frozen.probe_argv(str(as_frozen), script, "--driver-first", flags=("-I", "-S")) == [
        str(as_frozen),
        frozen.PROBE_ARGUMENT,
        str(script),
        "--driver-first",
    ]
    assert frozen.module_argv(str(as_frozen), "fallback_doctor.core.flow.step_child") == [
        str(as_frozen),
        frozen.MODULE_ARGUMENT,
        "fallback_doctor.core.flow.step_child",
    ]
    # The application's interpreter is still run by path, with its flags.
    assert frozen.probe_argv("/srv/app/bin/python", script, flags=("-I",)) == [
        "/srv/app/bin/python",
        "-B",
        "-I",
        str(script),
    ]


def test_a_frozen_build_diagnoses_python3_of_the_path(as_frozen: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    assert frozen.default_python({"PATH": f"{BUNDLE}:{bin_dir}"}) == str(python)
    assert frozen.default_python({"PATH": str(tmp_path / "nothing")}) == "python3"


def test_outside_a_frozen_build_the_default_interpreter_is_ours() -> None:
    assert frozen.default_python() == sys.executable


def test_run_probe_runs_a_real_probe_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The libonnxruntime version child, asked about a file that is no library: its own error."""
    not_a_library = tmp_path / "libonnxruntime.so.1"
    not_a_library.write_text("no ELF here")
    script = os.path.join(frozen.probes_dir(), "ort_version_child.py")
    argv = sys.argv
    try:
        status = frozen.run_probe_if_asked([frozen.PROBE_ARGUMENT, script, str(not_a_library)])
    finally:
        sys.argv = argv
    reply = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # The script saw its own argv (the library as argv[1]) and exited through SystemExit(3).
    assert reply["error"].startswith("OSError"), reply
    assert status == 3


def test_run_probe_refuses_anything_but_the_tools_own_probes(tmp_path: Path) -> None:
    other = tmp_path / "evil_child.py"
    other.write_text("raise SystemExit(42)\n")
    assert frozen.run_probe_if_asked([frozen.PROBE_ARGUMENT, str(other)]) == 2
    assert frozen.run_probe_if_asked([frozen.MODULE_ARGUMENT, "os"]) == 2
    assert frozen.run_probe_if_asked(["diagnose", "--quick"]) is None
    assert frozen.run_probe_if_asked([]) is None


def test_the_children_started_early_are_the_ones_the_collectors_take(
    as_frozen: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frozen build started both early children with interpreter flags as its own arguments and
    under the bootloader's environment: neither was taken, both were started again on the critical
    path (strace of `diagnose --quick`: two listings, two native children)."""
    from fallback_doctor.core.readers.collect import early

    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(early, "start_child", lambda argv, env, **_: started.append((argv, env)) or object())
    monkeypatch.setattr(early, "_STARTED", {})
    monkeypatch.setattr(early, "_NATIVE", {})
    bootloader_env = {"LD_LIBRARY_PATH": BUNDLE, "LD_LIBRARY_PATH_ORIG": "/usr/local/cuda/lib64"}
    early.start_diagnose_children("/usr/bin/python3", bootloader_env)

    native_argv = started[1][0]
    assert native_argv[:2] == [str(as_frozen), frozen.PROBE_ARGUMENT] and native_argv[-1] == "--driver-first"
    assert "-I" not in native_argv
    target_env = frozen.target_environment(bootloader_env)
    assert target_env == {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
    assert early.take_python_env("/usr/bin/python3", target_env) is not None
    assert early.take_native(str(as_frozen), target_env) is not None
