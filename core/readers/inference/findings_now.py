"""Findings from what newer ONNX Runtime releases report: automatic selection, get_device(), plugins.

- ``inference.auto_select_silent``: a session made the automatic way
  (``SessionOptions.set_provider_selection_policy(PREFER_GPU)`` or ``add_provider_for_devices``)
  got only the CPU provider and ONNX Runtime printed nothing at all (measured on onnxruntime-gpu
  1.31.1 and 1.23.2 without a usable GPU). ``get_ep_devices()`` is quoted: it lists what the policy
  could choose from. Automatic selection only chooses among providers registered with the
  environment, and onnxruntime-gpu does not register its CUDA provider by itself: on an H200 with a
  working stack (docs/gpu-run.md) PREFER_GPU picked the CPU while the explicit provider list ran every
  node on CUDA. The probe then tries the same selection with the CUDA provider's library registered.
- ``inference.auto_select_needs_registration``: the same silence on a stack whose explicit provider
  list ran on the GPU: only the way of choosing is at fault (info, not a cause of the fallback).
- ``inference.get_device_misleading``: ``onnxruntime.get_device()`` said "GPU" while the GPU retry ran
  on the CPU: it names the build, never the hardware (microsoft/onnxruntime#8839, #20122).
- ``inference.plugin_ep_failed``: a plugin execution provider's library (an ``onnxruntime-ep-*``
  package, or the bundled CUDA plugin) did not load through ``register_execution_provider_library``.

By hand: ``python -c "import onnxruntime as o; print([(d.ep_name, d.device.type) for d in
o.get_ep_devices()])"``.
"""

from __future__ import annotations

from fallback_doctor.core.language.evidence_text import code_step, said
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.finding_spec import FindingSpec, Role
from fallback_doctor.core.model.result import Finding, Layer, Severity, Words
from fallback_doctor.core.readers.inference.ort_now import EpDevice, SelectionRun
from fallback_doctor.core.readers.inference.result import ProbeResult, Verdict
from fallback_doctor.core.readers.inference.run_words import nodes_source_words

FINDINGS: tuple[FindingSpec, ...] = (
    FindingSpec(
        "inference.auto_select_silent", Cause.UNKNOWN, Layer.PROBE, Severity.WARNING, role=Role.CAUSE
    ),
    FindingSpec(
        "inference.auto_select_needs_registration", Cause.UNKNOWN, Layer.PROBE, Severity.INFO, role=Role.CAUSE
    ),
    FindingSpec(
        "inference.get_device_misleading", Cause.UNKNOWN, Layer.PACKAGE, Severity.INFO, role=Role.CONTEXT
    ),
    FindingSpec(
        "inference.plugin_ep_failed", Cause.UNKNOWN, Layer.PACKAGE, Severity.WARNING, role=Role.CAUSE
    ),
)
"""The findings this module makes: each id with its cause, layer, severity and role
(core/judgement/registry.py lists every module that declares)."""


_DEVICES_BY_HAND = (
    'python -c "import os, onnxruntime as o; o.register_execution_provider_library('
    "'CUDAExecutionProvider', os.path.join(os.path.dirname(o.__file__), 'capi', "
    "'libonnxruntime_providers_cuda.so')); "
    'print([(d.ep_name, str(d.device.type)) for d in o.get_ep_devices()])"'
)
"""The CUDA provider registered, then what automatic selection can choose from: on a working stack
a CUDAExecutionProvider device on the GPU (seen on the H200, docs/gpu-run.md)."""


def devices_words(devices: tuple[EpDevice, ...]) -> Words:
    """get_ep_devices() in words: "CPUExecutionProvider on the CPU (AMD 4130)"."""
    if not devices:
        return Words("evidence.no_device")
    listed = [
        Words(
            "evidence.ep_on_device",
            {
                "provider": d.ep_name,
                "device": d.device_type or "?",
                "vendor": f"{d.device_vendor or d.ep_vendor or '?'} {d.vendor_id}",
            },
        )
        for d in devices
    ]
    said = listed[0]
    for more in listed[1:]:  # "a; b; c": joined as get_ep_devices() lists them
        said = Words("evidence.joined_two", {"first": said, "second": more})
    return said


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
                params={
                    "version": result.runtime.ort_version or "?",
                    "verdict": Words(f"evidence.verdict.{result.verdict.value}"),
                },
                evidence=(
                    said(
                        "evidence.name",
                        value="GPU",
                        source_id="evidence.source.the_probe",
                        name="onnxruntime.get_device()",
                    ),
                ),
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
                params={"entry": _did_not_load(entry)},
                evidence=(
                    said(
                        "evidence.name",
                        value=entry,
                        source_id="evidence.source.the_probe",
                        name="register_execution_provider_library",
                    ),
                ),
            )
        )
    return findings


