"""The bundle's environment record and samples.csv, made from the report document.

environment.json records OS, GPU model, driver, CUDA and cuDNN as found, ONNX Runtime and its
CUDA build separately (the compatibility guide's advice); samples.csv is the sampled series.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any


def environment_record(document: dict[str, Any]) -> dict[str, Any]:
    """OS, GPU model, driver, CUDA and cuDNN as found, ONNX Runtime and its CUDA build, container, Python.

    Taken from the report's environment (the compatibility guide's advice: record each
    separately). By hand: `nvidia-smi`, `cat /etc/os-release`, `pip show onnxruntime-gpu`.
    """
    env = document.get("environment") if isinstance(document.get("environment"), dict) else {}
    assert isinstance(env, dict)

    def part(name: str) -> dict[str, Any]:
        value = env.get(name)
        return value if isinstance(value, dict) else {}

    platform, driver, device = part("platform"), part("driver"), part("device")
    python, ort, torch, libraries = part("python"), part("onnxruntime"), part("torch"), part("libraries")
    found: dict[str, list[str]] = {"cudart": [], "cublas": [], "cudnn": [], "nvinfer": []}
    for library in libraries.get("inventory") or []:
        if not isinstance(library, dict):
            continue
        name = str(library.get("name") or "")
        for family in found:
            if name.startswith("lib" + family) or name.startswith(family):
                found[family].append(f"{name} ({library.get('version') or '?'}) at {library.get('path')}")
    cuda_driver = driver.get("cuda_driver_version")
    return {
        "os": {
            "name": platform.get("os_name"),
            "system": platform.get("system"),
            "release": platform.get("release"),
            "machine": platform.get("machine"),
        },
        "gpus": [
            {
                "index": gpu.get("index"),
                "name": gpu.get("name"),
                "compute_capability": gpu.get("compute_capability"),
                "memory_total_mib": gpu.get("memory_total_mib"),
                "uuid": gpu.get("uuid"),
            }
            for gpu in driver.get("gpus") or []
            if isinstance(gpu, dict)
        ],
        "driver": {
            "version": driver.get("driver_version") or driver.get("kernel_module_version"),
            "cuda_supported": (
                f"{cuda_driver // 1000}.{(cuda_driver % 1000) // 10}"
                if isinstance(cuda_driver, int)
                else None
            ),
            "nvml_status": driver.get("nvml_status"),
        },
        "cuda_found": found["cudart"] + found["cublas"],
        "cudnn_found": found["cudnn"],
        "tensorrt_found": found["nvinfer"],
        "onnxruntime": {
            "version": ort.get("version"),
            "package": ort.get("build_package_name"),
            "cuda_build": ort.get("cuda_build_version"),
            "providers_in_build": ort.get("providers_in_build"),
            "requires_cuda_major": ort.get("required_cuda_major"),
            "requires_cudnn_major": ort.get("required_cudnn_major"),
        },
        "torch": {"version": torch.get("version"), "cuda": torch.get("cuda_version")} if torch else None,
        "container": {
            "kind": device.get("container"),
            "wsl": device.get("wsl"),
            "nvidia_visible_devices": device.get("nvidia_visible_devices"),
        },
        "python": {"version": python.get("version"), "executable": python.get("executable")},
    }


def samples_csv_from_rows(rows: Sequence[dict[str, object]], fields: Sequence[str] | None = None) -> str:
    """samples.csv from sample dicts (``GpuSample.to_dict()``); empty cells where a value is None."""
    if fields is None:
        from fallback_doctor.core.readers.sampling.sample import SAMPLE_FIELDS

        fields = SAMPLE_FIELDS
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: ("" if row.get(key) is None else row.get(key)) for key in fields})
    return buffer.getvalue()


def samples_in_document(document: dict[str, Any]) -> str | None:
    """samples.csv from a sample list the document carries (``samples`` or a probe's ``series``)."""
    candidates: list[object] = [document.get("samples")]
    for key in ("probe", "inference", "sampling"):
        value = document.get(key)
        if isinstance(value, dict):
            candidates.extend(
                [
                    value.get("samples"),
                    (value.get("series") or {}).get("samples")
                    if isinstance(value.get("series"), dict)
                    else None,
                ]
            )
    for candidate in candidates:
        if isinstance(candidate, list) and candidate and all(isinstance(row, dict) for row in candidate):
            return samples_csv_from_rows(candidate)
    return None
