"""The parsers of /proc, systemd and docker output: real formats, and no input makes them raise."""

from __future__ import annotations

import json
from pathlib import Path

from fallback_doctor.core.model.facts.process import ContainerInfo, ProcessFacts, ServiceUnit
from fallback_doctor.core.readers.collect.docker_inspect import parse_docker_inspect
from fallback_doctor.core.readers.collect.find_process import config_port
from fallback_doctor.core.readers.collect.proc_files import parse_cgroup, parse_environ
from fallback_doctor.core.readers.collect.proc_maps import classify_mapped, parse_maps
from fallback_doctor.core.readers.collect.systemd import (
    parse_env_file,
    parse_systemctl_show,
    parse_unit_file,
    read_unit,
)
from hypothesis import given, settings
from hypothesis import strategies as st

MAPS = """\
7f1c2a000000-7f1c2a200000 r--p 00000000 08:01 1234  /opt/bareun/lib/libonnxruntime.so.1.23.0
7f1c2a200000-7f1c2a400000 r-xp 00200000 08:01 1234  /opt/bareun/lib/libonnxruntime.so.1.23.0
7f1c2b000000-7f1c2b100000 r--p 00000000 08:01 99 /usr/local/cuda-12.4/lib64/libcudart.so.12.4.127
7f1c2c000000-7f1c2c100000 r--p 00000000 08:01 98 /usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0 (deleted)
7f1c2d000000-7f1c2d100000 r--p 00000000 08:01 97 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14
7f1c2e000000-7f1c2e100000 r--p 00000000 08:01 96 /usr/lib/x86_64-linux-gnu/libcufft.so.11.2.1.3
7f1c2f000000-7f1c2f100000 r--p 00000000 08:01 95 /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd0000000-7ffd0021000 rw-p 00000000 00:00 0                          [stack]
"""


def test_maps_names_the_gpu_stack_and_onnxruntime() -> None:
    mapped = {lib.name: lib for lib in parse_maps(MAPS)}
    assert set(mapped) == {
        "libonnxruntime.so.1.23.0",
        "libcudart.so.12.4.127",
        "libcudnn.so.9.1.0",
        "libcuda.so.550.54.14",
        "libcufft.so.11.2.1.3",
    }
    assert mapped["libonnxruntime.so.1.23.0"].family == "ort_core"
    assert mapped["libcudart.so.12.4.127"].cuda_major == 12
    assert mapped["libcudnn.so.9.1.0"].deleted and mapped["libcudnn.so.9.1.0"].major == 9
    assert mapped["libcuda.so.550.54.14"].family == "driver"
    assert mapped["libcufft.so.11.2.1.3"].cuda_major == 12  # cuFFT 11 ships with CUDA 12
    provider = classify_mapped("/x/libonnxruntime_providers_cuda.so")
    assert provider is not None and provider.family == "ort_provider_cuda"


def test_cgroup_names_the_unit_and_the_container() -> None:
    assert parse_cgroup("0::/system.slice/bareun.service\n") == ("bareun.service", None)
    cid = "a" * 64
    assert parse_cgroup(f"0::/system.slice/docker-{cid}.scope\n") == (None, ("docker", cid))
    assert parse_cgroup(f"12:memory:/docker/{cid}\n")[1] == ("docker", cid)
    assert parse_cgroup(f"0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-{cid}.scope")[1] == (
        "kubepods",
        cid,
    )
    assert parse_cgroup("0::/user.slice/user-0.slice/session-3.scope\n") == (None, None)


def test_environ_and_env_files() -> None:
    assert parse_environ(b"A=1\0LD_LIBRARY_PATH=/x:/y\0BAD\0=v\0E=\xff\0") == {
        "A": "1",
        "LD_LIBRARY_PATH": "/x:/y",
        "E": "\ufffd",
    }
    assert parse_env_file('# c\nexport CUDA_VISIBLE_DEVICES="0"\nLD_LIBRARY_PATH=/opt/lib\nnot a line\n') == {
        "CUDA_VISIBLE_DEVICES": "0",
        "LD_LIBRARY_PATH": "/opt/lib",
    }


