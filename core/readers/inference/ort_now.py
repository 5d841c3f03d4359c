"""What newer ONNX Runtime releases tell a probe directly: placement, devices, automatic selection.

- :class:`PlacedNodes`: the nodes one provider got, from
  ``InferenceSession.get_provider_graph_assignment_info()`` with the session option
  ``session.record_ep_graph_assignment_info`` = "1" (onnxruntime 1.31.1 has it), or counted
  from the VERBOSE "Node placements" lines on older releases (1.23.2). ``SessionRun.nodes_source``
  says which of the two gave the numbers.
- :class:`EpDevice`: one entry of ``onnxruntime.get_ep_devices()`` (an ``OrtEpDevice`` and its
  ``OrtHardwareDevice``), what automatic provider selection chooses from.
- :class:`SelectionRun`: a session made the application's automatic way
  (``SessionOptions.set_provider_selection_policy(PREFER_GPU)`` or ``add_provider_for_devices``),
  with what it picked and whether ONNX Runtime said anything. On a machine without a usable GPU
  the policy picks the CPU and prints nothing at all: that silence is a finding.

By hand (onnxruntime 1.31.1)::

    python -c "import onnxruntime as o; print([(d.ep_name, d.device.type) for d in o.get_ep_devices()])"
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PlacedNodes:
    """The nodes one execution provider got in a session."""

    provider: str
    nodes: int
    subgraphs: int = 0
    """How many assigned subgraphs the API listed for this provider (0 when counted from the log)."""
    op_types: dict[str, int] = field(default_factory=dict)
    """Nodes per operator type ("MatMul": 12): which kinds of nodes stayed on the CPU."""
    names: tuple[str, ...] = ()
    """The first node names (bounded), as ONNX Runtime names them."""


@dataclass(frozen=True)
class EpDevice:
    """One ``OrtEpDevice`` from ``onnxruntime.get_ep_devices()``."""

    ep_name: str
    ep_vendor: str = ""
    device_type: str = ""
    """"CPU", "GPU" or "NPU" (``OrtHardwareDevice.type``)."""
    device_vendor: str = ""
    vendor_id: int | None = None
    device_id: int | None = None


@dataclass(frozen=True)
class RegisteredSelection:
    """The same automatic selection after ``register_execution_provider_library`` with the CUDA
    provider's own library: automatic selection only chooses among providers registered with the
    environment, and onnxruntime-gpu does not register its CUDA provider by itself (this project's
    GPU run on an H200, docs/gpu-run.md: PREFER_GPU picked the CPU on a working stack)."""

    library: str
    ep_devices: tuple[EpDevice, ...] = ()
    """What ``get_ep_devices()`` listed once the library was registered."""
    active_providers: tuple[str, ...] = ()
    nodes_per_provider: dict[str, int] = field(default_factory=dict)
    nodes_source: str = ""
    error: str | None = None
    """Why the library did not register or the session was not made (ONNX Runtime's words)."""


@dataclass(frozen=True)
class SelectionRun:
    """A session created the automatic way, and what it picked."""

    mode: str
    """"policy" (set_provider_selection_policy) or "devices" (add_provider_for_devices)."""
    policy: str = ""
    """The policy asked for ("PREFER_GPU"), or the devices handed over, in words."""
    supported: bool = True
    """False where this ONNX Runtime has no automatic selection (then ``error`` says why)."""
    ep_devices: tuple[EpDevice, ...] = ()
    """What ``get_ep_devices()`` listed when the session was made."""
    active_providers: tuple[str, ...] = ()
    nodes_per_provider: dict[str, int] = field(default_factory=dict)
    nodes_source: str = ""
    messages: tuple[str, ...] = ()
    """ONNX Runtime's warning and error lines while the session was made (often none at all)."""
    silent: bool = False
    """No GPU provider picked and not one warning: the silent fallback of automatic selection."""
    error: str | None = None
    registered: RegisteredSelection | None = None
    """The same selection with the CUDA provider's library registered, tried when no GPU provider
    was picked (None where this onnxruntime cannot register libraries or has no CUDA provider)."""
