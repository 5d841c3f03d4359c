"""What decides CPU or GPU for an application without a configuration file (a Python one).

A Python application has no bareun.json: what picks the provider is the ONNX Runtime package
installed in its interpreter, the providers that build holds, a few environment variables, and the
``providers=[...]`` list in its own code (which we do not read). ``python_settings`` lists those
from the report document alone, each with the worst severity of the findings about it, so the
configuration page shows them where a Bareun server's file would be. By hand:
``python -m pip list | grep -i onnxruntime``,
``python -c "import onnxruntime as o; print(o.get_available_providers())"``,
``env | grep -E '^(CUDA|NVIDIA|ORT)_|^LD_LIBRARY_PATH'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fallback_doctor.core.document.view import Document, as_dict, as_list, view_of
from fallback_doctor.core.readers.targets.profile import Probe
from fallback_doctor.core.readers.targets.registry import probe_of

#: The variables that change which GPU is visible or where the CUDA libraries are found; each is
#: shown, set or not (resources/redaction/environment.json allows them into the report).
DECIDING_VARIABLES: tuple[str, ...] = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
)

_ORDER = {"error": 0, "warning": 1, "info": 2}


def settings_findings(rows: list[dict[str, Any]], findings: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The findings that mark one of ``rows``, in the document's order (the page lists them)."""
    marked = {id(f) for row in rows for f in row.get("findings", [])}
    return [f for f in findings if id(f) in marked]


def _worst(findings: Sequence[Mapping[str, Any]]) -> str | None:
    """The worst severity among ``findings`` (None: nothing about this setting)."""
    ranked = sorted((str(f.get("severity")) for f in findings), key=lambda s: _ORDER.get(s, 3))
    return ranked[0] if ranked and ranked[0] in _ORDER else None


def _about(findings: Sequence[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    """The findings whose evidence names ``name`` (by label, or in its value)."""
    return [
        f
        for f in findings
        if any(
            name == str(as_dict(e).get("label")) or name in str(as_dict(e).get("value") or "")
            for e in as_list(f.get("evidence"))
        )
    ]


def python_settings(document: Document, findings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The settings that decide CPU or GPU for a Python target: rows of ``key`` (a label of
    resources/texts/labels/ui.json ``config.python.<key>``, or a variable's name), ``value`` (None:
    not known / not set), ``severity`` (the worst finding about it, or None) and ``findings`` (those).

    Empty for any other target (its configuration file is shown instead).
    """
    report = view_of(document)
    target = report.part("target")
    if probe_of(report.target_kind) != Probe.PYTHON:
        return []
    python, ort = report.part("python"), report.part("onnxruntime")
    variables = {str(k): str(v) for k, v in report.part("environment").items()}
    packages = [
        f"{as_dict(d).get('name')} {as_dict(d).get('version')}"
        for d in as_list(ort.get("distributions")) or as_list(python.get("distributions"))
        if str(as_dict(d).get("name", "")).lower().replace("_", "-").startswith("onnxruntime")
    ]
    package_findings = [f for f in findings if f.get("layer") == "package"]
    providers = as_list(ort.get("providers_in_build"))
    interpreter = " ".join(str(v) for v in (python.get("executable"), python.get("version")) if v)
    rows = [
        _row("interpreter", interpreter or target.get("python"), []),
        _row("packages", ", ".join(packages) or None, package_findings),
        _row("providers", ", ".join(map(str, providers)) or None, package_findings if providers else []),
    ]
    rows += [_row(name, variables.get(name), _about(findings, name)) for name in DECIDING_VARIABLES]
    rows.append(_row("code", None, []))
    return rows


def _row(key: str, value: Any, about: list[Mapping[str, Any]]) -> dict[str, Any]:
    return {"key": key, "value": value, "severity": _worst(about), "findings": about}
