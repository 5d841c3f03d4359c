"""Sample sources: NVML (real pynvml: no driver here; a compiled fake libnvidia-ml; a stand-in
module fed from a real recording), psutil on real processes, and replay of real recordings.

No GPU and no NVIDIA driver exist on this machine: the GPU values in these tests come from
recordings published by others (tests/data/gpu_series), not from anything measured here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fallback_doctor.core.readers.sampling.recordings import Recording, load_recording
from fallback_doctor.core.readers.sampling.sample import GpuSample
from fallback_doctor.core.readers.sampling.sources import (
    CpuSource,
    NvmlSource,
    PsutilCpuSource,
    ReplaySource,
    SampleSource,
    pid_namespace_nested,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "gpu_series"
FAKES = Path(__file__).resolve().parents[2] / "fakes"
sys.path.insert(0, str(FAKES))

import fakebuild  # noqa: E402


def real_recording(name: str, **options: Any) -> Recording:
    (path,) = DATA.glob(f"{name}-*.txt")
    return load_recording(path, **options)


# --- NVML ------------------------------------------------------------------------------------


def test_without_a_driver_nvml_says_why_and_reads_nothing() -> None:
    """This machine has no NVIDIA driver: the real pynvml fails to load libnvidia-ml."""
    source = NvmlSource()
    status = source.open()
    assert not status.available
    assert status.code == "library_not_found"
    assert status.sentence().startswith("NVML: the NVIDIA driver's library")
    assert "is not installed" in status.sentence()
    assert source.read(1.0, os.getpid()) == ()
    source.close()
    assert isinstance(source, SampleSource)


@pytest.fixture(scope="module")
def fake_nvml_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not fakebuild.gcc_available():
        pytest.skip("gcc is needed to build the fake libnvidia-ml")
    base = tmp_path_factory.mktemp("sampling-nvml")
    for key, init in (("works", 0), ("mismatch", 18)):
        fakebuild.compile_library(
            "fake_libnvidia_ml.c",
            base / key,
            "libnvidia-ml.so.580.65.06",
            {"FAKE_NVML_INIT_RESULT": init},
            links=("libnvidia-ml.so.1",),
        )
    return base


CHILD = textwrap.dedent(
    """
    import json, os
    from fallback_doctor.core.readers.sampling.sources import NvmlSource
    source = NvmlSource()
    opened = source.open()
    samples = source.read(123.0, os.getpid())
    print(json.dumps({"open": opened.to_dict(), "after": source.status().to_dict(),
                      "samples": [s.to_dict() for s in samples]}))
    source.close()
    """
)


def run_child(library_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "NVIDIA_"))}
    env["LD_LIBRARY_PATH"] = str(library_dir)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_driver_library_mismatch_is_a_status_through_the_real_pynvml(fake_nvml_dir: Path) -> None:
    result = run_child(fake_nvml_dir / "mismatch")
    assert result["open"]["state"] == "unavailable"
    assert result["open"]["code"] == "lib_rm_version_mismatch"
    assert result["samples"] == []


def test_queries_an_old_driver_lacks_read_none_with_a_note(fake_nvml_dir: Path) -> None:
    """The fake exports memory info but not utilization, temperature, clocks, power, processes."""
    result = run_child(fake_nvml_dir / "works")
    assert result["open"]["state"] == "ok"
    (sample,) = result["samples"]
    assert sample["memory_total_mib"] == 24576.0
    assert sample["utilization_percent"] is None and sample["temperature_c"] is None
    assert sample["sm_clock_mhz"] is None and sample["power_w"] is None
    assert sample["process_memory_mib"] is None
    notes = " ".join(result["after"]["notes"])
    assert "utilization:" in notes and "older than this NVML call" in notes
    assert result["after"]["state"] == "ok"


class FakeNvml:
    """A pynvml stand-in at the lowest level (no driver here), replaying a real recording.

    Each nvmlDeviceGetUtilizationRates call moves to the recording's next sample.
    """

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(f"NVML error {value}")
            self.value = value

    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_SM = 1

    def __init__(self, samples: tuple[GpuSample, ...], processes: list[tuple[int, int | None]]) -> None:
        self.samples = samples
        self.position = -1
        self.processes = processes
        self.initialised = 0
        self.lost = False

    def current(self) -> GpuSample:
        return self.samples[max(self.position, 0) % len(self.samples)]

    def nvmlInit(self) -> None:  # noqa: N802
        self.initialised += 1

    def nvmlShutdown(self) -> None:  # noqa: N802
        self.initialised -= 1

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802
        return f"gpu{index}"

    def nvmlDeviceGetUtilizationRates(self, handle: str) -> Any:  # noqa: N802
        if self.lost:
            raise self.NVMLError(15)
        self.position += 1
        sample = self.current()
        return SimpleNamespace(gpu=sample.utilization_percent, memory=sample.memory_activity_percent)

    def nvmlDeviceGetMemoryInfo(self, handle: str) -> Any:  # noqa: N802
        sample = self.current()
        mib = 1024 * 1024
        return SimpleNamespace(
            used=int(sample.memory_used_mib or 0) * mib, total=int(sample.memory_total_mib or 0) * mib
        )

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> float:  # noqa: N802
        value = self.current().temperature_c
        if value is None:
            raise self.NVMLError(3)
        return value

    def nvmlDeviceGetClockInfo(self, handle: str, clock: int) -> int:  # noqa: N802
        raise self.NVMLError(3)  # the recording has no SM clock column

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802
        raise self.NVMLError(3)

    def nvmlDeviceGetComputeRunningProcesses(self, handle: str) -> list[Any]:  # noqa: N802
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self.processes]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: str) -> list[Any]:  # noqa: N802
        return []


def test_nvml_readings_from_a_replayed_v100s_recording(tmp_path: Path) -> None:
    """NVML's values here are recording 06 (a Tesla V100S, published by others), not measured here."""
    recorded = real_recording("06")
    mib = 1024 * 1024
    nvml = FakeNvml(recorded.samples, [(4242, 1100 * mib), (77, 50 * mib)])
    source = NvmlSource(nvml=nvml, proc_root=str(tmp_path))
    assert source.open().available
    readings = [source.read(float(n), 4242)[0] for n in range(len(recorded.samples))]
    assert [r.utilization_percent for r in readings] == [s.utilization_percent for s in recorded.samples]
    assert [r.memory_used_mib for r in readings] == [s.memory_used_mib for s in recorded.samples]
    assert readings[0].temperature_c == 27.0
    assert readings[0].process_memory_mib == 1100.0 and readings[0].other_processes_memory_mib == 50.0
    assert readings[0].sm_clock_mhz is None and readings[0].power_w is None
    assert "sm clock: not supported on this GPU" in source.status().notes
    # Another PID that NVML does not list holds nothing on this GPU.
    assert source.read(99.0, 5555)[0].process_memory_mib == 0.0
    source.close()
    assert nvml.initialised == 0


