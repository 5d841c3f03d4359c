"""Facts a log states about the machine and the build, beside its failure lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fallback_doctor.core.logs.reader import LogLine
from fallback_doctor.core.logs.results import LogFacts, QuotedLine
from fallback_doctor.core.logs.signatures import Match

_ORT_PACKAGE = re.compile(
    r"\b(onnxruntime(?:[-_](?:gpu|directml|openvino|silicon|rocm|training|qnn|dml|cuda))?)"
    r"(?:==|-|\s{1,40})v?[0-9]",
    re.IGNORECASE,
)
_PROVIDER = re.compile(r"([A-Za-z]{2,40})ExecutionProvider")
GPU_PROVIDERS = frozenset({"CUDA", "Tensorrt", "TensorRT", "NvTensorRTRTX", "MIGraphX", "ROCM"})


def as_int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def gather_facts(
    matched: Sequence[tuple[LogLine, list[Match]]],
) -> tuple[LogFacts, dict[str, list[LogLine]]]:
    required_cuda: int | None = None
    required_cudnn: int | None = None
    majors: set[int] = set()
    container = wsl = False
    packages: dict[str, None] = {}
    providers: tuple[str, ...] | None = None
    fallback: list[QuotedLine] = []
    context_lines: dict[str, list[LogLine]] = {}
    for line, matches in matched:
        for match in matches:
            sig = match.signature
            if sig.kind == "requirement":
                context_lines.setdefault("requirement", []).append(line)
                required_cuda = as_int(match.fields.get("cuda_major")) or required_cuda
                required_cudnn = as_int(match.fields.get("cudnn_major")) or required_cudnn
            elif sig.kind == "fallback":
                fallback.append(QuotedLine.of(line, "fallback"))
            elif sig.kind == "context" and sig.fact:
                context_lines.setdefault(sig.fact, []).append(line)
                if sig.fact == "container":
                    container = True
                elif sig.fact == "wsl":
                    wsl = True
                elif sig.fact == "cuda_major":
                    major = as_int(match.fields.get("cuda_major"))
                    if major is not None:
                        majors.add(major)
                elif sig.fact == "ort_packages":
                    for name in _ORT_PACKAGE.findall(line.text):
                        packages[name.lower().replace("_", "-")] = None
                elif sig.fact == "providers":
                    providers = tuple(_PROVIDER.findall(line.text))
    facts = LogFacts(
        required_cuda_major=required_cuda,
        required_cudnn_major=required_cudnn,
        cuda_majors_seen=frozenset(majors),
        container=container,
        wsl=wsl,
        ort_packages=tuple(packages),
        providers=providers,
        fallback=tuple(fallback),
    )
    return facts, context_lines
