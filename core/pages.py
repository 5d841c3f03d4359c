"""What each wizard page shows, computed from the report document alone (Qt-free, pure).

Every function takes the serialisable document (what ``diagnose --json`` prints; the wizard's
document after its steps has the same shape, docs/report-schema.md) and returns plain data, so a
bundle opened on another machine shows exactly the same pages. The order of the findings is the
document's (core/judge.py ranked them); nothing here re-orders or re-judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.measures import (
    cpu_view,
    gpu_headline,
    gpu_summary,
    latency_rows,
    ms_text,
    session_rows,
    strategy_lines,
)
from fallback_doctor.core.pages_python import python_settings, settings_findings
from fallback_doctor.core.report import finding_text
from fallback_doctor.core.texts import has_label, label, load_texts, render_text

__all__ = [
    "STACK_LAYERS",
    "all_findings",
    "check_again_step",
    "config_view",
    "cpu_view",
    "finding_words",
    "gpu_headline",
    "gpu_summary",
    "issue_words",
    "latency_rows",
    "log_view",
    "ms_text",
    "session_rows",
    "stack_layers",
    "strategy_lines",
    "verdict_words",
]

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
_DRIVER_PREFIXES = ("libcuda.", "libnvidia-ml", "nvcuda", "nvml")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def environment(document: dict[str, Any], part: str) -> dict[str, Any]:
    """One part of the document's environment snapshot ({} when it was not collected)."""
    return _dict(_dict(document.get("environment")).get(part))


def all_findings(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The document's findings (the static ones and the test inference's), in the document's ranking."""
    return [_dict(f) for f in _list(document.get("findings"))]


def stack_layer_of(finding: dict[str, Any]) -> str:
    """Which drawn layer a finding belongs to (driver, cuda, cudnn, onnxruntime, application)."""
    return _FINDING_LAYERS.get(str(finding.get("layer")), "application")


