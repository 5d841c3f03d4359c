"""The stack page of a target whose evidence comes from elsewhere (a customer's log read on the
technician's laptop): that machine's layers cannot be inspected from here, and this machine's are
not the evidence, so each layer shows what the log itself names (core/logs reads the versions and
the libraries it could not load) and says that nothing was inspected.

Computed from the report document alone (Qt-free), like core/views/pages_stack.py, so an opened bundle
of a log draws the same. By hand: ``fallback-doctor explain-log FILE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.document.view import Document, as_dict, as_list, view_of
from fallback_doctor.core.language.texts import has_label, label
from fallback_doctor.core.readers.targets.profile import TargetProfile
from fallback_doctor.core.readers.targets.registry import find_profile

_CUDNN_PREFIXES = ("libcudnn", "cudnn")
_ORT_PREFIXES = ("libonnxruntime", "onnxruntime")


def _profile_of(document: Document) -> TargetProfile | None:
    return find_profile(view_of(document).target_kind)


def inspected_elsewhere(document: Document) -> bool:
    """Whether the document's evidence comes from another machine (TargetProfile.inspects_machine
    False: a log), so that no layer of the machine the tool ran on belongs on its pages."""
    profile = _profile_of(document)
    return profile is not None and not profile.inspects_machine


def elsewhere_note(document: Document, lang: str) -> str:
    """The stack page's sentence for a target from elsewhere ("" for one inspected here): this
    machine's layers were not inspected, because the evidence is a log from another machine."""
    profile = _profile_of(document)
    if profile is None or profile.inspects_machine:
        return ""
    key = profile.elsewhere_label if has_label(profile.elsewhere_label) else "stack.elsewhere.other"
    return label(key, lang)


def _needed_majors(log: Mapping[str, Any]) -> dict[str, str]:
    """The CUDA and cuDNN majors the log says the build needs (its "Require" line, else the
    major of the library a cause quotes)."""
    needed: dict[str, str] = {}
    for family, key in (("cuda", "required_cuda_major"), ("cudnn", "required_cudnn_major")):
        if log.get(key):
            needed[family] = str(log[key])
    for cause in as_list(log.get("causes")):
        fields = as_dict(as_dict(cause).get("fields"))
        family, major = str(fields.get("family") or ""), str(fields.get("needed_major") or "")
        if family in ("cuda", "cudnn") and major.isdigit():
            needed.setdefault(family, major)
    return needed


def _not_loaded(log: Mapping[str, Any], named: Mapping[str, Any]) -> dict[str, list[str]]:
    """The libraries the log says could not be loaded, by layer."""
    names = [str(n) for n in as_list(named.get("missing_libraries"))]
    for cause in as_list(log.get("causes")):
        library = as_dict(as_dict(cause).get("fields")).get("library")
        if library and str(library) not in names:
            names.append(str(library))
    by_layer: dict[str, list[str]] = {"driver": [], "cuda": [], "cudnn": [], "onnxruntime": []}
    for name in names:
        if name.startswith(_CUDNN_PREFIXES):
            by_layer["cudnn"].append(name)
        elif name.startswith(_ORT_PREFIXES):
            by_layer["onnxruntime"].append(name)
        elif name.startswith(("libcuda.so", "nvcuda", "libnvidia")):
            by_layer["driver"].append(name)
        else:
            by_layer["cuda"].append(name)
    return by_layer


def _first(values: Any) -> str | None:
    items = as_list(values)
    return str(items[0]) if items else None


def log_layers(document: Document) -> list[dict[str, Any]]:
    """The driver, CUDA, cuDNN and ONNX Runtime layers as the log names them: a version the log
    names, the major it says the build needs, the libraries it could not load. Never "ok": the
    machine was not inspected (``collected`` False: the status is its findings', else unknown)."""
    log = view_of(document).part("log")
    named = as_dict(log.get("named"))
    needed = _needed_majors(log)
    not_loaded = _not_loaded(log, named)
    cudnn_majors = as_list(named.get("cudnn_majors"))
    versions = {
        "driver": _first(named.get("driver_versions")),
        "cuda": _first(named.get("cuda_versions")),
        "cudnn": f"{cudnn_majors[0]}.x" if cudnn_majors else None,
        "onnxruntime": _first(named.get("ort_versions")),
    }
    facts = {
        "driver": {"GPU": ", ".join(str(g) for g in as_list(named.get("gpu_names")))},
        "onnxruntime": {"providers": ", ".join(str(p) for p in as_list(named.get("providers")))},
    }
    return [
        {
            "layer": name,
            "version": versions[name],
            "needed": f"{needed[name]}.x" if name in needed else None,
            "libraries": [{"name": lib, "path": None, "lazy": None} for lib in not_loaded[name]],
            "facts": {k: v for k, v in facts.get(name, {}).items() if v},
            "collected": False,
            "unchecked": "elsewhere",
            "from_log": True,
        }
        for name in ("driver", "cuda", "cudnn", "onnxruntime")
    ]


def log_layer_parts(layer: dict[str, Any], lang: str) -> dict[str, str]:
    """A log layer's words: what the log names ("the log names 1.17.0"), what it says the build
    needs, what it could not load; "not inspected" where the log names nothing of the layer."""
    version = layer.get("version")
    if version:
        found = label("stack.log_names", lang, version=version)
    elif layer.get("needed") or layer.get("missing"):
        found = label("stack.unchecked.elsewhere_named", lang)
    else:
        found = label("stack.unchecked.elsewhere", lang)
    needed = layer.get("needed")
    needs = label(f"stack.needs.{layer['layer']}", lang, needed=needed) if needed else ""
    missing = list(layer.get("missing") or [])
    not_loaded = label("stack.log_not_loaded", lang, names=", ".join(missing[:3])) if missing else ""
    return {"found": found, "needs": needs, "missing": not_loaded}
