"""EnvironmentSnapshot: every fact collected, frozen; None where a fact could not be collected."""

from __future__ import annotations

from dataclasses import dataclass, field

from fallback_doctor.core.model.facts.device import DeviceFacts
from fallback_doctor.core.model.facts.driver import DriverFacts
from fallback_doctor.core.model.facts.inference import InferenceFacts
from fallback_doctor.core.model.facts.libraries import LibraryFacts
from fallback_doctor.core.model.facts.logs import LogFacts
from fallback_doctor.core.model.facts.native import NativeFacts
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.platform import PlatformFacts
from fallback_doctor.core.model.facts.process import ProcessFacts
from fallback_doctor.core.model.facts.python_env import PythonEnvFacts
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.facts.torch import TorchFacts


@dataclass(frozen=True)
class CollectorOutcome:
    """How one collector went: fine, or "could not collect: why"."""

    name: str
    ok: bool
    error: str | None
    duration_ms: float
    outside: str | None = None
    """Its probe was ended from outside the tool, twice (core/readers/probes/outside.py)."""


@dataclass(frozen=True)
class EnvironmentSnapshot:
    """The facts about one target, collected once, then only read."""

    target: TargetFacts | None = None
    process: ProcessFacts | None = None
    log: LogFacts | None = None
    platform: PlatformFacts | None = None
    python: PythonEnvFacts | None = None
    onnxruntime: OrtFacts | None = None
    torch: TorchFacts | None = None
    driver: DriverFacts | None = None
    device: DeviceFacts | None = None
    libraries: LibraryFacts | None = None
    native: NativeFacts | None = None
    inference: InferenceFacts | None = None
    """The test inference (CPU baseline, GPU retry), or why none was run."""
    environment: dict[str, str] = field(default_factory=dict)
    """The environment variables that matter for loading (allowlisted), as the target sees them."""
    collectors: tuple[CollectorOutcome, ...] = ()
