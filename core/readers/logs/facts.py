"""Facts a log states about the machine and the build, beside its failure lines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from fallback_doctor.core.readers.logs.extract import provider_names
from fallback_doctor.core.readers.logs.lines import LogLine
from fallback_doctor.core.readers.logs.results import LogFacts, QuotedLine
from fallback_doctor.core.readers.logs.signatures import Match

_ORT_PACKAGE = re.compile(
    r"\b(onnxruntime(?:[-_](?:gpu|directml|openvino|silicon|rocm|training|qnn|dml|cuda))?)"
    r"(?:==|-|\s{1,40})v?[0-9]",
    re.IGNORECASE,
)
GPU_PROVIDERS = frozenset({"CUDA", "Tensorrt", "TensorRT", "NvTensorRTRTX", "MIGraphX", "ROCM"})


def as_int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def cudnn_major_of(text: str) -> int | None:
    """cuDNN's major from how logs print it: ``8.9.7``, ``8907`` (8.x: M*1000+m*100+p) or ``90100``
    (9.x: M*10000+m*100+p, as ``torch.backends.cudnn.version()`` prints them)."""
    if "." in text:
        return as_int(text.split(".")[0])
    number = as_int(text)
    if number is None:
        return None
    return number // 10000 if number >= 10000 else number // 1000


def _ort_version(text: str) -> str | None:
    parts = text.split(".")
    return text if len(parts) >= 2 and all(part.isdigit() for part in parts) else None


@dataclass
class _Gathered:
    required_cuda: int | None = None
    required_cudnn: int | None = None
    majors: set[int] = field(default_factory=set)
    cudnn_majors: set[int] = field(default_factory=set)
    container: bool = False
    wsl: bool = False
    gpu_active: bool = False
    packages: dict[str, None] = field(default_factory=dict)
    provider_lists: list[tuple[str, ...]] = field(default_factory=list)
    ort_versions: dict[str, None] = field(default_factory=dict)
    drivers: dict[str, None] = field(default_factory=dict)
    gpus: dict[str, None] = field(default_factory=dict)
    cuda_versions: set[tuple[int, int]] = field(default_factory=set)
    fallback: list[QuotedLine] = field(default_factory=list)

    def context(self, fact: str, fields: dict[str, str], text: str) -> None:
        if fact == "container":
            self.container = True
        elif fact == "wsl":
            self.wsl = True
        elif fact == "gpu_active":
            self.gpu_active = True
        elif fact == "cuda_major":
            major = as_int(fields.get("cuda_major"))
            if major is not None:
                self.majors.add(major)
        elif fact == "ort_packages":
            for name in _ORT_PACKAGE.findall(text):
                self.packages[name.lower().replace("_", "-")] = None
        elif fact == "providers":
            names = provider_names(text)
            if names:
                self.provider_lists.append(names)
        elif fact == "ort_version" and (version := _ort_version(fields.get("version", ""))):
            self.ort_versions[version] = None
        elif fact == "cudnn_version" and (cudnn := cudnn_major_of(fields.get("cudnn", ""))):
            self.cudnn_majors.add(cudnn)
        elif fact == "driver_version" and (driver := fields.get("driver") or fields.get("driver2")):
            self.drivers[driver] = None
        elif fact == "gpu_name" and fields.get("gpu"):
            self.gpus[fields["gpu"].strip()] = None
        elif fact == "cuda_version":
            for suffix in ("", "2", "3", "4"):
                high = fields.get("cuda_major" if not suffix else "major" + suffix)
                low = fields.get("cuda_minor" if not suffix else "minor" + suffix)
                if high and low:
                    self.cuda_versions.add((int(high), int(low)))


def gather_facts(
    matched: Sequence[tuple[LogLine, list[Match]]],
) -> tuple[LogFacts, dict[str, list[LogLine]]]:
    """The facts of the whole window, and the lines that state each kind of fact."""
    found = _Gathered()
    context_lines: dict[str, list[LogLine]] = {}
    for line, matches in matched:
        # "Falling back to ['CPUExecutionProvider']" names what the session fell back to, not
        # what the build holds: a fallback line is no provider list.
        fell_back = any(match.signature.kind == "fallback" for match in matches)
        for match in matches:
            sig = match.signature
            if fell_back and sig.fact == "providers":
                continue
            if sig.kind == "requirement":
                context_lines.setdefault("requirement", []).append(line)
                found.required_cuda = as_int(match.fields.get("cuda_major")) or found.required_cuda
                found.required_cudnn = as_int(match.fields.get("cudnn_major")) or found.required_cudnn
            elif sig.kind == "fallback":
                found.fallback.append(QuotedLine.of(line, "fallback"))
            elif sig.kind == "context" and sig.fact:
                context_lines.setdefault(sig.fact, []).append(line)
                found.context(sig.fact, match.fields, line.text)
    lists = found.provider_lists
    facts = LogFacts(
        required_cuda_major=found.required_cuda,
        required_cudnn_major=found.required_cudnn,
        cuda_majors_seen=frozenset(found.majors),
        container=found.container,
        wsl=found.wsl,
        ort_packages=tuple(found.packages),
        providers=lists[-1] if lists else None,
        fallback=tuple(found.fallback),
        gpu_provider_listed=any(set(names) & GPU_PROVIDERS for names in lists),
        gpu_active=found.gpu_active,
        ort_versions=tuple(found.ort_versions),
        cudnn_majors_seen=frozenset(found.cudnn_majors),
        driver_versions=tuple(found.drivers),
        gpu_names=tuple(found.gpus),
        cuda_versions=tuple(sorted(found.cuda_versions)),
    )
    return facts, context_lines
