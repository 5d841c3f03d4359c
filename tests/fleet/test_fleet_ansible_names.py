"""The playbook with host names that clash or are too long for a file name (issue 28), for real:
ansible-core runs packaging/ansible/fleet.yml against hosts that are this machine, each
diagnosing a small log (``--quick --target log``, a second per host).

Before: ``dup a`` and ``dup_a`` wrote the same files (one row); a name of 250 characters made the
status file's name too long, the play failed (2) and the bundle stayed in the host's temporary
folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.fleet.hosts import file_stem
from fleet_hosts import TOOL, run_playbook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

pytest.importorskip("ansible", reason="ansible-core is in the test extras")

LOG = (
    "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:1295 CreateExecutionProviderFactoryInstance] "
    "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.\n"
)
LONG = "h" * 250
HOSTS = ("dup a", "dup_a", LONG)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("names")
    host_tmp = work / "host-tmp"
    host_tmp.mkdir()
    log = work / "app.log"
    log.write_text(LOG, encoding="utf-8")
    inventory = {
        "all": {
            "hosts": {name: {} for name in HOSTS},
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": __import__("sys").executable,
                "fallback_doctor_command": TOOL,
                "fallback_doctor_quick": True,
                "fallback_doctor_target": "log",
                "fallback_doctor_logs": [str(log)],
                "fallback_doctor_tmp_root": str(host_tmp),
            },
        }
    }
    fleet_dir = work / "fleet"
    extra = {"fallback_doctor_fleet_dir": str(fleet_dir), "fallback_doctor_summary_command": TOOL}
    run = run_playbook(inventory, work, extra)
    return {"run": run, "dir": fleet_dir, "host_tmp": host_tmp}


def test_the_play_succeeds_and_leaves_nothing_on_the_hosts(fleet: dict[str, Any]) -> None:
    run = fleet["run"]
    assert run.returncode == 0, run.output[-6000:]
    assert list(fleet["host_tmp"].iterdir()) == []


def test_every_host_is_its_own_row_confirmed_by_its_bundle(fleet: dict[str, Any]) -> None:
    folder: Path = fleet["dir"]
    for name in HOSTS:
        stem = file_stem(name)
        assert len(f"{stem}.status.json".encode()) <= 255
        status = json.loads((folder / f"{stem}.status.json").read_text(encoding="utf-8"))
        assert status["host"] == name and status["state"] == "diagnosed", status
        assert (folder / f"{stem}.zip").is_file()
    summary = json.loads((folder / "fleet-summary.json").read_text(encoding="utf-8"))
    rows = {row["host"]: row for row in summary["hosts"]}
    assert sorted(rows) == sorted(HOSTS) and summary["hosts_total"] == 3
    for row in rows.values():
        assert row["state"] == "diagnosed" and row["identity"] == "confirmed", row