def test_a_lost_gpu_ends_the_nvml_source_with_its_meaning(tmp_path: Path) -> None:
    nvml = FakeNvml(real_recording("09").samples, [])
    source = NvmlSource(nvml=nvml, proc_root=str(tmp_path))
    source.open()
    nvml.lost = True
    source.read(1.0, None)
    assert source.status().state == "error" and source.status().code == "gpu_lost"
    assert source.read(2.0, None) == ()


def test_inside_a_pid_namespace_the_probe_memory_is_unknown_not_zero(tmp_path: Path) -> None:
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "status").write_text("Name:\tpython\nNSpid:\t81234\t17\n")
    assert pid_namespace_nested(str(tmp_path))
    nvml = FakeNvml(real_recording("09").samples, [(81234, 1024 * 1024 * 900)])
    source = NvmlSource(nvml=nvml, proc_root=str(tmp_path))
    source.open()
    (sample,) = source.read(1.0, 17)
    assert sample.process_memory_mib is None and sample.memory_used_mib == 30994.0
    assert any("PID namespace" in note for note in source.status().notes)


def test_asking_for_a_gpu_that_does_not_exist(tmp_path: Path) -> None:
    source = NvmlSource([3], nvml=FakeNvml(real_recording("09").samples, []), proc_root=str(tmp_path))
    status = source.open()
    assert status.code == "gpu_not_found" and "index 3 does not exist" in " ".join(status.notes)


