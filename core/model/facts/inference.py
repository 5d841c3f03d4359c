"""Facts from a test inference: the probe's result, kept as it came (see core/readers/inference/result.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # facts stay light to import; the result module is loaded when a probe runs
    from fallback_doctor.core.readers.inference.result import ProbeResult


@dataclass(frozen=True)
class InferenceFacts:
    """The test inference of one target: the result, or why none was run."""

    result: ProbeResult | None = None
    skipped: str | None = None
    """Why no test inference was run (``diagnose --quick``, no ONNX Runtime found, ...)."""
    verdict: str | None = None
    """The probe's verdict (gpu_active, fell_back_to_cpu, failed …), kept here so the document has it."""
    gpu_verified: bool = False
    """True only when an inference really ran on the GPU."""
    model_description: str | None = None
    """The model in words ("encoder.onnx: 2 inputs, 154 nodes, 3.76 GFLOPs per batch")."""