def _did_not_load(entry: str) -> Words:
    """A plugin library that did not load, as the probe child wrote it ("NAME: PATH did not load:
    ERROR", core/readers/probes/python_child/ort_now.py), in words: its name and error stay as written."""
    what, _, error = entry.partition(" did not load: ")
    return Words("evidence.did_not_load", {"what": what, "error": error})


_REGISTERED_GPU = ("CUDAExecutionProvider", "TensorrtExecutionProvider")

#: The fix a registered CUDA provider needs in the application (Python), before any session.
REGISTER_CODE = (
    "import os, onnxruntime\n"
    "onnxruntime.register_execution_provider_library(\n"
    '    "CUDAExecutionProvider",\n'
    '    os.path.join(os.path.dirname(onnxruntime.__file__), "capi", "libonnxruntime_providers_cuda.so"),\n'
    ")"
)


def _registration_words(selection: SelectionRun) -> Words | str:
    """What the same selection did once the CUDA provider's library was registered, in words."""
    registered = selection.registered
    if registered is None:
        return Words("evidence.registration_not_tried")
    if registered.error:
        return f"{registered.error}"
    picked = ", ".join(registered.active_providers) or Words("evidence.none")
    return Words(
        "evidence.registration_picked", {"providers": picked, "devices": devices_words(registered.ep_devices)}
    )


def _silent(result: ProbeResult, selection: SelectionRun) -> Finding:
    """Automatic selection picked only the CPU without a word. Where the explicit provider list ran
    on the GPU (the stack works) only the way of choosing is at fault: the CUDA provider must be
    registered with the environment (info); otherwise it is one more sign of the fallback."""
    evidence = [
        said("evidence.automatic_selection", value=selection.policy, source_id="evidence.source.the_probe"),
        said(
            "evidence.providers_picked",
            value=", ".join(selection.active_providers),
            otherwise="evidence.none",
        ),
        said(
            "evidence.name",
            "evidence.as_said",
            name="get_ep_devices()",
            said=devices_words(selection.ep_devices),
        ),
        said("evidence.ort_said", "evidence.nothing_said"),
    ]
    if selection.nodes_per_provider:
        counts = [
            Words("evidence.count_on", {"count": n, "provider": p})
            for p, n in selection.nodes_per_provider.items()
        ]
        evidence.append(
            said(
                "evidence.nodes",
                "evidence.as_said",
                source_id="evidence.source.where" if selection.nodes_source else None,
                said=counts,
                where=nodes_source_words(selection.nodes_source),
            )
        )
    evidence.append(
        said("evidence.after_registration", "evidence.as_said", said=_registration_words(selection))
    )
    as_is = result.as_is
    stack_works = as_is is not None and as_is.gpu is not None and as_is.gpu.verdict == Verdict.GPU_ACTIVE
    registered = selection.registered
    proven = registered is not None and any(p in _REGISTERED_GPU for p in registered.active_providers)
    steps = (code_step(REGISTER_CODE, "remedy.code_where.first_session"),) if proven else ()
    return make_finding(
        "inference.auto_select_needs_registration" if stack_works else "inference.auto_select_silent",
        Cause.UNKNOWN,
        Layer.PROBE,
        Severity.INFO if stack_works else Severity.WARNING,
        params={
            "policy": selection.policy,
            "runtime": f"ONNX Runtime {result.runtime.ort_version or '?'}",
            "devices": devices_words(selection.ep_devices),
            "active": ", ".join(selection.active_providers) or Words("evidence.none"),
            "registered": _registration_words(selection),
        },
        evidence=tuple(evidence),
        commands=(_DEVICES_BY_HAND,),
        steps=steps,
    )
