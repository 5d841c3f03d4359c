"""The Ansible playbook, for real: ansible-core runs packaging/ansible/fleet.yml against hosts that
are this machine (local connection), each pointed at a different real broken stack, plus a host
that cannot be reached and one where the tool fails; then the fetched bundles and the summary.

On this machine there is no NVIDIA driver (and it runs in a container), so the driver is the
first cause of every host that asks for the GPU: they form one group, whatever else is broken
above it (the lowest broken layer comes first). The CPU-by-configuration host is its own group.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.safe_open import open_bundle
from fleet_hosts import TOOL, bareun_host, python_host, run_playbook, tool_archive

pytestmark = [pytest.mark.scenario, pytest.mark.slow, pytest.mark.timeout(900)]

pytest.importorskip("ansible", reason="ansible-core is in the test extras")

INSTALLED = str(Path(sys.executable).with_name("fallback-doctor"))
"""The console script of this install: a string is a path to an installed fallback-doctor."""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("fleet")
    host_tmp = work / "host-tmp"
    host_tmp.mkdir()
    cpu_config = {**bareun_layout_config(), "executionProvider": {"provider": "cpu"}}
    hosts: dict[str, dict[str, Any]] = {
        # the CUDA 13 wheels are installed, not on the loader path; copied as the frozen build
        "cuda13-not-on-path": python_host("s4_wheels_not_on_path"),
        # the whole CUDA 12 stack on the application's library path (only the driver is missing)
        "cuda12-full": {**python_host("s9_cuda12_full_stack"), "fallback_doctor_command": TOOL},
        # a Bareun server whose libPath holds the CPU-only ONNX Runtime; the installed tool by its path
        "bareun-cpu-lib": {**bareun_host(work / "b1", lib="cpu"), "fallback_doctor_command": INSTALLED},
        # a Bareun server configured for the CPU
        "bareun-cpu-config": {**bareun_host(work / "b2", lib="gpu", config=cpu_config, log=None)},
        # the tool fails: the Bareun root given for this host does not exist
        "broken-target": {"fallback_doctor_bareun_root": str(work / "no-such-bareun")},
        # nothing listens there
        "unreachable": {
            "ansible_connection": "ssh",
            "ansible_host": "127.0.0.2",
            "ansible_port": 9,
            "ansible_user": "nobody",
        },
    }
    inventory = {
        "all": {
            "hosts": hosts,
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "fallback_doctor_quick": True,
                "fallback_doctor_tmp_root": str(host_tmp),
            },
        }
    }
    fleet_dir = work / "fleet"
    extra = {
        "fallback_doctor_fleet_dir": str(fleet_dir),
        "fallback_doctor_archive": str(tool_archive(work / "archive")),
        "fallback_doctor_summary_command": TOOL,
    }
    run = run_playbook(inventory, work, extra)
    print(f"playbook for {len(hosts)} hosts: {run.seconds:.1f} s")
    return {"run": run, "dir": fleet_dir, "host_tmp": host_tmp, "hosts": hosts}


def bareun_layout_config() -> dict[str, Any]:
    import bareun_layout

    return dict(bareun_layout.SAMPLE_CONFIG)


def _summary(fleet: dict[str, Any]) -> dict[str, Any]:
    path = fleet["dir"] / "fleet-summary.json"
    assert path.is_file(), fleet["run"].output[-5000:]
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_play_succeeds_although_hosts_are_unreachable_or_fail(fleet: dict[str, Any]) -> None:
    run = fleet["run"]
    assert run.returncode == 0, run.output[-6000:]
    recap = {line.split(":")[0].strip(): line for line in run.output.splitlines() if " ok=" in line}
    assert "ignored=1" in recap["unreachable"] and "ok=3" in recap["unreachable"]  # it was tried
    assert all("failed=0" in line for line in recap.values()), recap


def test_every_host_has_a_status_and_the_diagnosed_ones_a_verified_bundle(fleet: dict[str, Any]) -> None:
    folder: Path = fleet["dir"]
    states = {
        name: json.loads((folder / f"{name}.status.json").read_text())["state"] for name in fleet["hosts"]
    }
    assert states == {
        "cuda13-not-on-path": "diagnosed",
        "cuda12-full": "diagnosed",
        "bareun-cpu-lib": "diagnosed",
        "bareun-cpu-config": "diagnosed",
        "broken-target": "tool_failed",
        "unreachable": "unreachable",
    }
    for name, state in states.items():
        bundle = folder / f"{name}.zip"
        assert bundle.is_file() == (state == "diagnosed")
        if state == "diagnosed":
            opened = open_bundle(bundle)
            assert not opened.integrity_problems
            assert zipfile.ZipFile(bundle).testzip() is None
    commands = {
        name: json.loads((folder / f"{name}.status.json").read_text()).get("command", "") for name in states
    }
    assert commands["bareun-cpu-lib"].startswith(INSTALLED + " diagnose --json --bundle ")
    assert commands["cuda12-full"].startswith(" ".join(TOOL) + " diagnose ")
    copied = str(fleet["host_tmp"] / "fallback-doctor-")  # the archive, unpacked in the private folder
    assert (
        commands["cuda13-not-on-path"].startswith(copied)
        and "--library" not in commands["cuda13-not-on-path"]
    )
    failed = json.loads((folder / "broken-target.status.json").read_text())
    assert failed["rc"] == 2 and "no-such-bareun" in failed["message"]
    # installs nothing, leaves nothing: every host's temporary folder is gone
    assert list(fleet["host_tmp"].iterdir()) == []


def test_the_bundles_are_of_the_hosts_own_stacks(fleet: dict[str, Any]) -> None:
    folder: Path = fleet["dir"]
    cuda12 = open_bundle(folder / "cuda12-full.zip").document
    assert (
        cuda12["environment"]["python"]["executable"]
        == fleet["hosts"]["cuda12-full"]["fallback_doctor_python"]
    )
    assert cuda12["environment"]["environment"]["LD_LIBRARY_PATH"].endswith("nvidia/cudnn/lib")
    bareun = open_bundle(folder / "bareun-cpu-config.zip").document
    assert bareun["verdict"] == "cpu_by_configuration"
    assert open_bundle(folder / "bareun-cpu-lib.zip").document["target"]["kind"] == "bareun"


def test_the_summary_groups_hosts_by_first_cause_and_reports_the_others(fleet: dict[str, Any]) -> None:
    summary = _summary(fleet)
    assert summary["hosts_total"] == 6
    assert len(summary["hosts_without_gpu"]) == 4  # no NVIDIA GPU on this machine: rows, not failures
    by_verdict = summary["by_verdict"]
    assert by_verdict["unreachable"] == ["unreachable"]
    assert by_verdict["tool_failed"] == ["broken-target"]
    assert by_verdict["cpu_by_configuration"] == ["bareun-cpu-config"]
    assert sorted(by_verdict["gpu_unusable"]) == ["bareun-cpu-lib", "cuda12-full", "cuda13-not-on-path"]
    groups = {group["finding"]: group for group in summary["by_first_cause"]}
    driver = next(group for group in groups.values() if group["cause"] == "driver_missing")
    assert sorted(driver["hosts"]) == ["cuda12-full", "cuda13-not-on-path"]
    assert summary["by_first_cause"][0] is not None and summary["by_first_cause"][0]["count"] == 2
    # A CPU-only ONNX Runtime in libPath is the configuration that decides CPU or GPU: core ranks it
    # first, above the missing driver (issue 26), and the fleet groups by core's first cause.
    assert groups["target.libpath_cpu_only"]["hosts"] == ["bareun-cpu-lib"]
    assert groups["config.cpu_by_configuration"]["hosts"] == ["bareun-cpu-config"]
    combos = {combo["label"]: combo for combo in summary["stack_combinations"]}
    cuda12 = next(label for label, combo in combos.items() if combo["hosts"] == ["cuda12-full"])
    assert cuda12.startswith("onnxruntime-gpu 1.23.2 (CUDA 12.2 build) · CUDA 12.9 · cuDNN 9.13.0")
    assert combos[cuda12]["status"] == "broken"
    assert "cuDNN: none" in next(label for label, c in combos.items() if c["hosts"] == ["cuda13-not-on-path"])
    unreachable = next(host for host in summary["hosts"] if host["host"] == "unreachable")
    assert unreachable["state"] == "unreachable" and unreachable["message"]


def test_the_summary_page_is_self_contained_and_names_the_wizard_command(fleet: dict[str, Any]) -> None:
    page = (fleet["dir"] / "fleet-summary.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page
    assert "<script" not in page and "http://" not in page.replace("http-equiv", "")
    bundle = (fleet["dir"] / "cuda12-full.zip").resolve()
    assert f"fallback-doctor gui --bundle {bundle}" in page
    text = (fleet["dir"] / "fleet-summary.txt").read_text(encoding="utf-8")
    assert "2 hosts: No NVIDIA driver" in text and "1 host: The configuration asks for the CPU" in text
    assert "1 host: libPath holds a CPU-only ONNX Runtime" in text
