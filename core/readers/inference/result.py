"""The shape of a test-inference probe's request and result (shared by the Python and C-API probes).

Both probes (``python_probe`` for a Python application, ``capi`` for a native one such as the
Bareun server) take a :class:`ProbeRequest` (as JSON) and produce a :class:`ProbeResult` (as
JSON). ``ProbeResult.from_json(data)`` reads it back; ``to_json()`` writes it. Everything here is
plain data: lists in JSON become tuples, missing keys take their defaults, unknown keys are
ignored, so an older or partial result still reads.

JSON shape of a result (keys of the dataclasses below, nested)::

    {"schema": 1, "kind": "python" | "capi", "completed": true,
     "runtime": {"ort_version": "1.23.2", "ort_location": "...", ...},
     "model": {"path": "...", "sha256": "...", "inputs": [{"name", "dtype", "shape"}], ...},
     "cpu": {"stage": "inference_ran", "latency": {...}, "outputs": [...], ...},
     "strategies": [{"name": "as_is", "stage": "provider_created", "gpu": {...}, ...}],
     "failure": null | {"kind": "crash", "sentence": "...", "phase": "gpu.session", ...},
     "phases": [{"name": "cpu.session", "start_s": 0.1, "end_s": 0.3, "ok": true}],
     "cost": {"process_start_s": ..., "import_s": ..., ...},
     "notes": ["..."], "log_excerpt": ["[W:onnxruntime:...] ..."]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fallback_doctor.core.model.result import Words
from fallback_doctor.core.readers.inference.jsonable import from_jsonable, to_jsonable
from fallback_doctor.core.readers.inference.ort_now import EpDevice, PlacedNodes, SelectionRun

SCHEMA_VERSION = 1


class Stage(StrEnum):
    """How far a GPU attempt got; each stage implies the ones before it (ordered)."""

    NOTHING = "nothing"
    """Not even ONNX Runtime itself loaded (import failed / library not found)."""
    RUNTIME_LOADED = "runtime_loaded"
    """ONNX Runtime loaded (import onnxruntime / the C library opened, API obtained)."""
    LIBRARIES_LOADED = "libraries_loaded"
    """The GPU provider's own library and its CUDA / cuDNN dependencies loaded."""
    PROVIDER_CREATED = "provider_created"
    """The CUDA (or TensorRT) execution provider was created (a device was found)."""
    SESSION_CREATED = "session_created"
    """A session was created with the GPU provider active."""
    INFERENCE_ON_GPU = "inference_on_gpu"
    """An inference ran with the GPU provider active and nodes placed on it."""


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)


def stage_rank(stage: Stage | str) -> int:
    """The position of a stage in :data:`STAGE_ORDER` (higher is further)."""
    return STAGE_ORDER.index(Stage(stage))


class Verdict(StrEnum):
    """What the GPU retry showed."""

    GPU_ACTIVE = "gpu_active"
    """The GPU provider was active and the inference ran on it."""
    FELL_BACK_TO_CPU = "fell_back_to_cpu"
    """A session was created and ran, but only on the CPU provider."""
    FAILED = "failed"
    """No session could be created / run at all (an error, a crash)."""
    NOT_RUN = "not_run"
    """The GPU retry was not attempted (skipped, or the probe stopped before it)."""


class StrategyName(StrEnum):
    """The library strategies a fix would use, tried in this order."""

    AS_IS = "as_is"
    """The application's environment exactly as it is."""
    PRELOAD_DLLS = "preload_dlls"
    """After ``onnxruntime.preload_dlls()`` (Python, ORT 1.21+)."""
    LIB_PATH_FIRST = "lib_path_first"
    """With the application's ``libPath`` (or a given directory) first on the loader path."""


class FailureKind(StrEnum):
    """How a probe child failed to deliver a result."""

    CRASH = "crash"
    """Killed by a signal (SIGSEGV, SIGABRT, ...)."""
    TIMEOUT = "timeout"
    """Did not finish in time; its process group was killed."""
    EXIT = "exit"
    """Exited with a non-zero status without a result."""
    GARBAGE = "garbage"
    """Its standard output was not the expected JSON lines."""
    FLOOD = "flood"
    """It wrote more output than we keep."""
    START = "start"
    """It could not be started (interpreter or library missing)."""
    OUTSIDE = "outside"
    """Ended from outside, twice: a signal the tool did not send, or a machine too busy to run it
    in its time (core/readers/probes/outside.py). Says nothing about the libraries."""
    UNUSABLE_MODEL = "unusable_model"
    """The model cannot be run this way (unsupported input type, unreadable file, ...)."""
    ERROR = "error"
    """The probe reported an error itself (e.g. ONNX Runtime could not be imported)."""


