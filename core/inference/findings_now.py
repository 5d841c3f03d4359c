"""Findings from what newer ONNX Runtime releases report: automatic selection, get_device(), plugins.

- ``inference.auto_select_silent``: a session made the automatic way
  (``SessionOptions.set_provider_selection_policy(PREFER_GPU)`` or ``add_provider_for_devices``)
  got only the CPU provider and ONNX Runtime printed nothing at all (measured on onnxruntime-gpu
  1.31.1 and 1.23.2 without a usable GPU). ``get_ep_devices()`` is quoted: it lists what the policy
  could choose from.
- ``inference.get_device_misleading``: ``onnxruntime.get_device()`` said "GPU" while the GPU retry ran
  on the CPU: it names the build, never the hardware (microsoft/onnxruntime#8839, #20122).
- ``inference.plugin_ep_failed``: a plugin execution provider's library (an ``onnxruntime-ep-*``
  package, or the bundled CUDA plugin) did not load through ``register_execution_provider_library``.

By hand: ``python -c "import onnxruntime as o; print([(d.ep_name, d.device.type) for d in
o.get_ep_devices()])"``.
"""

from __future__ import annotations

from fallback_doctor.core.causes import Cause
from fallback_doctor.core.inference.ort_now import EpDevice, SelectionRun
from fallback_doctor.core.inference.result import ProbeResult, Verdict
from fallback_doctor.core.model import Evidence, Finding, Layer, Severity
from fallback_doctor.core.texts import make_finding

_DEVICES_BY_HAND = (
    'python -c "import onnxruntime as o; '
    'print([(d.ep_name, str(d.device.type)) for d in o.get_ep_devices()])"'
)


def devices_words(devices: tuple[EpDevice, ...]) -> str:
    """get_ep_devices() in words: "CPUExecutionProvider on the CPU (AMD 4130)"."""
    if not devices:
        return "no device at all"
    return "; ".join(
        f"{d.ep_name} on the {d.device_type or '?'} ({d.device_vendor or d.ep_vendor or '?'} {d.vendor_id})"
        for d in devices
    )


def now_findings(result: ProbeResult) -> list[Finding]:
    """The automatic-selection, get_device() and plugin findings of one test inference."""
    findings: list[Finding] = []
    as_is = result.as_is
    selection = as_is.selection if as_is is not None else None
    if selection is not None and selection.supported and selection.silent:
        findings.append(_silent(result, selection))
    if result.runtime.get_device == "GPU" and result.verdict in (Verdict.FELL_BACK_TO_CPU, Verdict.FAILED):
        findings.append(
            make_finding(
                "inference.get_device_misleading",
                Cause.UNKNOWN,
                Layer.PACKAGE,
                Severity.INFO,
                params={"version": result.runtime.ort_version or "?", "verdict": result.verdict.value},
                evidence=(Evidence("onnxruntime.get_device()", "GPU", source="the probe"),),
            )
        )
    failed = [entry for entry in result.runtime.plugin_eps if " did not load: " in entry]
    for entry in failed:
        findings.append(
            make_finding(
                "inference.plugin_ep_failed",
                Cause.UNKNOWN,
                Layer.PACKAGE,
                Severity.WARNING,
                params={"entry": entry},
                evidence=(Evidence("register_execution_provider_library", entry, source="the probe"),),
            )
        )
    return findings


def _silent(result: ProbeResult, selection: SelectionRun) -> Finding:
    evidence = [
        Evidence("automatic selection", selection.policy, source="the probe"),
        Evidence("providers picked", ", ".join(selection.active_providers) or "none"),
        Evidence("get_ep_devices()", devices_words(selection.ep_devices)),
        Evidence("ONNX Runtime said", "nothing (no warning, no error)"),
    ]
    if selection.nodes_per_provider:
        counts = ", ".join(f"{n} on {p}" for p, n in selection.nodes_per_provider.items())
        evidence.append(Evidence("nodes", counts, source=selection.nodes_source))
    return make_finding(
        "inference.auto_select_silent",
        Cause.UNKNOWN,
        Layer.PROBE,
        Severity.WARNING,
        params={
            "policy": selection.policy,
            "runtime": f"ONNX Runtime {result.runtime.ort_version or '?'}",
            "devices": devices_words(selection.ep_devices),
            "active": ", ".join(selection.active_providers) or "none",
        },
        evidence=tuple(evidence),
        commands=(_DEVICES_BY_HAND,),
    )
