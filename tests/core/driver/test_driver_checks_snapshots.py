"""The driver and device checks on snapshots built from facts (pure functions, no loading)."""

from __future__ import annotations

from fallback_doctor.core.judgement.checks import device as device_checks
from fallback_doctor.core.judgement.checks import driver as driver_checks
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.facts.device import DeviceFacts
from fallback_doctor.core.model.facts.driver import DriverFacts, GpuInfo
from fallback_doctor.core.model.facts.native import LoadAttempt, NativeFacts
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.platform import PlatformFacts
from fallback_doctor.core.model.result import Finding, Layer, Severity, rank_findings
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot

NO_NVML = DriverFacts(
    "library_not_found",
    "no NVIDIA driver (NVML_ERROR_LIBRARY_NOT_FOUND)",
    None,
    None,
    (),
    None,
    nvml_error_code=12,
)
NO_LIBCUDA = LoadAttempt(
    "libcuda.so.1", False, None, "libcuda.so.1: cannot open shared object file", None, "libcuda"
)
LINUX = PlatformFacts("Linux", "6.8.0", "x86_64", "Ubuntu 22.04.4 LTS")


def native(libcuda: LoadAttempt | None = NO_LIBCUDA, **kwargs: object) -> NativeFacts:
    values: dict[str, object] = {
        "outcome": "ok",
        "libcuda": libcuda,
        "cu_driver_version": None,
        "cu_init_result": None,
        "attempts": (),
        "stderr": "",
    }
    values.update(kwargs)
    return NativeFacts(**values)  # type: ignore[arg-type]


def device(**kwargs: object) -> DeviceFacts:
    values: dict[str, object] = {
        "container": None,
        "device_nodes": (),
        "cuda_visible_devices": None,
        "nvidia_visible_devices": None,
        "wsl": False,
        "pci_nvidia_devices": (),
    }
    values.update(kwargs)
    return DeviceFacts(**values)  # type: ignore[arg-type]


def ort(version: str, major: int) -> OrtFacts:
    return OrtFacts((), None, version, None, ("CUDAExecutionProvider",), (), major, 9, "test")


def run(snapshot: EnvironmentSnapshot) -> list[Finding]:
    found: list[Finding] = []
    for check in driver_checks.CHECKS + device_checks.CHECKS:
        found.extend(check(snapshot))
    return found


def test_no_driver_on_a_host_names_the_driver_for_the_build() -> None:
    snapshot = EnvironmentSnapshot(
        platform=LINUX,
        onnxruntime=ort("1.31.1", 13),
        driver=NO_NVML,
        native=native(),
        device=device(pci_nvidia_devices=("0000:17:00.0",)),
    )
    (finding,) = run(snapshot)
    assert finding.id == "driver.missing" and finding.cause == "driver_missing"
    assert finding.layer == Layer.DRIVER and finding.severity == Severity.ERROR
    assert "580.65.06" in (finding.remediation.summary if finding.remediation else "")
    assert "sudo apt install nvidia-driver-580-server    # Ubuntu; or: sudo ubuntu-drivers install" in (
        finding.remediation.commands if finding.remediation else ()
    )
    labels = {e.label: e.value for e in finding.evidence}
    assert labels["libcuda.so.1"].startswith("libcuda.so.1: cannot open shared object file")
    assert labels["NVIDIA GPUs on the PCI bus"] == "0000:17:00.0"
    assert "580.65.06" in words_of(finding, "ko")["fix"]


def test_no_driver_variants() -> None:
    container = EnvironmentSnapshot(
        platform=LINUX,
        driver=NO_NVML,
        native=native(),
        device=device(container="docker", container_evidence=("/.dockerenv",)),
    )
    ranked = rank_findings(run(container))
    # one cause, one finding: the container was started without GPU access (issue 11); the
    # device files it lacks are evidence of that finding, not a second one
    assert [f.id for f in ranked] == ["driver.missing.container"]
    assert {e.label: e.value for e in ranked[0].evidence}["/dev/nvidia*"] == "none"
    wsl = EnvironmentSnapshot(
        platform=LINUX, driver=NO_NVML, native=native(), device=device(wsl=True, dxg_present=True)
    )
    assert [f.id for f in run(wsl)] == ["driver.missing.wsl"]
    windows = EnvironmentSnapshot(
        platform=PlatformFacts("Windows", "10", "AMD64", None),
        onnxruntime=ort("1.23.2", 12),
        driver=NO_NVML,
        native=native(LoadAttempt("nvcuda.dll", False, None, "not found", None)),
        device=device(),
    )
    (finding,) = run(windows)
    assert finding.id == "driver.missing.windows" and "527.41" in finding.detail + (
        finding.remediation.summary if finding.remediation else ""
    )


