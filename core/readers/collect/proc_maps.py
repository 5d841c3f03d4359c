"""``/proc/PID/maps``: which ONNX Runtime and GPU-stack libraries a running process has loaded.

By hand: ``grep -E 'onnxruntime|cudart|cublas|cudnn' /proc/PID/maps``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fallback_doctor.core.model.facts.process import MappedLibrary
from fallback_doctor.core.readers.loader import names

_ORT_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^libonnxruntime_providers_cuda(?:_plugin)?\.so"), "ort_provider_cuda"),
    (re.compile(r"^libonnxruntime_providers_tensorrt\.so"), "ort_provider_tensorrt"),
    (re.compile(r"^libonnxruntime_providers_shared\.so"), "ort_provider_shared"),
    (re.compile(r"^libonnxruntime_providers_\w+\.so"), "ort_provider_other"),
    (re.compile(r"^libonnxruntime\.so"), "ort_core"),
    (re.compile(r"^onnxruntime_pybind11_state.*\.so$"), "ort_python"),
    (re.compile(r"^onnxruntime_binding\.node$"), "ort_node"),
)


def classify_mapped(path: str) -> MappedLibrary | None:
    """Name, family and major of a mapped file when it is ONNX Runtime or the GPU stack, else None."""
    deleted = path.endswith(" (deleted)")
    if deleted:
        path = path[: -len(" (deleted)")]
    name = path.rsplit("/", 1)[-1]
    for pattern, family in _ORT_FAMILIES:
        if pattern.match(name):
            return MappedLibrary(path, name, family, None, None, deleted)
    parsed = names.parse_library_name(name)
    if parsed is None or parsed.windows:
        return None
    lowered = parsed.family.lower()
    if names.is_cuda_runtime(name) or names.is_cudnn(name) or names.is_tensorrt(name):
        family = parsed.family
    elif lowered == "cuda":
        family = "driver"
    elif lowered == "nvidia-ml":
        family = "nvml"
    else:
        return None
    return MappedLibrary(path, name, family, parsed.major, names.cuda_major_of_name(name), deleted)


def parse_maps(text: str) -> tuple[MappedLibrary, ...]:
    """The ONNX Runtime and GPU-stack libraries in a /proc/PID/maps text, each file once, in order."""
    seen: dict[str, MappedLibrary] = {}
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        path = parts[5].strip()
        if path in seen:
            continue
        mapped = classify_mapped(path)
        if mapped is not None:
            seen[path] = mapped
    return tuple(seen.values())


def mapped_paths(text: str) -> Iterator[str]:
    """Every file path a /proc/PID/maps text maps (each once)."""
    seen: set[str] = set()
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and parts[5] not in seen:
            seen.add(parts[5])
            yield parts[5].removesuffix(" (deleted)")
