"""Bareun-like installations laid out in a temporary directory, with REAL ONNX Runtime libraries.

- The CPU-only library is the real ONNX Runtime C library of the npm package onnxruntime-node
  (``bin/napi-v6/linux/x64/libonnxruntime.so.1``, a CPU build), fetched once with ``npm pack``
  into ``~/.cache/gpu-fallback-doctor/npm/``.
- The GPU libraries (``libonnxruntime.so.1.31.1`` and the provider libraries) come out of the
  onnxruntime-gpu 1.31.1 wheel (already unpacked by the scenario tests, else unpacked here from
  the wheel cache).

Files are hard-linked from the cache (copied where a link cannot be made), so a layout costs a
directory, and /proc/PID/maps of a process that loads one shows the path inside the layout.

Bareun's own log format is not published: the log lines here other than ONNX Runtime's own
message and the server's ``Use config file: …`` line are WRITTEN BY US.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("GFD_CACHE_DIR", Path.home() / ".cache" / "gpu-fallback-doctor"))
ORT_NODE_VERSION = "1.23.2"
ORT_NODE_MEMBER = "package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
GPU_WHEEL = "onnxruntime_gpu-1.31.1-cp311-cp311-manylinux_2_28_x86_64"
WHEEL_DIRS = (Path("/root/.cache/gfd-wheels"), CACHE / "uv")

#: ONNX Runtime's own message when a CPU-only library is asked for the CUDA provider through the
#: C API (example line of the signature ort.ep_not_enabled_in_build; asus4/onnxruntime-unity#17).
ORT_CPU_BUILD_LINE = "CUDA execution provider is not enabled in this build."


def cpu_library() -> Path:
    """The real CPU-only libonnxruntime.so.1 of onnxruntime-node (npm pack once, then cached)."""
    folder = CACHE / "npm" / f"onnxruntime-node-{ORT_NODE_VERSION}"
    library = folder / ORT_NODE_MEMBER
    if library.is_file():
        return library
    npm = shutil.which("npm")
    archive = CACHE / "npm" / f"onnxruntime-node-{ORT_NODE_VERSION}.tgz"
    if not archive.is_file():
        if npm is None:
            pytest.skip("npm is not installed and onnxruntime-node is not cached")
        archive.parent.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [npm, "pack", f"onnxruntime-node@{ORT_NODE_VERSION}"],
            cwd=archive.parent,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0 or not archive.is_file():
            pytest.skip(f"npm pack onnxruntime-node failed: {result.stderr[-300:]}")
    with tarfile.open(archive) as tar:
        tar.extract(tar.getmember(ORT_NODE_MEMBER), folder, filter="data")
    return library


def gpu_capi() -> Path:
    """The onnxruntime/capi folder of the onnxruntime-gpu 1.31.1 wheel (unpacked once)."""
    capi = CACHE / "unpacked" / GPU_WHEEL / "onnxruntime" / "capi"
    if (capi / "libonnxruntime_providers_cuda.so").is_file():
        return capi
    wheel = next((d / f"{GPU_WHEEL}.whl" for d in WHEEL_DIRS if (d / f"{GPU_WHEEL}.whl").is_file()), None)
    if wheel is None:
        pytest.skip("the onnxruntime-gpu 1.31.1 wheel is not cached")
    target = CACHE / "unpacked" / GPU_WHEEL
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("onnxruntime/capi/") and ".so" in name:
                archive.extract(name, target)
    return capi


def place(source: Path, destination: Path) -> None:
    """Hard-link ``source`` to ``destination`` (a copy where a link cannot be made)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)


SAMPLE_CONFIG: dict[str, object] = {
    "version": 3000000,
    "address": {"ipAddr": "0.0.0.0", "port": 5656},
    "staticAddress": {"ipAddr": "0.0.0.0", "port": 5656},
    "libPath": "${BAREUN_ROOT}/lib",
    "libDevel": False,
    "tracePath": "${BAREUN_ROOT}/var/trace",
    "modelPath": "${BAREUN_ROOT}/models",
    "customDictPath": "${BAREUN_ROOT}/var/custom-dict",
    "licenseFile": "${BAREUN_ROOT}/var/license.pem",
    "logPath": "${BAREUN_ROOT}/var/logs",
    "varPath": "${BAREUN_ROOT}/var",
    "hasTestWeb": True,
    "executionProvider": {"provider": "cuda"},
}
"""The shape of the only real bareun.json found (bareun-facts.md A5), asking for CUDA."""


def fallback_log(root: Path) -> str:
    """A server log with a start-up and the fallback (our own lines around ONNX Runtime's)."""
    return (
        f"Use config file: {root}/config/bareun.json\n"
        "2025/11/03 09:14:21 bareun server 3.1.0 starting\n"  # written by us
        "2025/11/03 09:14:22 execution provider cuda requested\n"  # written by us
        f"2025/11/03 09:14:22 onnxruntime error: {ORT_CPU_BUILD_LINE}\n"  # ONNX Runtime's own text
        "2025/11/03 09:14:22 falling back to CPU execution provider\n"  # written by us
        "2025/11/03 09:14:23 listening on 0.0.0.0:5656\n"  # written by us
    )


def make_install(
    base: Path,
    *,
    lib: str | None = "cpu",
    config: dict[str, object] | None = None,
    config_text: str | None = None,
    log: str | None = "fallback",
) -> Path:
    """A Bareun-like installation under ``base``: config/bareun.json, lib/, models/, var/.

    ``lib``: "cpu" (onnxruntime-node's CPU-only library), "gpu" (1.31.1 with its providers), None.
    """
    root = base / "bareun"
    for folder in ("config", "models", "var/logs", "var/trace", "bin"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "var" / "license.pem").write_text("-----BEGIN LICENSE-----\n", encoding="utf-8")
    if lib == "cpu":
        place(cpu_library(), root / "lib" / "libonnxruntime.so.1")
    elif lib == "gpu":
        capi = gpu_capi()
        for name in (
            "libonnxruntime.so.1.31.1",
            "libonnxruntime_providers_cuda.so",
            "libonnxruntime_providers_tensorrt.so",
            "libonnxruntime_providers_shared.so",
        ):
            place(capi / name, root / "lib" / name)
        (root / "lib" / "libonnxruntime.so.1").symlink_to("libonnxruntime.so.1.31.1")
    else:
        (root / "lib").mkdir(exist_ok=True)
    text = (
        config_text
        if config_text is not None
        else json.dumps(SAMPLE_CONFIG if config is None else config, indent=2)
    )
    (root / "config" / "bareun.json").write_text(text, encoding="utf-8")
    if log == "fallback":
        (root / "var" / "logs" / "bareun.log").write_text(fallback_log(root), encoding="utf-8")
    return root