def test_driver_not_loaded_and_unknown_nvml() -> None:
    not_loaded = DriverFacts(
        "driver_not_loaded", "kernel module not loaded", None, None, (), None, nvml_error_code=9
    )
    assert [f.id for f in run(EnvironmentSnapshot(driver=not_loaded, native=native()))] == [
        "driver.not_loaded"
    ]
    # NVML could not even be asked (pynvml missing): the child's libcuda verdict decides.
    no_pynvml = DriverFacts("pynvml_missing", "nvidia-ml-py is not installed", None, None, (), None)
    assert [f.id for f in run(EnvironmentSnapshot(driver=no_pynvml, native=native()))] == ["driver.missing"]


def test_healthy_stack_has_no_findings() -> None:
    gpu = GpuInfo(0, "NVIDIA A10", (8, 6), 24576, "GPU-1")
    driver = DriverFacts(
        "ok",
        None,
        "580.65.06",
        13000,
        (gpu,),
        "NVRM version: ... 580.65.06",
        cuda_driver_version_source="nvmlSystemGetCudaDriverVersion_v2",
    )
    libcuda = LoadAttempt(
        "libcuda.so.1", True, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", None, 13000, "libcuda"
    )
    snapshot = EnvironmentSnapshot(
        platform=LINUX,
        onnxruntime=ort("1.31.1", 13),
        driver=driver,
        native=native(libcuda, cu_driver_version=13000, cu_init_result=0, cu_device_count=1),
        device=device(device_nodes=("/dev/nvidia0", "/dev/nvidiactl")),
    )
    assert run(snapshot) == []


def test_unsupported_arch_and_ptx_only() -> None:
    pascal = GpuInfo(0, "Tesla P40", (6, 1), 24576, "GPU-1")
    driver = DriverFacts("ok", None, "580.65.06", 13000, (pascal,), None)
    snapshot = EnvironmentSnapshot(
        platform=LINUX, onnxruntime=ort("1.31.1", 13), driver=driver, device=device()
    )
    (finding,) = run(snapshot)
    assert finding.id == "device.unsupported_arch" and finding.cause == "unsupported_arch"
    assert "Tesla P40" in finding.title and "6.1" in words_of(finding, "ko")["title"]
    assert finding.remediation is not None
    assert finding.remediation.commands[0].startswith('pip install "onnxruntime-gpu==1.26.*"')
    hopper = GpuInfo(0, "NVIDIA H100", (9, 0), 81559, "GPU-2")
    old_build = EnvironmentSnapshot(
        platform=LINUX,
        onnxruntime=ort("1.18.0", 11),
        driver=DriverFacts("ok", None, "580.65.06", 13000, (hopper,), None),
        device=device(),
    )
    (info,) = run(old_build)
    assert info.id == "device.arch_ptx_only" and info.severity == Severity.INFO


def test_driver_too_old_from_the_matrix_alone() -> None:
    gpu = GpuInfo(0, "NVIDIA L4", (8, 9), 23034, "GPU-3")
    driver = DriverFacts(
        "ok",
        None,
        "570.86.15",
        12080,
        (gpu,),
        None,
        cuda_driver_version_source="nvmlSystemGetCudaDriverVersion_v2",
    )
    libcuda = LoadAttempt("libcuda.so.1", True, "/usr/lib/libcuda.so.1", None, 12080, "libcuda")
    snapshot = EnvironmentSnapshot(
        platform=LINUX,
        onnxruntime=ort("1.31.1", 13),
        driver=driver,
        native=native(libcuda, cu_driver_version=12080, cu_init_result=0, cu_device_count=1),
        device=device(device_nodes=("/dev/nvidia0",)),
    )
    ids = [f.id for f in run(snapshot)]
    assert ids == ["driver.too_old"]
    (finding,) = run(snapshot)
    assert "12.8" in finding.detail and "580.65.06" in finding.detail
    assert {e.label for e in finding.evidence} == {"driver version", "CUDA supported by the driver"}


def test_probe_crash_outside_the_driver_is_not_a_driver_finding() -> None:
    crashed = native(
        outcome="the probe crashed with SIGABRT while loading libcudnn.so.9",
        crashed_step="loading libcudnn.so.9",
    )
    assert [f.id for f in run(EnvironmentSnapshot(driver=NO_NVML, native=crashed))] == ["driver.missing"]


def test_working_forward_compatibility_is_not_too_old() -> None:
    gpu = GpuInfo(0, "NVIDIA A100-SXM4-80GB", (8, 0), 81920, "GPU-4")
    driver = DriverFacts(
        "ok",
        None,
        "535.183.01",
        13000,
        (gpu,),
        None,
        cuda_driver_version_source="nvmlSystemGetCudaDriverVersion_v2",
    )
    compat = LoadAttempt(
        "libcuda.so.1", True, "/usr/local/cuda-13.0/compat/libcuda.so.1", None, 13000, "libcuda"
    )
    snapshot = EnvironmentSnapshot(
        platform=LINUX,
        onnxruntime=ort("1.31.1", 13),
        driver=driver,
        native=native(compat, cu_driver_version=13000, cu_init_result=0, cu_device_count=1),
        device=device(device_nodes=("/dev/nvidia0",)),
    )
    assert run(snapshot) == []
