"""report.html's graph: the GPU above the probe's CPU, the probe's phases marked, as the wizard draws it.

Inline SVG, no script. The samples are samples.csv (the redacted copy of ``inference.series``);
the phase marks come from the document's series. Time runs from the first sample (0 s, never
negative); a mark before it is drawn at 0. Where there are no GPU readings the GPU panel says so in
words instead of drawing a flat line (the wizard does the same). Colours are the wizard's
(gui/plot.py, light theme): GPU #0277bd, CPU #c62828.
"""

from __future__ import annotations

import csv
import html
import io
import math

from fallback_doctor.core.document.view import Document, view_of
from fallback_doctor.core.language.texts import label

GPU_COLOUR = "#0277bd"
CPU_COLOUR = "#c62828"
MARK_COLOUR = "#888888"

_PHASE_KEYS = (
    "import",
    "cpu.session",
    "cpu.timed",
    "cpu.warmup",
    "gpu.session",
    "gpu.timed",
    "gpu.warmup",
    "gpu.strict",
    "preload",
    "gpu.select",
)


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _float(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str) or value.strip() in ("", "NA", "N/A", "None", "nan", "-"):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def read_points(samples_csv: str) -> list[tuple[float, float | None, float | None]]:
    """(seconds from the first sample, GPU %, probe CPU %) per sample with a timestamp."""
    try:
        rows = list(csv.DictReader(io.StringIO(samples_csv)))
    except csv.Error:
        return []
    raw: list[tuple[float, float | None, float | None]] = []
    for row in rows[:20000]:
        stamp = _float(row.get("timestamp"))
        if stamp is not None:
            raw.append((stamp, _float(row.get("utilization_percent")), _float(row.get("probe_cpu_percent"))))
    if not raw:
        return []
    t0 = min(p[0] for p in raw)
    return sorted((t - t0, gpu, cpu) for t, gpu, cpu in raw)


def phase_name(name: str, lang: str) -> str:
    """A probe phase in words ("gpu.timed" -> "GPU runs"), as the wizard's phase line names it."""
    short = name.split(".", 1)[-1] if name.startswith(("preload_dlls.", "lib_path_first.")) else name
    if short.endswith(".failed"):
        return label("phase.failed", lang, phase=phase_name(short.removesuffix(".failed"), lang))
    return label(f"phase.{short}", lang) if short in _PHASE_KEYS else name


def phase_marks(document: Document, samples_csv: str, lang: str) -> list[tuple[float, str]]:
    """(seconds from the first sample, clamped to 0, phase in words) of each mark of the document's series."""
    marks = view_of(document).inference.series.get("marks")
    try:
        stamps = [_float(r.get("timestamp")) for r in csv.DictReader(io.StringIO(samples_csv))]
    except csv.Error:
        stamps = []
    finite = [s for s in stamps if s is not None]
    if not finite or not isinstance(marks, list):
        return []
    t0 = min(finite)
    out: list[tuple[float, str]] = []
    for mark in marks:
        if not isinstance(mark, dict):
            continue
        stamp = _float(mark.get("timestamp"))
        if stamp is not None:
            out.append((max(0.0, stamp - t0), phase_name(str(mark.get("name") or ""), lang)))
    return sorted(out)


def _tick_step(span: float) -> float:
    """A round step giving 4 to 10 ticks over ``span`` seconds."""
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600):
        if span / step <= 10:
            return float(step)
    return 1200.0


def _seconds(value: float, lang: str) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"
    return label("graph.seconds", lang, value=text)


