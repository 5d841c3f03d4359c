"""report.html in a real browser: Debian's headless Chromium renders it offline to a PNG and a DOM.

The documents are real: `diagnose --bundle` on this interpreter's real (broken: no driver, no
CUDA libraries) stack, and the same document with its series from a real probe run whose GPU
side is a real recording replayed (tests/data/gpu_series; the page says it is replayed). What the
page must show is taken from the functions the wizard's pages use (core/views/pages.py,
core/views/measures.py), never from strings written here. Skipped only where chromium is not installed.
"""

from __future__ import annotations

import html as html_module
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.html_graph import CPU_COLOUR, GPU_COLOUR, phase_marks
from fallback_doctor.core.bundle.members import bundle_members
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.inference.run import plan_inference
from fallback_doctor.core.readers.inference.sampled import run_sampled_inference
from fallback_doctor.core.readers.sampling.recordings import load_recording
from fallback_doctor.core.readers.sampling.sources import ReplaySource
from fallback_doctor.core.views.measures import gpu_summary, ms_text
from fallback_doctor.core.views.pages import all_findings, finding_words, verdict_words

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/system-deps.sh installs Debian's package)"
)
DIAGNOSE = (
    sys.executable,
    "-m",
    "fallback_doctor",
    "diagnose",
    "--target",
    "python",
    "--python",
    sys.executable,
)
RECORDING = Path(__file__).parents[1] / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    env["LANG"] = "C.UTF-8"
    return env


def _members(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode("utf-8") for name in archive.namelist()}


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """`diagnose --bundle` in English and Korean on this interpreter's real stack: the bundles' members."""
    import json

    out: dict[str, dict[str, str]] = {}
    for lang in ("en", "ko"):
        bundle = tmp_path_factory.mktemp(f"diag-{lang}") / "case.zip"
        done = subprocess.run(
            [*DIAGNOSE, "--runs", "2", "--lang", lang, "--bundle", str(bundle)],
            capture_output=True,
            text=True,
            timeout=240,
            env=_env(),
        )
        assert done.returncode == 1, done.stderr
        out[lang] = _members(bundle)
        json.loads(out[lang]["report.json"])
    return out


def render(page: str, folder: Path, size: str = "1000,2600") -> tuple[str, bytes]:
    """The rendered DOM and a PNG screenshot of ``page``, offline (every host name resolves to nothing)."""
    source = folder / "report.html"
    source.write_text(page, encoding="utf-8")
    shot = folder / "shot.png"
    common = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--user-data-dir={folder / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--allow-file-access-from-files",
    ]
    done = subprocess.run(
        [*common, f"--screenshot={shot}", f"--window-size={size}", source.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists(), done.stderr.decode(errors="replace")[-2000:]
    dom = subprocess.run([*common, "--dump-dom", source.as_uri()], capture_output=True, timeout=120)
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    return dom.stdout.decode("utf-8"), shot.read_bytes()


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, b"", b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks += body
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        rows.append(bytes(line) if channels == 3 else bytes(b for j, b in enumerate(line) if j % 4 != 3))
        previous = line
    return width, height, rows


def colour_count(rows: list[bytes], colour: str, tolerance: int = 40) -> int:
    """How many pixels are near ``colour`` ("#rrggbb")."""
    want = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    count = 0
    for row in rows:
        for x in range(0, len(row), 3):
            if all(abs(row[x + k] - want[k]) <= tolerance for k in range(3)):
                count += 1
    return count


def text_of(dom: str) -> str:
    """The page's visible text, whitespace folded (the DOM as Chromium rendered it)."""
    body = re.sub(r"<style.*?</style>|<title>.*?</title>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", " ", body)))


def check_page_agrees(
    document: dict[str, Any], page: str, lang: str, folder: Path
) -> tuple[str, list[bytes]]:
    """The page as rendered shows what the wizard's pages show for ``document``."""
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, flags=re.I)  # nothing to fetch
    dom, png = render(page, folder)
    words = text_of(dom)
    assert verdict_words(document, lang) in words
    titles = [finding_words(f, lang)["title"] for f in all_findings(document)]
    assert titles
    places = [words.find(title) for title in titles]
    assert -1 not in places, [t for t, p in zip(titles, places, strict=True) if p < 0]
    assert places == sorted(places)  # the wizard's order
    for finding in all_findings(document):  # each finding's fix and verify line, in the page's language
        said = finding_words(finding, lang)
        for part in ("fix", "verify"):
            assert re.sub(r"\s+", " ", said[part]) in words, (finding["id"], part)
    summary = gpu_summary(document)
    for figure in (summary["cpu_p50"], summary["gpu_p50"]):
        assert figure is not None and ms_text(figure, lang) in words
    width, height, rows = png_pixels(png)
    assert width >= 900 and height >= 2000
    distinct = {row[x : x + 3] for row in rows[::20] for x in range(0, len(row), 60)}
    assert len(distinct) > 20  # not a blank page
    return words, rows


def test_the_diagnose_bundles_page_shows_what_the_wizard_shows(
    diagnosed: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    import json

    for lang, members in diagnosed.items():
        document = json.loads(members["report.json"])
        folder = tmp_path / lang
        folder.mkdir()
        words, rows = check_page_agrees(document, members["report.html"], lang, folder)
        samples = document["inference"]["series"]["samples"]
        assert any(s.get("probe_cpu_percent") is not None for s in samples)
        assert colour_count(rows, CPU_COLOUR) > 50  # the probe's CPU line is drawn
        assert colour_count(rows, GPU_COLOUR, tolerance=20) == 0  # no GPU readings: no GPU line...
        assert label("graph.no_gpu", lang) in words  # ...but words saying so
        marks = phase_marks(document, members["samples.csv"], lang)
        assert marks and all(t >= 0 for t, _ in marks)
        for _t, name in marks:
            assert name in words


def test_a_replayed_gpu_recording_draws_the_gpu_beside_the_cpu_and_says_it_is_replayed(
    diagnosed: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    import json

    document = json.loads(diagnosed["en"]["report.json"])
    target = TargetFacts(
        kind="python", root=None, config_path=None, log_paths=(), lib_path=None, requested_provider=None
    )
    plan = plan_inference(None, dims={"batch": 2, "seq": 16}, runs=3, warmup=1)
    source = ReplaySource(load_recording(RECORDING), speed=None)
    # 50 ms ticks: the probe is short (a fell-back GPU session runs once), and the graph needs
    # enough replayed samples to draw a line.
    result = run_sampled_inference(
        target, plan, python=sys.executable, env=_env(), gpu_source=source, interval_s=0.05
    )
    series = result.series or {}
    assert series.get("recorded_here") is False
    assert any(s.get("utilization_percent") is not None for s in series["samples"])
    document["inference"] = {**document["inference"], "series": series}
    bundle = tmp_path / "replayed.zip"
    export_bundle(
        document, bundle, bundle_members(document), BundleOptions(created="2025-11-03T09:15:00+00:00")
    )
    members = _members(bundle)
    shown = json.loads(members["report.json"])
    words, rows = check_page_agrees(shown, members["report.html"], "en", tmp_path)
    assert colour_count(rows, GPU_COLOUR, tolerance=20) > 50
    assert colour_count(rows, CPU_COLOUR) > 50
    assert "replayed" in words and str(series["provenance"]) in words
    assert label("graph.no_gpu", "en") not in words