def _worst(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "ok"
    best = min(SEVERITY_RANK.get(str(f.get("severity")), 3) for f in findings)
    return {0: "error", 1: "warning"}.get(best, "info")


def _resolutions(document: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for report in _list(environment(document, "libraries").get("reports")):
        for raw in _list(_dict(report).get("resolutions")):
            item = _dict(raw)
            name = str(item.get("name") or "")
            if name and name not in seen:
                seen.add(name)
                rows.append(item)
    return rows


def _libraries(document: dict[str, Any], prefixes: tuple[str, ...]) -> list[dict[str, str | None]]:
    rows: list[dict[str, str | None]] = []
    for item in _resolutions(document):
        name = str(item.get("name"))
        if name.startswith(prefixes):
            rows.append({"name": name, "path": item.get("path"), "lazy": "yes" if item.get("lazy") else None})
    return rows


def _ort_library(item: Any) -> dict[str, str | None]:
    path = str(_dict(item).get("path") or "") if isinstance(item, dict) else str(item)
    return {"name": path.rsplit("/", 1)[-1], "path": path or None, "lazy": None}


def _resolved_version(document: dict[str, Any], prefixes: tuple[str, ...] | str) -> str | None:
    """The version of the first library found whose name starts with ``prefixes``."""
    return next(
        (
            str(i.get("version"))
            for i in _resolutions(document)
            if str(i.get("name", "")).startswith(prefixes) and i.get("path") and i.get("version")
        ),
        None,
    )


def _driver_layer(document: dict[str, Any], cuda_major: Any) -> dict[str, Any]:
    driver, native = environment(document, "driver"), environment(document, "native")
    libcuda = _dict(native.get("libcuda"))
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
        "needed": f"CUDA {cuda_major}" if cuda_major else None,
        "libraries": libraries,
        "facts": {
            k: driver.get(k)
            for k in ("nvml_status", "cuda_driver_version", "kernel_module_version")
            if driver.get(k) is not None
        },
        "collected": bool(driver or native),
    }


def _library_layers(document: dict[str, Any], ort: dict[str, Any]) -> list[dict[str, Any]]:
    cuda_major, cudnn_major = ort.get("required_cuda_major"), ort.get("required_cudnn_major")
    cuda_found = [r for r in _libraries(document, _CUDA_PREFIXES) if r["path"]]
    collected = bool(_resolutions(document))
    return [
        {
            "layer": "cuda",
            "version": _resolved_version(document, "libcudart"),
            "needed": f"{cuda_major}.x" if cuda_major else None,
            "libraries": _libraries(document, _CUDA_PREFIXES),
            "facts": {"found": str(len(cuda_found))} if cuda_found else {},
            "collected": collected,
        },
        {
            "layer": "cudnn",
            "version": _resolved_version(document, _CUDNN_PREFIXES),
            "needed": f"{cudnn_major}.x" if cudnn_major else None,
            "libraries": _libraries(document, _CUDNN_PREFIXES),
            "facts": {"loaded lazily": "yes"} if ort.get("cudnn_loaded_lazily") else {},
            "collected": collected,
        },
    ]


def _ort_layer(ort: dict[str, Any], lib_ort: dict[str, Any]) -> dict[str, Any]:
    libraries = [_ort_library(item) for item in _list(ort.get("provider_libraries"))]
    if not libraries:
        libraries = [_ort_library(item) for item in _list(lib_ort.get("provider_libraries"))]
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


def _application_layer(document: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    kind = str(_dict(document.get("target")).get("kind") or target.get("kind") or "")
    python = environment(document, "python")
    return {
        "layer": "application",
        "version": python.get("version") if kind == "python" else None,
        "needed": target.get("requested_provider"),
        "libraries": [],
        "facts": {k: v for k, v in _dict(document.get("target")).items() if v},
        "collected": True,
    }


def stack_layers(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The five layers, bottom-up: status, version found, version needed, libraries, findings, facts.

    ``status`` is "error", "warning", "info", "ok" or "unknown" (nothing was collected about it).
    """
    by_layer: dict[str, list[dict[str, Any]]] = {name: [] for name in STACK_LAYERS}
    for finding in all_findings(document):
        by_layer[stack_layer_of(finding)].append(finding)
    ort, target = environment(document, "onnxruntime"), environment(document, "target")
    layers = [
        _driver_layer(document, ort.get("required_cuda_major")),
        *_library_layers(document, ort),
        _ort_layer(ort, _dict(target.get("lib_ort"))),
        _application_layer(document, target),
    ]
    for layer in layers:
        name = layer["layer"]
        layer["findings"] = by_layer[name]
        status = _worst(by_layer[name])
        if status == "ok" and not layer.pop("collected"):
            status = "unknown"
        layer.pop("collected", None)
        layer["status"] = status
    return layers


def config_view(document: dict[str, Any]) -> dict[str, Any]:
    """The configuration page: the file, the provider setting, the issues with their lines, the findings."""
    target = environment(document, "target")
    setting = _dict(target.get("provider_setting"))
    issues = [_dict(i) for i in _list(target.get("config_issues"))]
    findings = [
        f
        for f in all_findings(document)
        if f.get("layer") == "config" or str(f.get("id", "")).startswith(("config.", "target."))
    ]
    highlight: dict[int, str] = {}
    if setting.get("line"):
        highlight[int(setting["line"])] = "provider"
    for issue in issues:
        if issue.get("line"):
            highlight.setdefault(int(issue["line"]), str(issue.get("severity") or "warning"))
    key_lines = {
        str(key): int(line)
        for key, line in _dict(target.get("config_key_lines")).items()
        if isinstance(line, int) and not isinstance(line, bool) and line > 0
    }
    marks: dict[int, str] = {}
    """line -> the worst severity of an issue or a finding pointing at it."""
    order = {"error": 0, "warning": 1, "info": 2}

    def mark(line: Any, severity: Any) -> None:
        if not isinstance(line, int) or isinstance(line, bool) or line < 1:
            return
        severity = str(severity or "warning")
        if line not in marks or order.get(severity, 3) < order.get(marks[line], 3):
            marks[line] = severity

    for issue in issues:
        mark(issue.get("line"), issue.get("severity"))
    config_path = target.get("config_path")
    for finding in findings:
        for evidence in _list(finding.get("evidence")):
            evidence = _dict(evidence)
            if evidence.get("line") and (not config_path or evidence.get("source") == config_path):
                mark(evidence.get("line"), finding.get("severity"))
    text = target.get("config_text")
    settings = python_settings(document, all_findings(document))
    findings += [f for f in settings_findings(settings, all_findings(document)) if f not in findings]
    return {
        "text": text if isinstance(text, str) else None,
        "key_lines": key_lines,
        "marks": marks,
        "path": target.get("config_path"),
        "kind": target.get("kind"),
        "provider": target.get("requested_provider"),
        "provider_raw": setting.get("raw"),
        "provider_line": setting.get("line"),
        "wants_cpu": target.get("requested_provider") == "cpu",
        "lib_path": target.get("lib_path"),
        "paths": _dict(target.get("paths")),
        "issues": issues,
        "highlight": highlight,
        "findings": findings,
        "settings": settings,
    }


def log_view(document: dict[str, Any]) -> dict[str, Any]:
    """The log page: the quoted lines (cause, fallback, context, start-up), in file order, and the causes."""
    log = environment(document, "log")
    quotes: dict[tuple[str, int | None, str], dict[str, Any]] = {}

    def add(quote: Any) -> None:
        quote = _dict(quote)
        if quote.get("text") is None:
            return
        key = (str(quote.get("file") or ""), quote.get("line"), str(quote.get("text")))
        if key not in quotes or quote.get("role") == "cause":
            quotes[key] = quote

    add(log.get("startup"))
    causes = [_dict(c) for c in _list(log.get("causes"))]
    for cause in causes:
        for quote in _list(cause.get("evidence")):
            add(quote)
    for quote in _list(log.get("fallback")):
        add(quote)
    for hidden in _list(log.get("hidden_signal")):
        for quote in _list(_dict(hidden).get("evidence")):
            add(quote)
    lines = sorted(quotes.values(), key=lambda q: (str(q.get("file") or ""), q.get("line") or 0))
    findings = [f for f in all_findings(document) if str(f.get("id", "")).startswith("log.")]
    return {
        "collected": bool(log),
        "sources": _list(log.get("sources")),
        "lines": lines,
        "causes": causes,
        "hidden": [_dict(h) for h in _list(log.get("hidden_signal"))],
        "unreadable": _list(log.get("unreadable")),
        "examined": log.get("lines_examined", 0),
        "findings": findings,
    }


def issue_words(issue: Mapping[str, Any], lang: str) -> str:
    """A configuration issue's sentence in ``lang``: the catalog's text of the issue's declared finding
    (core/findings/config.py) with the issue's parameters, else the English message the reader wrote."""
    from fallback_doctor.core.findings.config import config_issue_finding

    finding_id = config_issue_finding(str(issue.get("code") or ""))
    if finding_id and finding_id in load_texts():
        params = {str(k): v for k, v in _dict(issue.get("params")).items()}
        words = render_text(finding_id, lang, params)
        return words.get("detail") or words.get("title") or str(issue.get("message") or "")
    return str(issue.get("message") or "")


def check_again_step(finding: dict[str, Any]) -> str:
    """What "check again" re-runs for a finding: "gpu" (the GPU retry) or "diagnose" (the static checks)."""
    return (
        "gpu"
        if str(finding.get("id", "")).startswith("inference.") or finding.get("layer") == "probe"
        else "diagnose"
    )


def finding_words(finding: Mapping[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail, fix and verify line in ``lang`` (English where the language is missing)."""
    return finding_text(dict(finding), lang)


def verdict_words(document: Mapping[str, Any], lang: str) -> str:
    """The verdict in words, from the catalog by the verdict's code (never the document's own text)."""
    verdict = str(document.get("verdict") or "")
    return label(f"verdict.{verdict}", lang) if has_label(f"verdict.{verdict}") else verdict
