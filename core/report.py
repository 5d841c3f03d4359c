"""The report document (what `diagnose --json` prints) and pure renderers over it.

Renderers take the serialisable document, never live core objects, so the CLI, the
wizard and a bundle opened on another machine all show the same thing.
"""

from __future__ import annotations

import dataclasses
import textwrap
from enum import Enum
from typing import Any

from fallback_doctor.core.diagnosis import TOOL_VERSION, Diagnosis

SCHEMA = "gpu-fallback-doctor/report"
SCHEMA_VERSION = 1

VERDICT_TEXT: dict[str, dict[str, str]] = {
    "gpu_verified": {
        "en": "The GPU works: a test inference ran on it.",
        "ko": "GPU가 정상 동작합니다: 테스트 추론이 GPU에서 실행되었습니다.",
    },
    "no_problem_found": {
        "en": "No problem found in the GPU stack (the GPU itself was not exercised).",
        "ko": "GPU 스택에서 문제를 찾지 못했습니다(GPU에서 실제 추론은 실행하지 않았습니다).",
    },
    "gpu_at_risk": {
        "en": "The GPU path may work, but there are warnings that can stop or slow it.",
        "ko": "GPU 경로가 동작할 수도 있지만, 이를 막거나 느리게 할 수 있는 경고가 있습니다.",
    },
    "gpu_unusable": {
        "en": "The GPU cannot be used: ONNX Runtime will fall back to the CPU.",
        "ko": "GPU를 사용할 수 없습니다: ONNX Runtime이 CPU로 대체 실행됩니다.",
    },
    "cpu_by_configuration": {
        "en": "The application is configured to run on the CPU.",
        "ko": "애플리케이션이 CPU에서 실행되도록 설정되어 있습니다.",
    },
}


def to_jsonable(value: Any) -> Any:
    """Dataclasses, enums, tuples and mappings as plain JSON values (recursively)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(item) for item in value]
    return value


def diagnosis_document(diagnosis: Diagnosis) -> dict[str, Any]:
    """The versioned report document: verdict, ranked findings, the environment snapshot."""
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool_version": TOOL_VERSION,
        "created": diagnosis.created,
        "target": dict(diagnosis.target),
        "quick": diagnosis.quick,
        "verdict": diagnosis.verdict.value,
        "verdict_text": dict(VERDICT_TEXT[diagnosis.verdict.value]),
        "findings": [to_jsonable(finding) for finding in diagnosis.findings],
        "environment": to_jsonable(diagnosis.snapshot),
        "timings_ms": dict(diagnosis.timings_ms),
    }


def finding_text(finding: dict[str, Any], lang: str) -> dict[str, str]:
    """A finding's title, detail and fix in ``lang``, falling back to English."""
    texts = finding.get("texts") or {}
    chosen = texts.get(lang) or texts.get("en") or {}
    remediation = finding.get("remediation") or {}
    return {
        "title": chosen.get("title") or finding.get("title", ""),
        "detail": chosen.get("detail") or finding.get("detail", ""),
        "fix": chosen.get("fix") or remediation.get("summary", ""),
        "verify": chosen.get("verify") or remediation.get("verify") or "",
    }


_LABELS = {
    "en": {
        "verdict": "Verdict",
        "fix": "Fix",
        "run": "Run",
        "verify": "Verify",
        "none": "No findings.",
        "findings": "Findings (most likely cause first)",
        "evidence": "Evidence",
    },
    "ko": {
        "verdict": "판정",
        "fix": "해결 방법",
        "run": "실행",
        "verify": "확인 방법",
        "none": "발견된 문제가 없습니다.",
        "findings": "발견 사항(가장 유력한 원인부터)",
        "evidence": "근거",
    },
}


def render_text(document: dict[str, Any], lang: str = "en", width: int = 100) -> str:
    """The report for people: the verdict first, then each finding with its evidence and fix."""
    labels = _LABELS.get(lang, _LABELS["en"])
    verdict = document["verdict"]
    verdict_text = document.get("verdict_text", {}).get(lang) or VERDICT_TEXT[verdict]["en"]
    lines = [f"{labels['verdict']}: {verdict} — {verdict_text}", ""]
    findings = document.get("findings", [])
    if not findings:
        lines.append(labels["none"])
    else:
        lines.append(labels["findings"] + ":")
    for number, finding in enumerate(findings, start=1):
        text = finding_text(finding, lang)
        lines.append("")
        lines.append(
            f"{number}. [{finding['severity'].upper()}] {text['title']}"
            f"  ({finding['layer']} / {finding['cause']} / {finding['id']})"
        )
        lines.extend(
            textwrap.wrap(text["detail"], width=width, initial_indent="   ", subsequent_indent="   ")
        )
        evidence = finding.get("evidence") or []
        if evidence:
            lines.append(f"   {labels['evidence']}:")
            for item in evidence[:12]:
                where = ""
                if item.get("source"):
                    where = f" ({item['source']}" + (f":{item['line']}" if item.get("line") else "") + ")"
                lines.append(f"     - {item['label']}: {item['value']}{where}")
            if len(evidence) > 12:
                lines.append(f"     … {len(evidence) - 12} more in --json")
        remediation = finding.get("remediation") or {}
        if text["fix"]:
            lines.extend(
                textwrap.wrap(
                    text["fix"],
                    width=width,
                    initial_indent=f"   {labels['fix']}: ",
                    subsequent_indent="        ",
                )
            )
        for command in remediation.get("commands") or []:
            lines.append(f"     $ {command}")
        if text["verify"]:
            lines.append(f"   {labels['verify']}: {text['verify']}")
    return "\n".join(lines) + "\n"