# --- psutil ----------------------------------------------------------------------------------


@pytest.fixture
def busy_child() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield child
    child.kill()
    child.wait()


def test_psutil_primes_on_a_new_pid_then_measures(busy_child: subprocess.Popen[bytes]) -> None:
    source = PsutilCpuSource()
    assert isinstance(source, CpuSource)
    assert source.open().available
    assert source.read(0.0, None) is None
    assert source.read(0.0, busy_child.pid) is None  # priming: psutil's first value is not a measurement
    import psutil

    psutil.Process(busy_child.pid).cpu_times()  # let some CPU time pass without sleeping on a timer
    while psutil.Process(busy_child.pid).cpu_times().user < 0.05:
        pass
    value = source.read(1.0, busy_child.pid)
    assert value is not None and value > 0
    busy_child.kill()
    busy_child.wait()
    assert source.read(2.0, busy_child.pid) is None
    assert source.status().code == "process_gone"
    assert f"the probe process {busy_child.pid} has exited" in source.status().sentence()


def test_psutil_counts_children_when_asked(busy_child: subprocess.Popen[bytes]) -> None:
    source = PsutilCpuSource(include_children=True)
    source.open()
    assert source.read(0.0, os.getpid()) is None
    value = source.read(1.0, os.getpid())
    assert value is not None and value >= 0


# --- replay ----------------------------------------------------------------------------------


def test_replay_one_tick_per_read_then_finished() -> None:
    recorded = real_recording("10")
    source = ReplaySource(recorded, speed=None)
    status = source.open()
    assert status.available and "not measured here" in status.sentence()
    assert recorded.info.source is not None and recorded.info.source in status.sentence()
    read = [source.read(float(n), 7)[0] for n in range(10)]
    assert [s.utilization_percent for s in read] == [s.utilization_percent for s in recorded.samples]
    assert all(s.pid == 7 for s in read) and [s.timestamp for s in read] == [float(n) for n in range(10)]
    assert source.read(10.0, 7) == ()
    assert source.status().state == "finished" and "all 10 recorded ticks" in source.status().sentence()


def test_replay_at_its_recorded_pace_holds_each_tick_on_a_fake_clock() -> None:
    recorded = real_recording("10")  # about 5.003 s apart
    source = ReplaySource(recorded, speed=1.0)
    source.open()
    utilization = [source.read(100.0 + t, None)[0].utilization_percent for t in (0.0, 4.9, 5.1, 9.9, 10.1)]
    assert utilization == [98.0, 98.0, 0.0, 0.0, 48.0]
    assert source.read(100.0 + 45.1, None)[0].utilization_percent == 11.0  # the last tick, held one interval
    assert source.read(100.0 + 50.1, None) == ()


def test_replay_faster_and_looping_multi_gpu() -> None:
    recorded = real_recording("05")
    source = ReplaySource(recorded, speed=100.0, loop=True, restamp=False)
    source.open()
    first = source.read(0.0, None)
    assert [s.gpu_index for s in first] == [0, 1, 2, 3]
    assert first[0].timestamp == recorded.samples[0].timestamp  # restamp=False keeps the recorded time
    later = source.read(0.5, None)  # 50 recorded seconds later
    assert later[0].timestamp - first[0].timestamp == pytest.approx(50.0, abs=1.1)
    assert source.read(5.0, None)  # looped, still going
    assert source.status().available


def test_replay_of_samples_made_here_says_so() -> None:
    samples = (GpuSample(1.0, 0, 5.0), GpuSample(2.0, 0, 6.0))
    assert ReplaySource(samples, recorded_here=True).open().sentence() == "replay: recorded on this machine"
    assert ReplaySource(()).open().state == "finished"