def test_unit_files_and_systemctl_show() -> None:
    text = (
        "[Unit]\nEnvironment=NOT=this\n[Service]\n"
        'Environment="LD_LIBRARY_PATH=/opt/bareun/lib:/usr/local/cuda/lib64" CUDA_VISIBLE_DEVICES=0\n'
        "Environment=ORT_A=1 \\\n  ORT_B=2\nEnvironmentFile=-/etc/default/bareun\n"
    )
    env, files = parse_unit_file(text)
    assert env == {
        "LD_LIBRARY_PATH": "/opt/bareun/lib:/usr/local/cuda/lib64",
        "CUDA_VISIBLE_DEVICES": "0",
        "ORT_A": "1",
        "ORT_B": "2",
    }
    assert files == ("-/etc/default/bareun",)
    shown = (
        'Environment=LD_LIBRARY_PATH=/opt/bareun/lib "X=a b"\n'
        "EnvironmentFiles=/etc/default/bareun (ignore_errors=yes)\n"
        "FragmentPath=/etc/systemd/system/bareun.service\n"
    )
    assert parse_systemctl_show(shown) == (
        {"LD_LIBRARY_PATH": "/opt/bareun/lib", "X": "a b"},
        ("-/etc/default/bareun",),
        "/etc/systemd/system/bareun.service",
    )


def test_unit_read_from_a_real_tree_with_drop_in_and_environment_file(tmp_path: Path) -> None:
    system = tmp_path / "etc" / "systemd" / "system"
    (system / "bareun.service.d").mkdir(parents=True)
    (system / "bareun.service").write_text(
        "[Service]\nExecStart=/opt/bareun/bin/bareun\nEnvironment=LD_LIBRARY_PATH=/opt/bareun/lib\n"
        "EnvironmentFile=/etc/default/bareun\n"
    )
    (system / "bareun.service.d" / "gpu.conf").write_text("[Service]\nEnvironment=CUDA_VISIBLE_DEVICES=-1\n")
    (tmp_path / "etc" / "default").mkdir(parents=True)
    (tmp_path / "etc" / "default" / "bareun").write_text("NVIDIA_VISIBLE_DEVICES=all\nSECRET=x\n")
    limits: list[object] = []
    unit = read_unit("bareun.service", "sudo …", limits, root=str(tmp_path))  # type: ignore[arg-type]
    assert unit.source == "unit file" and unit.fragment_path == str(system / "bareun.service")
    assert unit.environment == {
        "LD_LIBRARY_PATH": "/opt/bareun/lib",
        "CUDA_VISIBLE_DEVICES": "-1",
        "NVIDIA_VISIBLE_DEVICES": "all",
    }
    # Without /proc/PID/environ, the unit is the best account of the server's environment.
    facts = ProcessFacts(1, None, (), None, unit=unit)
    assert facts.effective_environment() == unit.environment


def test_docker_inspect() -> None:
    document = [
        {
            "Config": {"Env": ["PATH=/usr/bin", "LD_LIBRARY_PATH=/bareun/lib", "API_KEY=koba-x"]},
            "HostConfig": {"Runtime": "runc", "DeviceRequests": None},
        }
    ]
    env, runtime, gpu = parse_docker_inspect(json.dumps(document))
    assert env == {"LD_LIBRARY_PATH": "/bareun/lib", "PATH": "/usr/bin"} and runtime == "runc"
    assert gpu is False
    document[0]["HostConfig"]["DeviceRequests"] = [{"Driver": "", "Count": -1, "Capabilities": [["gpu"]]}]
    assert parse_docker_inspect(json.dumps(document))[2] is True
    container = ContainerInfo("docker", "a" * 64, {"CUDA_VISIBLE_DEVICES": "0"}, inspected=True)
    assert ProcessFacts(1, None, (), None, container=container).effective_environment() == {
        "CUDA_VISIBLE_DEVICES": "0"
    }
    empty_unit = ServiceUnit("u", None, {}, (), "x")
    assert ProcessFacts(1, None, (), None, unit=empty_unit).effective_environment() is None


def test_config_port(tmp_path: Path) -> None:
    config = tmp_path / "bareun.json"
    for data, port in (
        ({"address": {"port": 5656}}, 5656),
        ({"port": "5757"}, 5757),
        ({"port": True}, None),
        ([], None),
    ):
        config.write_text(json.dumps(data))
        assert config_port(str(config)) == port
    config.write_text("{ not json")
    assert config_port(str(config)) is None
    assert config_port(str(tmp_path / "missing.json")) is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_text_parsers_never_raise(text: str) -> None:
    parse_maps(text)
    parse_cgroup(text)
    parse_unit_file(text)
    parse_systemctl_show(text)
    parse_env_file(text)
    try:
        parse_docker_inspect(text)
    except ValueError:
        pass  # not JSON: the collector says so


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_environ_parser_never_raises(data: bytes) -> None:
    parse_environ(data)
