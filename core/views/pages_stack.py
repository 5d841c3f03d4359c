"""The stack page: five layers bottom-up, each with its state, what was found, what is missing, what
it needs, in words the wizard and report.html share (``layer_line``).

As the support FAQ draws it: GPU driver -> CUDA runtime -> cuDNN -> ONNX Runtime GPU provider ->
the application. Computed from the report document alone (Qt-free), so a bundle opened on another
machine draws the same stack. By hand, layer by layer: ``nvidia-smi``; ``ldconfig -p | grep -E
'libcudart|libcublas'``; ``ldconfig -p | grep libcudnn``; ``python -c "import onnxruntime as o;
print(o.__version__, o.get_available_providers())"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fallback_doctor.core.document.view import (
    Document,
    Finding,
    Report,
    as_dict,
    as_list,
    finding_of,
    view_of,
)
from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import find_profile, probe_of
from fallback_doctor.core.views.pages_log_stack import inspected_elsewhere, log_layer_parts, log_layers

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
"""For a layer's status (its worst finding), not for ordering findings."""

STACK_LAYERS: tuple[str, ...] = ("driver", "cuda", "cudnn", "onnxruntime", "application")
"""Bottom-up, as in the FAQ's diagram: GPU driver → CUDA runtime → cuDNN → ONNX Runtime → the application."""

_FINDING_LAYERS: dict[str, str] = {
    "driver": "driver",
    "device": "driver",
    "cuda": "cuda",
    "loader": "cuda",
    "cudnn": "cudnn",
    "tensorrt": "onnxruntime",
    "package": "onnxruntime",
    "resources": "onnxruntime",
    "config": "application",
    "probe": "application",
    "unknown": "application",
}

_CUDA_PREFIXES = (
    "libcudart",
    "libcublas",
    "libcurand",
    "libcufft",
    "libnvrtc",
    "libnvJitLink",
    "cudart64",
    "cublas",
)
_CUDNN_PREFIXES = ("libcudnn", "cudnn")

_ELSEWHERE = "installed elsewhere"
"""The evidence label (core/judgement/checks/resolution.py) of a library installed where the loader
does not look: the findings cuda.runtime_not_on_loader_path and cudnn.not_on_loader_path(.lazy) carry it."""


def _installed_elsewhere(findings: Sequence[Finding]) -> set[str]:
    """The file names of the libraries a layer's findings say are installed but not on the loader
    path (so the card says what the finding says, never "missing" for them)."""
    return {
        item.value.rsplit("/", 1)[-1]
        for finding in findings
        for item in finding.evidence
        if item.label == _ELSEWHERE
    }


def stack_layer_of(finding: Finding | Mapping[str, Any]) -> str:
    """Which drawn layer a finding belongs to (driver, cuda, cudnn, onnxruntime, application)."""
    finding = finding if isinstance(finding, Finding) else finding_of(finding)
    return _FINDING_LAYERS.get(finding.layer, "application")


def _worst(findings: Sequence[Finding]) -> str:
    if not findings:
        return "ok"
    best = min(SEVERITY_RANK.get(f.severity, 3) for f in findings)
    return {0: "error", 1: "warning"}.get(best, "info")


def _resolutions(document: Report) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for report in as_list(document.part("libraries").get("reports")):
        for raw in as_list(as_dict(report).get("resolutions")):
            item = as_dict(raw)
            name = str(item.get("name") or "")
            if name and name not in seen:
                seen.add(name)
                rows.append(item)
    return rows


def _libraries(document: Report, prefixes: tuple[str, ...]) -> list[dict[str, str | None]]:
    rows: list[dict[str, str | None]] = []
    for item in _resolutions(document):
        name = str(item.get("name"))
        if name.startswith(prefixes):
            rows.append({"name": name, "path": item.get("path"), "lazy": "yes" if item.get("lazy") else None})
    return rows


def _ort_library(item: Any) -> dict[str, str | None]:
    path = str(as_dict(item).get("path") or "") if isinstance(item, dict) else str(item)
    return {"name": path.rsplit("/", 1)[-1], "path": path or None, "lazy": None}


def _resolved_version(document: Report, prefixes: tuple[str, ...] | str) -> str | None:
    """The version of the first library found whose name starts with ``prefixes``."""
    return next(
        (
            str(i.get("version"))
            for i in _resolutions(document)
            if str(i.get("name", "")).startswith(prefixes) and i.get("path") and i.get("version")
        ),
        None,
    )


def _driver_layer(document: Report, cuda_major: Any) -> dict[str, Any]:
    driver, native = document.part("driver"), document.part("native")
    libcuda = as_dict(native.get("libcuda"))
    libraries: list[dict[str, str | None]] = (
        [
            {"name": "libcuda.so.1", "path": libcuda.get("path"), "lazy": None},
            {"name": "libnvidia-ml.so.1", "path": driver.get("nvml_library_path"), "lazy": None},
        ]
        if driver or native
        else []
    )
    return {
        "layer": "driver",
        "version": driver.get("driver_version") or driver.get("proc_driver_version"),
        "needed": str(cuda_major) if cuda_major else None,
        "libraries": libraries,
        "facts": {
            k: driver.get(k)
            for k in ("nvml_status", "cuda_driver_version", "kernel_module_version")
            if driver.get(k) is not None
        },
        "collected": bool(driver or native),
    }


