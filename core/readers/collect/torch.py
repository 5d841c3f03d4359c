"""Collect what PyTorch brings into the target environment: its CUDA build and CUDA libraries.

PyTorch matters to ONNX Runtime because its CUDA and cuDNN libraries get loaded first:
``onnxruntime.preload_dlls()`` prefers torch's copies on Windows, and a process that
imported torch already holds torch's cuDNN. Read from files only (torch is never imported).

By hand: ``python -c "import torch; print(torch.__version__, torch.version.cuda,
torch.backends.cudnn.version())"`` (slow: it loads CUDA) or ``cat .../torch/version.py``.
"""

from __future__ import annotations

import os
import re

from fallback_doctor.core.model.facts.python_env import Distribution, PythonEnvFacts, normalize_name
from fallback_doctor.core.model.facts.torch import TorchFacts
from fallback_doctor.core.platform.files import read_regular_text
from fallback_doctor.core.readers.collect.onnxruntime import find_package_dir, read_assignments

_GPU_LIBRARY = re.compile(
    r"^(?:lib)?(?:cudart|cublas|cublaslt|cudnn\w*|cufft|curand|cusparse\w*|cusolver\w*|nvrtc\w*"
    r"|nvjitlink\w*|nccl|nvtoolsext\w*|cupti|zlibwapi)[\w.\-]*\.(?:so(?:\.[\d.]+)?|dll)$",
    re.IGNORECASE,
)
"""CUDA / cuDNN libraries as torch/lib names them (auditwheel may add a hash: libcudart-d0da41ae.so.11.0)."""

_CUDNN_NAME = re.compile(r"^(?:lib)?cudnn(?:_\w+?)?(?:-[0-9a-f]+)?(?:\.so\.|64_)(\d+)", re.IGNORECASE)


def collect_torch(python: PythonEnvFacts) -> TorchFacts | None:
    """PyTorch's version, CUDA build, bundled CUDA/cuDNN libraries and NVIDIA wheels; None without torch.

    By hand: ``cat SITE_PACKAGES/torch/version.py; ls SITE_PACKAGES/torch/lib;
    python -m pip list | grep -i nvidia``.
    """
    search = python.sys_path or python.site_packages
    package_dir, _ = find_package_dir(search, "torch")
    dist = next(iter(python.distributions_named("torch")), None)
    if package_dir is None and dist is None:
        return None
    values = read_assignments(os.path.join(package_dir, "version.py")) if package_dir else {}
    version = _text(values.get("__version__")) or (dist.version if dist else "") or "unknown"
    lib_dir = os.path.join(package_dir, "lib") if package_dir else None
    if lib_dir is not None and not os.path.isdir(lib_dir):
        lib_dir = None
    bundled = bundled_gpu_libraries(lib_dir) if lib_dir else ()
    nvidia = tuple(d for d in python.distributions if d.normalized_name.startswith("nvidia-"))
    requirements = torch_nvidia_requirements(dist) if dist else ()
    cudnn_major, cudnn_source = _cudnn(bundled, lib_dir, nvidia, requirements)
    return TorchFacts(
        version=version,
        cuda_build=_text(values.get("cuda")),
        lib_dir=lib_dir,
        bundled_libraries=bundled,
        package_dir=package_dir,
        hip_build=_text(values.get("hip")),
        cudnn_major=cudnn_major,
        cudnn_source=cudnn_source,
        nvidia_requirements=requirements,
        nvidia_distributions=nvidia,
    )


def bundled_gpu_libraries(lib_dir: str) -> tuple[str, ...]:
    """The CUDA / cuDNN library file names inside torch/lib, sorted."""
    try:
        names = os.listdir(lib_dir)
    except OSError:
        return ()
    return tuple(sorted(name for name in names if _GPU_LIBRARY.match(name)))


def torch_nvidia_requirements(dist: Distribution) -> tuple[str, ...]:
    """torch's ``Requires-Dist: nvidia-...`` lines from its METADATA, as written."""
    if not dist.metadata_dir:
        return ()
    try:
        text = read_regular_text(os.path.join(dist.metadata_dir, "METADATA"), 512 * 1024)
    except OSError:
        return ()
    found: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        key, _, value = line.partition(":")
        if key.strip().lower() == "requires-dist" and normalize_name(value.strip()).startswith("nvidia-"):
            found.append(value.strip())
    return tuple(found)


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._\-]*)", requirement)
    return normalize_name(match.group(1)) if match else ""


def _cudnn(
    bundled: tuple[str, ...],
    lib_dir: str | None,
    nvidia: tuple[Distribution, ...],
    requirements: tuple[str, ...],
) -> tuple[int | None, str | None]:
    for name in bundled:
        match = _CUDNN_NAME.match(name)
        if match:
            return int(match.group(1)), f"torch/lib ({name})"
    wanted = {_requirement_name(req) for req in requirements if "cudnn" in req.lower()}
    candidates = [d for d in nvidia if d.normalized_name.startswith("nvidia-cudnn")]
    preferred = [d for d in candidates if d.normalized_name in wanted] or candidates
    for dist in preferred:
        head = dist.version.split(".", 1)[0]
        if head.isdigit():
            return int(head), f"{dist.name} {dist.version}"
    return None, None


def _text(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    return text or None