class _Panel:
    """One plot area: x from 0 to ``span`` seconds, y from 0 to ``top``."""

    def __init__(self, y: int, height: int, span: float, top: float, width: int) -> None:
        self.left, self.right, self.y, self.height = 52, width - 12, y, height
        self.span, self.top = span, top

    def x(self, t: float) -> float:
        return self.left + max(0.0, t) / self.span * (self.right - self.left)

    def y_of(self, value: float) -> float:
        return self.y + self.height - max(0.0, min(value, self.top)) / self.top * self.height

    def path(self, points: list[tuple[float, float | None]]) -> str:
        segments: list[str] = []
        pen_down = False
        for t, value in points:
            if value is None:
                pen_down = False
                continue
            segments.append(f"{'L' if pen_down else 'M'}{self.x(t):.1f},{self.y_of(value):.1f}")
            pen_down = True
        return " ".join(segments)

    def frame(self, title: str, unit: str) -> str:
        grid = "".join(
            f'<line x1="{self.left}" x2="{self.right}" y1="{self.y_of(v):.1f}" y2="{self.y_of(v):.1f}" '
            f'stroke="#ddd"/><text x="{self.left - 4}" y="{self.y_of(v) + 4:.1f}" font-size="10" '
            f'text-anchor="end">{v:.0f}{unit}</text>'
            for v in (0.0, self.top / 2, self.top)
        )
        return grid + f'<text x="{self.left + 4}" y="{self.y + 12}" font-size="11">{_e(title)}</text>'

    def marks(self, marks: list[tuple[float, str]]) -> str:
        return "".join(
            f'<line class="phase" x1="{self.x(t):.1f}" x2="{self.x(t):.1f}" y1="{self.y}" '
            f'y2="{self.y + self.height}" stroke="{MARK_COLOUR}" stroke-dasharray="2 3"><title>{_e(name)}'
            "</title></line>"
            for t, name in marks
        )


def graph_html(document: Document, samples_csv: str | None, lang: str, width: int = 720) -> str:
    """The graph block: the SVG (GPU panel or words, CPU panel, time axis) and the phases in words."""
    points = read_points(samples_csv or "")
    if len(points) < 2:
        return ""
    marks = phase_marks(document, samples_csv or "", lang)
    span = max([points[-1][0], *(t for t, _ in marks), 1.0])
    has_gpu = any(p[1] is not None for p in points)
    cpu_values = [p[2] for p in points if p[2] is not None]
    cpu_top = math.ceil(max([100.0, *cpu_values]) / 50) * 50.0
    gpu_panel = _Panel(8, 110, span, 100.0, width)
    cpu_panel = _Panel(138, 110, span, cpu_top, width)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="290" viewBox="0 0 {width} 290" '
        f'role="img" aria-label="{_e(label("plot.gpu", lang))}">'
    ]
    if has_gpu:
        parts.append(gpu_panel.frame(label("plot.gpu", lang), "%"))
        parts.append(gpu_panel.marks(marks))
        parts.append(
            f'<path class="gpu" d="{gpu_panel.path([(p[0], p[1]) for p in points])}" fill="none" '
            f'stroke="{GPU_COLOUR}" stroke-width="2"/>'
        )
    else:
        parts.append(
            f'<rect x="{gpu_panel.left}" y="{gpu_panel.y}" width="{gpu_panel.right - gpu_panel.left}" '
            f'height="{gpu_panel.height}" fill="#f5f5f7" stroke="#ddd"/>'
            f'<text class="no-gpu" x="{(gpu_panel.left + gpu_panel.right) / 2:.0f}" '
            f'y="{gpu_panel.y + gpu_panel.height / 2 + 4:.0f}" font-size="12" text-anchor="middle">'
            f"{_e(label('graph.no_gpu', lang))}</text>"
        )
    parts.append(cpu_panel.frame(label("plot.cpu", lang), "%"))
    parts.append(cpu_panel.marks(marks))
    if cpu_values:
        parts.append(
            f'<path class="cpu" d="{cpu_panel.path([(p[0], p[2]) for p in points])}" fill="none" '
            f'stroke="{CPU_COLOUR}" stroke-width="2"/>'
        )
    step = _tick_step(span)
    axis_y = cpu_panel.y + cpu_panel.height
    tick = 0.0
    while tick <= span + 1e-9:
        x = cpu_panel.x(tick)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis_y}" y2="{axis_y + 4}" stroke="#666"/>'
            f'<text class="tick" x="{x:.1f}" y="{axis_y + 16}" font-size="10" text-anchor="middle">'
            f"{_e(_seconds(tick, lang))}</text>"
        )
        tick = round(tick + step, 6)
    parts.append("</svg>")
    if marks:
        names = " · ".join(f"{name} {_seconds(t, lang)}" for t, name in marks)
        parts.append(f'<p class="meta phases">{_e(label("plot.phases", lang, phases=names))}</p>')
    return "".join(parts)