def _library_layers(document: Report, ort: Mapping[str, Any]) -> list[dict[str, Any]]:
    cuda_major, cudnn_major = ort.get("required_cuda_major"), ort.get("required_cudnn_major")
    cuda_found = [r for r in _libraries(document, _CUDA_PREFIXES) if r["path"]]
    collected = bool(_resolutions(document))
    lib_ort = as_dict(document.part("target").get("lib_ort"))
    # Nothing looked up: an ONNX Runtime that asks for no CUDA library (a CPU-only one), or nothing read.
    asked = bool(ort or lib_ort) and not (cuda_major or cudnn_major or collected)
    why = "not_required" if asked else "not_collected"
    return [
        {
            "layer": "cuda",
            "version": _resolved_version(document, "libcudart"),
            "needed": f"{cuda_major}.x" if cuda_major else None,
            "libraries": _libraries(document, _CUDA_PREFIXES),
            "facts": {"found": str(len(cuda_found))} if cuda_found else {},
            "collected": collected,
            "unchecked": why,
        },
        {
            "layer": "cudnn",
            "version": _resolved_version(document, _CUDNN_PREFIXES),
            "needed": f"{cudnn_major}.x" if cudnn_major else None,
            "libraries": _libraries(document, _CUDNN_PREFIXES),
            "facts": {"loaded lazily": "yes"} if ort.get("cudnn_loaded_lazily") else {},
            "collected": collected,
            "unchecked": why,
        },
    ]


def _ort_layer(ort: Mapping[str, Any], lib_ort: Mapping[str, Any]) -> dict[str, Any]:
    libraries = [_ort_library(item) for item in as_list(ort.get("provider_libraries"))]
    if not libraries:
        libraries = [_ort_library(item) for item in as_list(lib_ort.get("provider_libraries"))]
    return {
        "layer": "onnxruntime",
        "version": ort.get("version") or lib_ort.get("version"),
        "needed": None,
        "libraries": libraries,
        "facts": {
            k: ", ".join(str(item) for item in v) if isinstance(v, list) else v
            for k, v in (
                ("build_package_name", ort.get("build_package_name")),
                ("cuda_build_version", ort.get("cuda_build_version")),
                ("providers_in_build", ort.get("providers_in_build")),
                ("package_dir", ort.get("package_dir") or lib_ort.get("directory")),
            )
            if v
        },
        "collected": bool(ort or lib_ort),
    }


def _application_layer(document: Report, target: Mapping[str, Any]) -> dict[str, Any]:
    kind = document.target_kind
    python = document.part("python")
    return {
        "layer": "application",
        "version": python.get("version") if probe_of(kind) == Probe.PYTHON else None,
        "kind": kind or None,
        "needed": target.get("requested_provider"),
        "libraries": [],
        "facts": {k: v for k, v in document.target.items() if v},
        "collected": True,
    }


def stack_layers(document: Document) -> list[dict[str, Any]]:
    """The five layers, bottom-up: status, version found, version needed, libraries, findings, facts.

    ``status`` is "error", "warning", "info", "ok" or "unknown" (nothing was collected about it).
    """
    document = view_of(document)
    by_layer: dict[str, list[Finding]] = {name: [] for name in STACK_LAYERS}
    for finding in document.findings:
        by_layer[stack_layer_of(finding)].append(finding)
    ort, target = document.part("onnxruntime"), document.part("target")
    if inspected_elsewhere(document):
        layers = [*log_layers(document), _application_layer(document, target)]
    else:
        layers = [
            _driver_layer(document, ort.get("required_cuda_major")),
            *_library_layers(document, ort),
            _ort_layer(ort, as_dict(target.get("lib_ort"))),
            _application_layer(document, target),
        ]
    for layer in layers:
        name = layer["layer"]
        layer["findings"] = [f.raw for f in by_layer[name]]
        status = _worst(by_layer[name])
        if status == "ok" and not layer.pop("collected"):
            status = "unknown"
        layer.pop("collected", None)
        layer["status"] = status
        layer.setdefault("unchecked", "not_collected")
        elsewhere = _installed_elsewhere(by_layer[name])
        absent = [str(lib["name"]) for lib in layer["libraries"] if not lib["path"]]
        layer["missing"] = [lib for lib in absent if lib not in elsewhere]
        layer["unreachable"] = [lib for lib in absent if lib in elsewhere]
    return layers


