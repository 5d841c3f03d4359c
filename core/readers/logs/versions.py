"""Versions a log names, checked against the bundled tables: a contradiction decides.

ONNX Runtime's version gives the CUDA and cuDNN majors its build needs (resources/compat/
ort_releases.json); the driver version gives the newest CUDA major it runs (resources/compat/
cuda_driver.json): the tables core/knowledge reads, read here directly (the log reader sits
beside core/knowledge, not above it). These
rules only sharpen a failure the log already shows: versions alone are not a failure.

Examples: ONNX Runtime 1.19 needs cuDNN 9, so a log showing cuDNN 8.9.7 (``8907``) beside
error 126 is a cuDNN major mismatch; driver 460 under a CUDA 12 build is a driver too old,
while driver 550 there makes "driver version is insufficient" point elsewhere (a container
without the driver injected).

By hand: ``python -c "import onnxruntime, torch; print(onnxruntime.__version__,
torch.backends.cudnn.version())"`` and ``nvidia-smi``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, Protocol

from fallback_doctor.core.model.causes import layer_of
from fallback_doctor.core.platform.resource_files import RESOURCES
from fallback_doctor.core.readers.logs.lines import LogLine
from fallback_doctor.core.readers.logs.results import LogFacts


class _Scaled(Protocol):
    scale: float


Add = Callable[[str, float, Sequence[LogLine], str], None]

_CUDA_STACK = frozenset({"cuda", "cudnn", "loader"})
_DRIVER_CAUSES = frozenset({"driver_too_old", "driver_missing", "container_no_device"})
_ARCH_LAYERS = frozenset({"driver", "device", "cuda"})


@cache
def _compat(name: str) -> dict[str, Any]:
    """A bundled table of resources/compat/ (the same files core/knowledge reads)."""
    folder = RESOURCES.joinpath("compat")
    return dict(json.loads(folder.joinpath(name).read_text(encoding="utf-8")))


def _numbers(text: str) -> tuple[int, ...] | None:
    found = re.match(r"^([0-9]{1,4}(?:\.[0-9]{1,4}){0,3})", text.strip())
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def ort_build_majors(version: str) -> tuple[int, int] | None:
    """(CUDA major, cuDNN major) of the PyPI GPU build of an ONNX Runtime version, from
    resources/compat/ort_releases.json (the most specific row: 1.18.1 before 1.18)."""
    wanted = _numbers(version)
    if not wanted:
        return None
    best: tuple[int, int] | None = None
    best_length = 0
    for row in _compat("ort_releases.json")["releases"]:
        key = _numbers(str(row["release"])) or ()
        padded = wanted + (0,) * max(0, len(key) - len(wanted))
        if key and padded[: len(key)] == key and len(key) > best_length:
            best, best_length = (int(row["cuda_major"]), int(row["cudnn_major"])), len(key)
    return best


def required_majors(facts: LogFacts) -> tuple[int | None, int | None]:
    """The CUDA and cuDNN majors the build needs: stated by ONNX Runtime, else from its version."""
    cuda, cudnn = facts.required_cuda_major, facts.required_cudnn_major
    for version in facts.ort_versions:
        majors = ort_build_majors(version)
        if majors is not None:
            cuda, cudnn = cuda or majors[0], cudnn or majors[1]
    return cuda, cudnn


def driver_too_old_for(driver: str, cuda_major: int) -> bool | None:
    """True when ``driver`` is older than every OS's minimum for ``cuda_major`` (resources/
    compat/cuda_driver.json); None when unknown."""
    have = _numbers(driver)
    if have is None:
        return None
    minimums = [
        _numbers(str(row[system]))
        for row in _compat("cuda_driver.json")["minimum_driver"]
        if int(row["cuda_major"]) == cuda_major
        for system in ("linux", "windows")
        if row.get(system)
    ]
    known = [minimum for minimum in minimums if minimum]
    if not known:
        return None
    return all(have < minimum for minimum in known)


def _log_facts() -> dict[str, Any]:
    return _compat("log_facts.json")


def compute_capability(gpu_name: str) -> str | None:
    """The compute capability of a GPU named in a log (resources/compat/log_facts.json)."""
    for row in _log_facts()["gpus"]:
        if re.search(str(row["pattern"]), gpu_name, re.IGNORECASE):
            return str(row["cc"])
    return None


def too_new_for(facts: LogFacts) -> tuple[str, str, tuple[int, int]] | None:
    """(GPU, its compute capability, the CUDA version) when the newest CUDA the program was
    built with predates the GPU (it cannot hold kernels for it), else None."""
    if not facts.cuda_versions:
        return None
    newest = max(facts.cuda_versions)
    for gpu in facts.gpu_names:
        cc = compute_capability(gpu)
        first = _log_facts()["first_cuda_for_cc"].get(cc or "")
        if first is None:
            continue
        needed = tuple(int(part) for part in str(first).split("."))
        if newest < needed:
            return gpu, str(cc), newest
    return None


def version_rules(
    tallies: Mapping[str, _Scaled],
    facts: LogFacts,
    context_lines: dict[str, list[LogLine]],
    add: Add,
) -> None:
    """Let versions named in the log decide between candidates of a failure it shows."""
    layers = {str(layer_of(cause)) for cause in tallies}
    cuda_needed, cudnn_needed = required_majors(facts)
    lines = [*context_lines.get("ort_version", []), *context_lines.get("requirement", [])]
    if layers & _CUDA_STACK:
        seen_cudnn = facts.cudnn_majors_seen
        if cudnn_needed is not None and seen_cudnn and cudnn_needed not in seen_cudnn:
            quoted = [*lines, *context_lines.get("cudnn_version", [])]
            add("cudnn_major_mismatch", 0.85, quoted, "rule.cudnn_version_contradicts_build")
        seen_cuda = facts.cuda_majors_seen
        if cuda_needed is not None and seen_cuda and cuda_needed not in seen_cuda:
            quoted = [*lines, *context_lines.get("cuda_major", [])]
            add("cuda_major_mismatch", 0.8, quoted, "rule.cuda_version_contradicts_build")
    arch = too_new_for(facts) if layers & _ARCH_LAYERS else None
    if arch is not None:
        quoted = [*context_lines.get("gpu_name", []), *context_lines.get("cuda_version", [])]
        add("unsupported_arch", 0.8, quoted, "rule.gpu_newer_than_build")
    if not (set(tallies) & _DRIVER_CAUSES) or cuda_needed is None:
        return
    for driver in facts.driver_versions:
        verdict = driver_too_old_for(driver, cuda_needed)
        driver_lines = context_lines.get("driver_version", [])
        if verdict is True:
            add("driver_too_old", 0.85, [*driver_lines, *lines], "rule.driver_older_than_build")
        elif verdict is False and "driver_too_old" in tallies:
            # The driver is new enough for the build: "insufficient driver" means no driver
            # library reached the program (a container without it injected, a broken install).
            tallies["driver_too_old"].scale = 0.4
            add("container_no_device", 0.5, driver_lines, "rule.driver_new_enough")
