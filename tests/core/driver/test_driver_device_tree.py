"""The device collector on fake file-system trees, and the device-visibility checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks.device import (
    container_without_gpu,
    cuda_visible_devices_hides_all,
    nvidia_visible_devices_none,
)
from fallback_doctor.core.judgement.checks.visible_devices import hides_all_gpus
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.facts.driver import DriverFacts, GpuInfo
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.device import collect_device
from hypothesis import given
from hypothesis import strategies as st

HOST_MOUNTINFO = (
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
    "640 22 0:55 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay "
    "rw,lowerdir=/var/lib/docker/overlay2/l/X,upperdir=/var/lib/docker/overlay2/abc/diff\n"
    "700 22 0:60 / /var/lib/docker/containers/abc/mounts/shm rw - tmpfs shm rw\n"
)
DOCKER_MOUNTINFO = (
    "584 481 0:51 / / rw,relatime master:231 - overlay overlay "
    "rw,lowerdir=/var/lib/docker/overlay2/l/A:/var/lib/docker/overlay2/l/B\n"
    "600 584 259:2 /var/lib/docker/containers/abc/hostname /etc/hostname rw - ext4 /dev/nvme0n1p2 rw\n"
)


def tree(root: Path, files: dict[str, str]) -> str:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return str(root)


def test_bare_host_is_no_container(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "proc/self/mountinfo": HOST_MOUNTINFO,
            "proc/1/cgroup": "0::/init.scope\n",
            "proc/version": "Linux version 6.8.0-45-generic (buildd@lcy02) #45-Ubuntu SMP",
            "dev/nvidia0": "",
            "dev/nvidiactl": "",
            "dev/nvidia-uvm": "",
            "dev/null": "",
            "sys/bus/pci/devices/0000:17:00.0/vendor": "0x10de\n",
            "sys/bus/pci/devices/0000:17:00.0/class": "0x030200\n",
            "sys/bus/pci/devices/0000:17:00.1/vendor": "0x10de\n",
            "sys/bus/pci/devices/0000:17:00.1/class": "0x040300\n",
        },
    )
    facts = collect_device({"CUDA_VISIBLE_DEVICES": "0"}, root=root)
    assert facts.container is None and facts.container_evidence == ()
    assert facts.device_nodes == ("/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl")
    assert facts.cuda_visible_devices == "0"
    assert not facts.wsl
    assert facts.pci_nvidia_devices == ("0000:17:00.0",)  # the GPU, not its audio function


@pytest.mark.parametrize(
    ("files", "env", "expected"),
    [
        ({".dockerenv": ""}, {}, "docker"),
        ({"run/.containerenv": 'engine="podman-4.9"\n'}, {}, "podman"),
        ({".dockerenv": ""}, {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, "kubernetes"),
        (
            {"proc/1/cgroup": "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-1.scope\n"},
            {},
            "kubernetes",
        ),
        ({"proc/1/cgroup": "12:devices:/docker/0123456789abcdef\n"}, {}, "docker"),
        ({"proc/self/mountinfo": DOCKER_MOUNTINFO}, {}, "docker"),
        ({"run/systemd/container": "lxc\n"}, {}, "lxc"),
    ],
)
def test_container_markers(tmp_path: Path, files: dict[str, str], env: dict[str, str], expected: str) -> None:
    facts = collect_device(env, root=tree(tmp_path, files))
    assert facts.container == expected
    assert facts.container_evidence


def test_container_without_device_nodes_is_a_finding(tmp_path: Path) -> None:
    root = tree(tmp_path, {".dockerenv": "", "dev/null": ""})
    device = collect_device({"NVIDIA_VISIBLE_DEVICES": "all"}, root=root)
    findings = list(container_without_gpu(EnvironmentSnapshot(device=device)))
    assert [f.id for f in findings] == ["device.container_without_gpu"]
    assert findings[0].cause == "container_no_device"
    assert "docker run --rm --gpus all <image> nvidia-smi" in findings[0].remediation.commands  # type: ignore[union-attr]
    assert "docker" in words_of(findings[0], "ko")["title"]


def test_container_with_device_nodes_or_dxg_is_fine(tmp_path: Path) -> None:
    with_nodes = collect_device({}, root=tree(tmp_path / "a", {".dockerenv": "", "dev/nvidia0": ""}))
    with_dxg = collect_device({}, root=tree(tmp_path / "b", {".dockerenv": "", "dev/dxg": ""}))
    for device in (with_nodes, with_dxg):
        assert list(container_without_gpu(EnvironmentSnapshot(device=device))) == []


def test_wsl_tree(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "proc/version": "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1)",
            "usr/lib/wsl/lib/libcuda.so.1": "",
            "dev/dxg": "",
        },
    )
    facts = collect_device({}, root=root)
    assert facts.wsl and facts.dxg_present and facts.wsl_libcuda
    assert facts.wsl_lib_dir == "/usr/lib/wsl/lib"
    assert facts.device_nodes == ()


def test_nvidia_visible_devices_void_in_container(tmp_path: Path) -> None:
    device = collect_device({"NVIDIA_VISIBLE_DEVICES": "void"}, root=tree(tmp_path, {".dockerenv": ""}))
    assert [f.id for f in nvidia_visible_devices_none(EnvironmentSnapshot(device=device))] == [
        "device.nvidia_visible_devices_none"
    ]
    host = collect_device({"NVIDIA_VISIBLE_DEVICES": "void"}, root=str(tmp_path / "host"))
    assert list(nvidia_visible_devices_none(EnvironmentSnapshot(device=host))) == []


@pytest.mark.parametrize(
    ("value", "hidden"),
    [
        ("", True),
        ("-1", True),
        ("NoDevFiles", True),
        ("0", False),
        ("1", True),
        ("0,1", False),
        ("3,0", True),
        ("GPU-00000000", False),
        ("GPU-deadbeef", True),
        ("MIG-1234", False),
    ],
)
def test_cuda_visible_devices_values(value: str, hidden: bool) -> None:
    assert hides_all_gpus(value, 1, ("GPU-00000000-1111-2222-3333-444444444444",)) is hidden


def test_cuda_visible_devices_finding_uses_nvml_count(tmp_path: Path) -> None:
    driver = DriverFacts("ok", None, "580.65.06", 13000, (GpuInfo(0, "A10", (8, 6), 24576, "GPU-1"),), None)
    device = collect_device({"CUDA_VISIBLE_DEVICES": "2"}, root=str(tmp_path))
    findings = list(cuda_visible_devices_hides_all(EnvironmentSnapshot(driver=driver, device=device)))
    assert [f.id for f in findings] == ["device.cuda_visible_devices_hides_all"]
    assert "CUDA_VISIBLE_DEVICES=2" in findings[0].title


@given(st.text(alphabet="0123456789-,GPUMI abcdef", max_size=20), st.integers(0, 8))
def test_hides_all_is_total(value: str, count: int) -> None:
    assert hides_all_gpus(value, count, ()) in (True, False)