def layer_line(layer: dict[str, Any], lang: str) -> str:
    """One line under a layer's name: what was found, what it needs, what is missing (the wizard's
    stack page and report.html say the same). Words that agree: "found: 13 (1 of 6 libraries) ·
    needs: CUDA 13.x · missing: libcublas.so.13", "found: no driver · needs: a driver that runs
    CUDA 13", "this ONNX Runtime asks for no CUDA library" (under "not checked")."""
    return "   ·   ".join(part for part in layer_parts(layer, lang).values() if part)


def layer_parts(layer: dict[str, Any], lang: str) -> dict[str, str]:
    """``found``, ``needs`` and ``missing`` words of one layer ("" where there is nothing to say)."""
    name = str(layer["layer"])
    if layer.get("from_log"):
        return log_layer_parts(layer, lang)
    if layer["status"] == "unknown" and not layer.get("version"):
        return {"found": label(f"stack.unchecked.{layer['unchecked']}", lang), "needs": "", "missing": ""}
    missing, unreachable = list(layer.get("missing") or []), list(layer.get("unreachable") or [])
    missing_words = ""
    if missing and any(lib["path"] for lib in layer["libraries"]):
        missing_words = _names("stack.missing", missing, lang)
    found = _found_words(layer, lang)
    if unreachable and found != label("stack.found_unreachable", lang):  # the finding's words, not "missing"
        missing_words = "   ·   ".join(
            part for part in (_names("stack.unreachable", unreachable, lang), missing_words) if part
        )
    needs = label(f"stack.needs.{name}", lang, needed=layer["needed"]) if layer.get("needed") else ""
    return {"found": found, "needs": needs, "missing": missing_words}


def _names(key: str, names: list[str], lang: str) -> str:
    """ "missing: a, b and 3 more" (``key``: stack.missing or stack.unreachable)."""
    shown, more = ", ".join(names[:2]), len(names) - 2
    return (
        label(f"{key}_more", lang, names=shown, more=more)
        if more > 0
        else label(f"{key}_list", lang, names=shown)
    )


def _found_words(layer: dict[str, Any], lang: str) -> str:
    """ "found: 13", "found: Python 3.11.7", "found: none" (each layer in its own terms)."""
    name, version = str(layer["layer"]), layer.get("version")
    if name == "application":
        kind = str(layer.get("kind") or "other")
        profile = find_profile(kind)
        what = label(profile.stack_label if profile else "stack.app.other", lang, version=version or "")
        return label("stack.version", lang, version=what.strip())
    if not version and layer.get("unreachable") and not any(lib["path"] for lib in layer["libraries"]):
        return label("stack.found_unreachable", lang)
    if not version:
        return label("stack.found_none.driver" if name == "driver" else "stack.found_none", lang)
    libraries = layer["libraries"]
    found = sum(1 for lib in libraries if lib["path"])
    if name != "driver" and 0 < found < len(libraries):
        return label("stack.version_partial", lang, version=version, found=found, total=len(libraries))
    if name == "onnxruntime" and "providers_in_build" in layer["facts"]:
        built = str(layer["facts"]["providers_in_build"]).split(", ")
        gpu = [short for provider, short in _GPU_PROVIDERS.items() if provider in built]
        key = "stack.version_gpu" if gpu else "stack.version_cpu_only"
        return label(key, lang, version=version, providers=", ".join(gpu))
    return label("stack.version", lang, version=version)


_GPU_PROVIDERS = {"CUDAExecutionProvider": "CUDA", "TensorrtExecutionProvider": "TensorRT"}


_ABSENT = {False: "stack.missing", True: "stack.lib_unreachable"}
"""A library with no path: not found anywhere, or installed where the loader does not look (as the
layer's finding says: never "not found" for that one)."""


def library_rows(layer: dict[str, Any], lang: str) -> list[tuple[str, str, bool]]:
    """A layer's libraries as (name, where it was found or why not, found) rows: the wizard's stack
    page and report.html show the same rows (``ldconfig -p | grep <name>`` by hand)."""
    unreachable = set(layer.get("unreachable") or ())
    return [
        (
            str(lib["name"]),
            str(lib["path"]) if lib["path"] else label(_ABSENT[lib["name"] in unreachable], lang),
            bool(lib["path"]),
        )
        for lib in layer["libraries"]
    ]


def fact_rows(layer: dict[str, Any], lang: str) -> list[tuple[str, str]]:
    """A layer's facts as (words, value) rows: the catalogue's words for each fact and for the NVML
    status, never the document's keys and codes ("nvml_status library_not_found" was shown)."""
    rows = []
    for key, value in as_dict(layer.get("facts")).items():
        words = label(f"stack.fact.{key}", lang) if has_label(f"stack.fact.{key}") else str(key)
        text = str(value)
        if key == "nvml_status" and has_label(f"stack.nvml.{text}"):
            text = label(f"stack.nvml.{text}", lang)
        elif text == "yes":
            text = label("stack.fact.yes", lang)
        rows.append((words, text))
    return rows
