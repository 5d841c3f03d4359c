"""One rule for CUDA_VISIBLE_DEVICES (issue 24): the shell's value (checks/device.py) and the
running server's own (checks/process.py) are judged alike, by checks/visible_devices.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks.device import cuda_visible_devices_hides_all
from fallback_doctor.core.judgement.checks.process import check_gpu_hidden
from fallback_doctor.core.model.facts.driver import DriverFacts, GpuInfo
from fallback_doctor.core.model.facts.process import ProcessFacts
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.device import collect_device

ONE_GPU = DriverFacts("ok", None, "580.65.06", 13000, (GpuInfo(0, "A10", (8, 6), 24576, "GPU-1"),), None)


@pytest.mark.parametrize(
    ("value", "hidden"),
    [("-1", True), ("", True), ("2", True), ("-2", True), ("none", True), ("GPU-9", True),
     ("0", False), ("GPU-1", False), ("0,2", False), ("MIG-1", False)],
)  # fmt: skip
def test_the_shell_and_the_server_are_judged_alike(value: str, hidden: bool, tmp_path: Path) -> None:
    device = collect_device({"CUDA_VISIBLE_DEVICES": value}, root=str(tmp_path))
    server = ProcessFacts(pid=4242, executable="/opt/app/bin/server", mapped_libraries=(),
                          environment={"CUDA_VISIBLE_DEVICES": value})  # fmt: skip
    shell = list(cuda_visible_devices_hides_all(EnvironmentSnapshot(driver=ONE_GPU, device=device)))
    own = list(check_gpu_hidden(EnvironmentSnapshot(driver=ONE_GPU, process=server)))
    assert bool(shell) is hidden
    assert bool(own) is hidden
