"""collect_process / find_server_process on REAL children that load real ONNX Runtime and CUDA libraries.

Every child is killed when its test ends (``running_child``); nothing is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks import process as process_checks
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.result import Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.find_process import find_server_process
from fallback_doctor.core.readers.collect.process import collect_process
from process_children import base_env, ort_core, private_copy, running_child, stack_dir

pytestmark = pytest.mark.timeout(120)


def _target(requested: str | None = "cuda", **kw: object) -> TargetFacts:
    values: dict[str, object] = {
        "kind": "bareun",
        "root": None,
        "config_path": None,
        "log_paths": (),
        "lib_path": None,
        "requested_provider": requested,
    }
    values.update(kw)
    return TargetFacts(**values)  # type: ignore[arg-type]


def _findings(snapshot: EnvironmentSnapshot) -> dict[str, object]:
    found = {}
    for check in process_checks.CHECKS:
        for finding in check(snapshot):
            found[finding.id] = finding
    return found


@pytest.fixture(scope="module")
def gpu12() -> Path:
    return stack_dir("gpu12-full")


def test_child_maps_and_environment_are_read(gpu12: Path) -> None:
    nvidia = [str(gpu12 / "nvidia" / part / "lib") for part in ("cuda_runtime", "cudnn")]
    env = base_env(LD_LIBRARY_PATH=":".join(nvidia), CUDA_VISIBLE_DEVICES="-1", SECRET_TOKEN="x")
    core = ort_core("gpu12-full")
    with running_child([core, "libcudart.so.12", "libcudnn.so.9"], env) as child:
        facts = collect_process(child.pid, shell_env={"PATH": "/usr/bin:/bin"})
    assert facts.error is None and facts.maps_read
    families = {lib.family: lib for lib in facts.mapped_libraries}
    assert families["ort_core"].path == str(core)
    assert families["cudart"].major == 12 and families["cudart"].cuda_major == 12
    assert families["cudart"].path.startswith(nvidia[0])
    assert families["cudnn"].major == 9
    assert facts.environment is not None
    assert facts.environment["LD_LIBRARY_PATH"] == env["LD_LIBRARY_PATH"]
    assert facts.environment["CUDA_VISIBLE_DEVICES"] == "-1"
    assert "SECRET_TOKEN" not in facts.environment  # allowlisted only
    assert facts.executable is not None and "python" in facts.executable
    # The GPU build's CUDA provider lies next to the core, not mapped: it needs CUDA 12 / cuDNN 9.
    assert not facts.cuda_provider_mapped
    assert facts.provider_library_on_disk == str(core.parent / "libonnxruntime_providers_cuda.so")
    assert (facts.needed_cuda_major, facts.needed_cudnn_major) == (12, 9)
    assert facts.gpu_memory.status in ("unknown", "none")  # no NVIDIA driver on this machine

    found = _findings(EnvironmentSnapshot(target=_target("cuda"), process=facts))
    assert found["process.gpu_hidden"].severity == Severity.ERROR  # type: ignore[attr-defined]
    assert found["process.gpu_hidden"].cause == "no_gpu_visible"  # type: ignore[attr-defined]
    assert found["process.cuda_provider_not_loaded"].severity == Severity.ERROR  # type: ignore[attr-defined]
    differs = found["process.environment_differs"]
    assert "LD_LIBRARY_PATH" in differs.title and "CUDA_VISIBLE_DEVICES" in differs.title  # type: ignore[attr-defined]
    mapped = found["process.mapped_libraries"]
    assert any("libcudart.so.12" in e.value for e in mapped.evidence)  # type: ignore[attr-defined]
    assert "process.cuda_major_mapped" not in found and "process.cudnn_major_mapped" not in found
    assert all(words_of(f, "ko")["title"] for f in found.values())  # type: ignore[attr-defined]


def test_mapped_cuda_of_another_major_is_a_mismatch(gpu12: Path) -> None:
    cu13 = stack_dir("gpu13-cuda13-wheels") / "nvidia" / "cu13" / "lib"
    env = base_env(LD_LIBRARY_PATH=str(cu13))
    with running_child([ort_core("gpu12-full"), "libcudart.so.13"], env) as child:
        facts = collect_process(child.pid)
    found = _findings(EnvironmentSnapshot(target=_target("cuda"), process=facts))
    mismatch = found["process.cuda_major_mapped"]
    assert mismatch.cause == "cuda_major_mismatch"  # type: ignore[attr-defined]
    assert "CUDA 13" in mismatch.title and "CUDA 12" in mismatch.title  # type: ignore[attr-defined]
    assert any(str(cu13) in e.value for e in mismatch.evidence)  # type: ignore[attr-defined]


def test_cpu_only_runtime_in_the_server() -> None:
    with running_child([ort_core("cpu-only")], base_env()) as child:
        facts = collect_process(child.pid)
    assert facts.provider_library_on_disk is None
    asked_gpu = _findings(EnvironmentSnapshot(target=_target("cuda"), process=facts))
    assert asked_gpu["process.cpu_only_build"].severity == Severity.ERROR  # type: ignore[attr-defined]
    assert asked_gpu["process.cpu_only_build"].cause == "ep_not_in_build"  # type: ignore[attr-defined]
    asked_cpu = _findings(EnvironmentSnapshot(target=_target("cpu"), process=facts))
    assert asked_cpu["process.cpu_only_build"].severity == Severity.INFO  # type: ignore[attr-defined]


def test_find_server_by_executable_library_pid_and_port(tmp_path: Path) -> None:
    root = tmp_path / "bareun"
    lib_dir = root / "lib"
    core = private_copy(ort_core("cpu-only"), lib_dir)
    server = root / "bin" / "server.py"
    server.parent.mkdir(parents=True)
    server.write_text(
        "import ctypes, sys\nctypes.CDLL(sys.argv[1])\nprint('ready', flush=True)\nsys.stdin.read()\n"
    )
    # By executable: the server's own binary lies under the root (a copy of this interpreter here).
    executable = root / "bin" / "bareun-server"
    shutil.copy2(os.path.realpath(sys.executable), executable)
    with running_child([core], base_env(), python=str(executable)) as child:
        assert find_server_process(_target(root=str(root)), None) == child.pid
    # A path under the root in the arguments is no proof (issue 28: `less <root>/config/bareun.json`).
    with running_child([server, core], base_env(), script=None) as child:
        assert find_server_process(_target(root=str(root)), None) is None
    # By library only: the child maps a file under lib_path (its command line says nothing).
    with running_child([core], base_env()) as child:
        assert find_server_process(_target(lib_path=str(lib_dir)), None) == child.pid
        assert find_server_process(_target(), child.pid) == child.pid
    assert find_server_process(_target(), 2**22 + 12345) is None
    assert find_server_process(_target(root=str(tmp_path / "nothing")), None) is None


def test_find_server_by_configured_port(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "bareun.json"
    config.write_text(json.dumps({"address": {"port": port}}))
    script = (
        "import socket, sys\ns = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n"
        "print('ready', flush=True)\nsys.stdin.read()\n"
    )
    with running_child([str(port)], base_env(), script=script) as child:
        assert find_server_process(_target(config_path=str(config)), None) == child.pid


def test_another_users_environment_is_a_recorded_limit_with_the_command_to_allow_it() -> None:
    """The server runs as nobody; the reader is root without capabilities (as a normal user is)."""
    server = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "60"],
        env=base_env(CUDA_VISIBLE_DEVICES="-1"),
        start_new_session=True,
    )
    try:
        reader = (
            "import json, sys\nfrom dataclasses import asdict\n"
            "from fallback_doctor.core.readers.collect.process import collect_process\n"
            "print(json.dumps(asdict(collect_process(int(sys.argv[1])))))\n"
        )
        done = subprocess.run(
            [
                "setpriv",
                "--bounding-set=-all",
                "--inh-caps=-all",
                sys.executable,
                "-c",
                reader,
                str(server.pid),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        server.kill()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["environment"] is None and not facts["maps_read"]
    limits = {limit["what"]: limit for limit in facts["read_limits"]}
    assert "environ" in limits and "maps" in limits
    assert f"sudo fallback-doctor diagnose --pid {server.pid}" in limits["environ"]["allow"]
    assert "sudo -u nobody" in limits["environ"]["allow"]
    assert facts["user"] == "nobody"


def test_a_process_that_is_gone_is_said_not_raised() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    facts = collect_process(child.pid)
    assert facts.error is not None and facts.mapped_libraries == ()
    found = _findings(EnvironmentSnapshot(target=_target(), process=facts))
    assert set(found) == {"process.not_found"}


def test_the_tools_own_process_is_readable() -> None:
    facts = collect_process(os.getpid())
    assert facts.error is None and facts.maps_read and facts.environment is not None
