"""What ``--dry-run`` prints: every file and its origin, what was not taken and why, each redaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fallback_doctor.core.bundle.preview import BundlePreview

_ORIGINS = {
    "report": "this diagnosis (the report document)",
    "html": "the report document, rendered",
    "environment": "the report document (OS, GPU, driver, CUDA, cuDNN, ONNX Runtime)",
    "samples": "the sampler during the test inference",
    "probe": "the test inference's probe",
}


def render_preview(preview: BundlePreview) -> str:
    """What ``--dry-run`` prints: every file, then every redaction (kind, file, masked preview)."""
    lines = [
        "Bundle preview (nothing written):",
        "  redaction: "
        + ("on" if preview.options.redact else "OFF (--no-redact): secrets may leave this machine"),
        "",
        "Files:",
    ]
    for member in preview.members:
        state = "" if member.included else "  (left out)"
        size = len(member.redacted.encode("utf-8", "surrogatepass"))
        detail = f", read as {member.form}" if member.form not in ("utf-8", "json") else ""
        count = len(member.redactions)
        redactions = f", {count} redaction{'' if count == 1 else 's'}" if count else ""
        lines.append(f"  {member.name}  {size} bytes{detail}{redactions}{state}")
        lines.append(f"      from {member.source or _ORIGINS.get(member.kind, 'this diagnosis')}")
    lines.append("  manifest.json")
    lines.append("      from this export (what the bundle holds, with sha256 sums)")
    if preview.cuts:
        lines.append("")
        lines.append("Cut to stay within bounds, or not taken:")
        for cut in preview.cuts:
            lines.append(f"  {cut.member}: {cut.why}")
    lines.append("")
    total = sum(len(member.redactions) for member in preview.included())
    lines.append(f"Redactions ({total}):")
    for member in preview.included():
        for redaction in member.redactions:
            where = f" at {redaction.where}" if redaction.where else f" at {redaction.start}-{redaction.end}"
            lines.append(
                f"  {redaction.kind:<20} {member.name}{where}: {redaction.preview} -> {redaction.replacement}"
            )
    return "\n".join(lines) + "\n"
