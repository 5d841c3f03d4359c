"""The test inference with its sampler: live phases, the probe's PID followed, the series in the result.

Real probe runs here (the bundled encoder, small dims, this interpreter's ONNX Runtime). No NVIDIA
driver here: the GPU side of the series must say why it has no readings, never zeros. The GPU's
prior occupants are read through a stand-in pynvml module (the lowest level: NVML itself cannot
run here); a GPU reading path is not exercised on a GPU here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.inference.findings import inference_findings
from fallback_doctor.core.readers.inference.python_probe import run_python_probe
from fallback_doctor.core.readers.inference.result import GpuOccupancy, GpuProcess, ProbeResult, StrategyName
from fallback_doctor.core.readers.inference.run import plan_inference
from fallback_doctor.core.readers.inference.sampled import gpu_occupancy, run_sampled_inference
from fallback_doctor.core.readers.sampling.sampler import SamplingSeries
from fallback_doctor.core.readers.sampling.sources import NvmlSource

SMALL = {"batch": 2, "seq": 16}
MIB = 1024 * 1024


def _target() -> TargetFacts:
    return TargetFacts(
        kind="python", root=None, config_path=None, log_paths=(), lib_path=None, requested_provider=None
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    return env


class StandInNvml:
    """A pynvml stand-in with one GPU, a memory reading and a process list (no NVML runs here)."""

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(f"NVML error {value}")
            self.value = value

    def __init__(self, processes: list[tuple[int, int | None]]) -> None:
        self.processes = processes

    def nvmlInit(self) -> None:  # noqa: N802
        pass

    def nvmlShutdown(self) -> None:  # noqa: N802
        pass

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802
        return f"gpu{index}"

    def nvmlDeviceGetMemoryInfo(self, handle: str) -> Any:  # noqa: N802
        return SimpleNamespace(used=5000 * MIB, total=16384 * MIB)

    def nvmlDeviceGetUtilizationRates(self, handle: str) -> Any:  # noqa: N802
        raise self.NVMLError(3)  # NVML_ERROR_NOT_SUPPORTED: read as None with a note

    nvmlDeviceGetTemperature = nvmlDeviceGetClockInfo = nvmlDeviceGetPowerUsage = (  # noqa: N815
        lambda self, handle, *args: self.nvmlDeviceGetUtilizationRates(handle)
    )

    def nvmlDeviceGetComputeRunningProcesses(self, handle: str) -> list[Any]:  # noqa: N802
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self.processes]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: str) -> list[Any]:  # noqa: N802
        return []


@pytest.fixture(scope="module")
def sampled() -> tuple[ProbeResult, list[tuple[str, str, bool]], list[int]]:
    plan = plan_inference(None, dims=SMALL, runs=3, warmup=1)
    phases: list[tuple[str, str, bool]] = []
    pids: list[int] = []

    def on_phase(name: str, edge: str, at: float, ok: bool | None) -> None:
        # Live: the probe child is still running (not a zombie) when its phase reaches us.
        alive = psutil.Process(pids[-1]).status() != psutil.STATUS_ZOMBIE
        phases.append((name, edge, alive))

    # Sampled every 50 ms: since a GPU session that fell back is run once (not warm-up + timed
    # runs), the probe can end within a few of the default ticks on a fast machine (CI saw 2).
    result = run_sampled_inference(
        _target(),
        plan,
        python=sys.executable,
        env=_env(),
        on_phase=on_phase,
        on_start=pids.append,
        interval_s=0.05,
    )
    return result, phases, pids


def test_phases_reach_the_listener_while_the_probe_runs(sampled: Any) -> None:
    result, phases, pids = sampled
    assert ("cpu.session", "start", True) in phases
    assert ("gpu.session", "end", True) in phases
    assert all(alive for _, _, alive in phases)
    assert len(set(pids)) >= 1 and result.runtime.pid in pids


def test_the_series_has_cpu_samples_of_the_probe_and_says_why_there_is_no_gpu(sampled: Any) -> None:
    result, _, pids = sampled
    assert result.series is not None
    series = SamplingSeries.from_dict(result.series)
    probe_samples = [s for s in series.samples if s.pid in pids and s.probe_cpu_percent is not None]
    assert len(probe_samples) >= 3
    assert any((s.probe_cpu_percent or 0) > 0 for s in probe_samples)
    # No driver here: no GPU values at all (gaps, never zeros), and the status says why.
    assert not any(s.has_gpu_values() for s in series.samples)
    assert not series.gpu_status.available and series.gpu_status.reason
    assert result.series["sentences"][0].startswith("NVML: ")
    names = [mark.name for mark in series.marks]
    assert names[:4] == ["import", "cpu.session", "cpu.warmup", "cpu.timed"]
    assert "gpu.strict.failed" in names
    assert result.gpu_before is not None and not result.gpu_before.read
    assert result.gpu_before.note.startswith("NVML: ")
    csv_text = series.to_csv()
    assert csv_text.splitlines()[0].endswith(",pid,phase")
    phases = {row.rsplit(",", 1)[1] for row in csv_text.splitlines()[1:]}
    assert phases & {"import", "cpu.session", "cpu.warmup", "cpu.timed", "gpu.session", "gpu.strict"}


def test_outputs_of_each_child_are_kept(sampled: Any) -> None:
    result, _, _ = sampled
    names = [output.name for output in result.outputs]
    assert names[:2] == ["as_is.stdout.txt", "as_is.stderr.txt"]
    stdout = result.outputs[0].text
    assert '"event": "result"' in stdout or '"event":"result"' in stdout


def test_the_post_hoc_listener_still_works_without_a_start_listener() -> None:
    """run_python_probe's on_phase alone (the wizard's use) hears every phase once."""
    plan = plan_inference(None, dims=SMALL, runs=2, warmup=1)
    heard: list[tuple[str, str]] = []
    result = run_python_probe(
        sys.executable,
        plan.request,
        env=_env(),
        strategies=(StrategyName.AS_IS,),
        on_phase=lambda name, edge, at, ok: heard.append((name, edge)),
    )
    assert heard.count(("cpu.session", "start")) == 1
    assert len(heard) == 2 * len(result.phases)


def test_other_processes_on_the_gpu_before_the_probe_are_a_note() -> None:
    source = NvmlSource(nvml=StandInNvml([(4242, 1100 * MIB), (77, None), (os.getpid(), 10 * MIB)]))
    assert source.open().available
    before = gpu_occupancy(source, exclude=(os.getpid(),))
    assert before == GpuOccupancy(read=True, processes=(GpuProcess(77, 0, None), GpuProcess(4242, 0, 1100.0)))
    findings = inference_findings(ProbeResult(gpu_before=before))
    assert [f.id for f in findings] == ["inference.gpu_busy_before"]
    finding = findings[0]
    assert finding.severity.value == "info"
    assert "PID 4242 on GPU 0: 1100 MiB" in finding.detail and "PID 77 on GPU 0: ? MiB" in finding.detail
    assert "1100 MiB" in finding.title
    assert "MiB" in words_of(finding, "ko")["title"]


def test_no_note_when_the_gpu_is_free_or_unknown() -> None:
    free = gpu_occupancy(_opened(StandInNvml([])))
    assert free.read and not free.processes
    assert inference_findings(ProbeResult(gpu_before=free)) == []
    unknown = GpuOccupancy(read=False, note="NVML: no driver")
    assert inference_findings(ProbeResult(gpu_before=unknown)) == []


def _opened(nvml: StandInNvml) -> NvmlSource:
    source = NvmlSource(nvml=nvml)
    source.open()
    return source


def test_a_sampled_run_with_a_stand_in_nvml_carries_the_prior_occupants(tmp_path: Path) -> None:
    plan = plan_inference(None, dims=SMALL, runs=1, warmup=0)
    source = NvmlSource(nvml=StandInNvml([(4242, 2048 * MIB)]), proc_root=str(tmp_path))
    result = run_sampled_inference(_target(), plan, python=sys.executable, env=_env(), gpu_source=source)
    assert result.gpu_before == GpuOccupancy(read=True, processes=(GpuProcess(4242, 0, 2048.0),))
    assert "inference.gpu_busy_before" in [f.id for f in inference_findings(result)]
    series = SamplingSeries.from_dict(result.series or {})
    # The stand-in's memory reading (not measured here) is in the series, with the probe's PID.
    assert any(s.memory_used_mib == 5000.0 and s.pid is not None for s in series.samples)