@dataclass(frozen=True)
class ProbeRequest:
    """What the parent asks a probe child to do (serialised as JSON on its command line/stdin)."""

    model: str
    """Path to the .onnx model."""
    runs: int = 20
    """Timed runs per measured session (with ``steady``: the most)."""
    steady: bool = False
    """Stop the timed runs once the median is known within 2 % (at least 5 runs): the default of
    ``diagnose`` and the wizard. False: exactly ``runs`` (a number the technician asked for)."""
    warmup: int = 3
    """Untimed runs before the timed ones."""
    dims: dict[str, int] = field(default_factory=dict)
    """Values for symbolic dimensions by name (e.g. {"batch": 16, "seq": 128})."""
    default_dim: int = 1
    """The value of a symbolic dimension not named in ``dims``."""
    shapes: dict[str, list[int]] = field(default_factory=dict)
    """The concrete shape of each input by name, decided by the parent
    (core/readers/inference/model_inputs.py);
    an input not named here (an older parent) is shaped from ``dims`` and ``default_dim``."""
    input_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Integer inputs by name: values drawn from [low, high) (token ids below the vocabulary size).
    Integer inputs not named: names with "mask" get 1, "type"/"segment" 0, others [0, 100)."""
    providers: tuple[str, ...] = ("CUDAExecutionProvider", "CPUExecutionProvider")
    """The providers of the GPU retry, in order (TensorRT first when the target uses it)."""
    cpu_baseline: bool = True
    gpu_retry: bool = True
    strict: bool = True
    """Also run a strict session (``session.disable_cpu_ep_fallback`` = "1")."""
    strategy: StrategyName = StrategyName.AS_IS
    """The strategy this child run implements (``lib_path_first`` is done by the parent's env)."""
    threads: int = 2
    """Intra-op thread cap for the probe's sessions (it may run beside a production server)."""
    nice: int = 10
    """Priority decrease for the probe process (0 keeps it)."""
    tolerance_abs: float = 1e-3
    tolerance_rel: float = 1e-3
    """Outputs equal when |gpu - cpu| <= abs + rel * |cpu| everywhere."""
    baseline_dir: str | None = None
    """Where the CPU baseline's outputs are stored (.npy) / read back for comparison across children."""
    seed: int = 0
    """Seed of the generated input data."""
    trt_cache_dir: str | None = None
    """TensorRT engine cache directory (TensorRT first only)."""
    selection: str | None = "PREFER_GPU"
    """Also try automatic provider selection, as is: a policy name (``PREFER_GPU``, the
    ``OrtExecutionProviderDevicePolicy`` member) or "devices" (``add_provider_for_devices`` with
    the GPU devices ``get_ep_devices()`` lists); None skips it. Where ONNX Runtime has no automatic
    selection (before 1.22) the probe says so."""
    test_mode: str | None = None
    """TEST ONLY: "crash", "hang", "flood", "garbage" make the child misbehave on purpose."""

    def to_json(self) -> dict[str, Any]:
        """The request as a JSON-ready dict."""
        return to_jsonable(self)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeRequest:
        """Read a request back from its JSON dict."""
        return from_jsonable(cls, data)


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output as declared: dtype like "float32", dims as ints or symbolic names."""

    name: str
    dtype: str
    shape: tuple[int | str | None, ...] = ()
    resolved_shape: tuple[int, ...] = ()
    """The shape actually used (symbolic dims replaced), for inputs."""


@dataclass(frozen=True)
class ModelRun:
    """The model the probe ran."""

    path: str
    sha256: str = ""
    size_bytes: int = 0
    inputs: tuple[TensorInfo, ...] = ()
    outputs: tuple[TensorInfo, ...] = ()
    batch_size: int | None = None
    """The first dimension of the first input, used for throughput in items per second."""


@dataclass(frozen=True)
class RuntimeInfo:
    """The ONNX Runtime the probe used (the application's own)."""

    ort_version: str | None = None
    ort_location: str | None = None
    """The onnxruntime package folder (Python) or library file (C API)."""
    interpreter: str | None = None
    """sys.executable for a Python probe."""
    python_version: str | None = None
    numpy_version: str | None = None
    available_providers: tuple[str, ...] = ()
    """Compiled in (get_available_providers): not proof that they can run."""
    cuda_version: str | None = None
    """onnxruntime.cuda_version where the package has it."""
    build_info: str | None = None
    pid: int | None = None
    get_device: str | None = None
    """onnxruntime.get_device(): names the build ("GPU" for any GPU build), never the hardware."""
    ep_devices: tuple[EpDevice, ...] = ()
    """onnxruntime.get_ep_devices() (1.22+ with automatic selection), empty where absent."""
    log_source: str = ""
    """Where ONNX Runtime's messages were read: "logger callback and stderr" or "stderr"."""
    plugin_eps: tuple[str, ...] = ()
    """Plugin execution providers registered or found (bundled CUDA plugin, onnxruntime-ep-*)."""


@dataclass(frozen=True)
class LatencyStats:
    """Latency of timed runs in milliseconds, and throughput."""

    runs: int
    warmup: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    batches_per_s: float
    items_per_s: float | None = None
    """batches_per_s times the batch size, where the batch size is known."""


@dataclass(frozen=True)
class OutputDigest:
    """One output tensor, summarised: enough to say "same as the CPU" without shipping it."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    sha256: str
    """Of the raw bytes (C order)."""
    mean: float | None = None
    abs_max: float | None = None
    head: tuple[float, ...] = ()
    """The first few values (flattened)."""


@dataclass(frozen=True)
class OutputComparison:
    """GPU outputs against the CPU baseline's."""

    equal: bool
    """Within tolerance everywhere (and same names, dtypes, shapes)."""
    bitwise_equal: bool
    max_abs_diff: float | None
    max_rel_diff: float | None
    tolerance_abs: float
    tolerance_rel: float
    detail: str = ""
    """Which output differs and how, or why no comparison was possible."""


@dataclass(frozen=True)
class StrictRun:
    """The strict session (``session.disable_cpu_ep_fallback`` = "1"): a fallback becomes an error."""

    attempted: bool
    session_created: bool = False
    error: str | None = None
    """ONNX Runtime's own error message, quoted."""


@dataclass(frozen=True)
class GpuMemory:
    """GPU memory held by the probe process (NVML, per process), or why it is unknown."""

    probe_bytes: int | None = None
    others_bytes: int | None = None
    """Memory held by other processes (e.g. the production server) on the same GPU(s)."""
    total_bytes: int | None = None
    note: str = ""
    """Why a value is missing ("pynvml is not installed in the application's environment", ...)."""


@dataclass(frozen=True)
class GpuProcess:
    """One process NVML lists on a GPU, with the memory it holds (None: the driver does not say)."""

    pid: int
    gpu_index: int
    used_mib: float | None = None


@dataclass(frozen=True)
class GpuOccupancy:
    """Who already held GPU memory before the probe started (NVML's process list), or why unknown.

    By hand: ``nvidia-smi --query-compute-apps=pid,used_memory --format=csv``.
    """

    read: bool = False
    """Whether NVML's process list could be read at all."""
    processes: tuple[GpuProcess, ...] = ()
    note: str = ""
    """Why it could not be read ("NVML: the NVIDIA driver's library … is not installed")."""

    @property
    def total_mib(self) -> float:
        """The memory the listed processes hold, in MiB (unknown amounts count 0)."""
        return float(sum(process.used_mib or 0.0 for process in self.processes))


@dataclass(frozen=True)
class SessionRun:
    """One measured session: the CPU baseline, or a GPU retry."""

    stage: Stage = Stage.NOTHING
    requested_providers: tuple[str, ...] = ()
    active_providers: tuple[str, ...] = ()
    """session.get_providers(): what the session really uses."""
    verdict: Verdict = Verdict.NOT_RUN
    nodes_per_provider: dict[str, int] = field(default_factory=dict)
    """Counted from ONNX Runtime's own VERBOSE log (node placements); empty where not printed."""
    nodes_source: str = ""
    """Where the node counts come from: "get_provider_graph_assignment_info" (exact, 1.31+),
    "verbose log" (older releases), or why there are none."""
    placement: tuple[PlacedNodes, ...] = ()
    """Per provider: nodes, operator types and names (from the API; counts only from the log)."""
    session_create_s: float | None = None
    latency: LatencyStats | None = None
    outputs: tuple[OutputDigest, ...] = ()
    comparison: OutputComparison | None = None
    strict: StrictRun | None = None
    gpu_memory: GpuMemory | None = None
    ort_messages: tuple[str, ...] = ()
    """ONNX Runtime's own warning/error lines from this session's creation and runs, quoted."""
    error: str | None = None
    """An exception from session creation or a run, quoted."""


@dataclass(frozen=True)
class StrategyResult:
    """One library strategy, graded by the furthest stage it reached."""

    name: StrategyName
    stage: Stage = Stage.NOTHING
    description: str = ""
    """What it did ("onnxruntime.preload_dlls() before creating the session", ...)."""
    gpu: SessionRun | None = None
    skipped: str | None = None
    skipped_words: Words | None = None
    """``skipped`` as the evidence catalogue's words (resources/texts/evidence/inference.json)."""
    """Why it was not tried (e.g. "preload_dlls() needs ONNX Runtime 1.21 or later")."""
    failure: ProbeFailure | None = None
    """How its child failed, when it ran in its own child and that child failed."""
    environment: dict[str, str] = field(default_factory=dict)
    """The environment changes it made (LD_LIBRARY_PATH=...)."""
    selection: SelectionRun | None = None
    """The automatic provider selection tried the application's way (as is only)."""


@dataclass(frozen=True)
class ProbeFailure:
    """A probe child that did not deliver a result, in words, with what it left behind."""

    kind: FailureKind
    sentence: str
    """e.g. "the probe crashed with SIGSEGV while creating the CUDA session"."""
    phase: str | None = None
    """The last phase started and not ended."""
    returncode: int | None = None
    signal: str | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    words: dict[str, Any] | None = None
    """``sentence`` as catalogue words ``{id, params}`` where core said it so (shown in the reader's
    language); None: the sentence is shown as written."""


@dataclass(frozen=True)
class PhaseMark:
    """One phase of the probe, seconds since the probe started (for the sampler's graph)."""

    name: str
    """e.g. "import", "cpu.session", "cpu.warmup", "cpu.timed", "gpu.session", "gpu.strict"."""
    start_s: float
    end_s: float | None = None
    ok: bool | None = None


@dataclass(frozen=True)
class ProbeCost:
    """What the probe itself costs, next to the model's latency (all seconds)."""

    process_start_s: float | None = None
    """From spawning the child to its first message."""
    import_s: float | None = None
    """import onnxruntime + numpy (Python) / loading the library (C API)."""
    cpu_session_create_s: float | None = None
    gpu_session_create_s: float | None = None
    total_s: float | None = None
    """The whole child run, as the parent measured it."""


@dataclass(frozen=True)
class ProbeOutput:
    """The end of one stream of one probe child, as it wrote it (for the bundle's probe/ files)."""

    name: str
    """e.g. "as_is.stdout.txt", "as_is.stderr.txt" (stderr with ONNX Runtime's captured fd 2)."""
    text: str


@dataclass(frozen=True)
class ProbeResult:
    """Everything one test inference produced (both probes produce this shape)."""

    kind: str = "python"
    """"python" or "capi"."""
    schema: int = SCHEMA_VERSION
    completed: bool = False
    """The probe ran to its end (its findings may still say the GPU was not used)."""
    runtime: RuntimeInfo = field(default_factory=RuntimeInfo)
    model: ModelRun | None = None
    cpu: SessionRun | None = None
    strategies: tuple[StrategyResult, ...] = ()
    failure: ProbeFailure | None = None
    phases: tuple[PhaseMark, ...] = ()
    cost: ProbeCost = field(default_factory=ProbeCost)
    notes: tuple[str, ...] = ()
    log_excerpt: tuple[str, ...] = ()
    """ONNX Runtime's stderr (captured at the file-descriptor level), trimmed to what matters."""
    series: dict[str, Any] | None = None
    """The sampler's series (GPU/CPU samples with phase marks), as its own JSON, when sampled."""
    gpu_before: GpuOccupancy | None = None
    """GPU memory other processes held before the probe started (read by the parent, NVML)."""
    outputs: tuple[ProbeOutput, ...] = ()
    """The end of each probe child's stdout and stderr (bounded), kept for a bundle."""

    @property
    def as_is(self) -> StrategyResult | None:
        """The "as is" strategy: what the application itself gets."""
        for strategy in self.strategies:
            if strategy.name == StrategyName.AS_IS:
                return strategy
        return None

    @property
    def verdict(self) -> Verdict:
        """The verdict of the GPU retry as is (what the application gets), NOT_RUN when absent."""
        as_is = self.as_is
        if as_is is None or as_is.gpu is None:
            return Verdict.NOT_RUN
        return as_is.gpu.verdict

    @property
    def best_strategy(self) -> StrategyResult | None:
        """The strategy that got furthest (the first one on a tie)."""
        best: StrategyResult | None = None
        for strategy in self.strategies:
            if best is None or stage_rank(strategy.stage) > stage_rank(best.stage):
                best = strategy
        return best

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        return to_jsonable(self)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeResult:
        """Read a result back from its JSON dict (missing keys default, unknown keys are ignored)."""
        return from_jsonable(cls, data)
