"""A measurement shows what was measured, and the status line speaks in words (issue 26).

- The GPU retry's column filled p50, p95, p99 and mean from one cold run and set it against a
  warmed CPU baseline ("the GPU" was sometimes faster while both ran on the CPU): a real recorded
  H200 run whose retry ran once (tests/data/gpu_run/h200-no-visible-gpu.json) is shown as one run,
  in the wizard's table, the text report and report.html, and never makes a speed-up.
- The status line showed internal tags ("[cpu.warmup]", "Collecting: native"): the real step child
  (core/flow/step_child.py, as the wizard starts it) is run for the diagnosis and the CPU step, and
  every event it sends is said in words.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.html import render_html
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.views.measures import gpu_summary, progress_words, session_rows
from fallback_doctor.core.views.text_report import inference_lines

GPU_RUNS = Path(__file__).resolve().parents[1] / "data" / "gpu_run"
LANGS = ("en", "ko")


def _run(name: str) -> dict[str, Any]:
    return json.loads((GPU_RUNS / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("lang", LANGS)
def test_one_cold_run_is_shown_as_one_run(lang: str) -> None:
    document = _run("h200-no-visible-gpu")
    summary = gpu_summary(document)
    assert summary["gpu"]["latency"]["runs"] == 1 and summary["cpu"]["latency"]["runs"] == 20
    gpu, cpu = dict(session_rows(summary["gpu"], lang)), dict(session_rows(summary["cpu"], lang))
    for key in ("table.p50", "table.p95", "table.p99", "table.mean", "table.rate"):
        assert gpu[label(key, lang)] == "-", (key, gpu)
        assert cpu[label(key, lang)] != "-", (key, cpu)
    one = label("table.runs.one", lang, ms=label("ms", lang, value=summary["gpu_p50"]))
    assert gpu[label("table.runs", lang)] == one
    assert cpu[label("table.runs", lang)] == label("table.runs.warmed", lang, runs=20)
    text = "\n".join(inference_lines(document, lang))
    assert one.split(":")[0] in text, text  # "one run, not warmed up: 47.4 ms", never "median 47.4 ms"
    page = render_html(document, lang=lang)
    assert one in page


def test_one_cold_gpu_run_is_no_speed_up_against_a_warmed_baseline() -> None:
    """A run that did reach the GPU (the real H200 run) whose retry had only its cold run: no speed-up."""
    document = _run("h200-working")
    assert gpu_summary(document)["speedup"]  # 20 warmed runs on each side: a speed-up
    once = copy.deepcopy(document)
    as_is = next(s for s in once["inference"]["gpu_retry"]["strategies"] if s["name"] == "as_is")
    cold = as_is["gpu"]["latency"]["max_ms"]  # its slowest run, as a lone cold run would be
    as_is["gpu"]["latency"] = {"runs": 1, "warmup": 0, "p50_ms": cold, "mean_ms": cold}
    summary = gpu_summary(once)
    assert summary["on_gpu"] and summary["gpu_one_run"] and summary["speedup"] is None


def _events(step: str, tmp_path: Path) -> list[dict[str, Any]]:
    request = {
        "step": step,
        "target": {"kind": "python", "python": sys.executable},
        "options": {"runs": 2, "warmup": 1, "dims": {"batch": 2, "seq": 16}},
    }
    run = subprocess.run(
        [sys.executable, "-m", "fallback_doctor.core.flow.step_child"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert events and events[-1]["event"] == "result", run.stdout[-2000:] + run.stderr[-2000:]
    return events[:-1]


@pytest.mark.parametrize("step", ["diagnose", "cpu"])
def test_the_status_line_says_each_step_event_in_words(step: str, tmp_path: Path) -> None:
    events = _events(step, tmp_path)
    tags = {str(e.get("what") or e.get("name")) for e in events} - {""}
    assert tags, events
    if step == "diagnose":
        assert "native" in tags  # the collector's name, once shown as "Collecting: native"
    else:
        assert "cpu.warmup" in tags  # once shown as "[cpu.warmup]"
    for lang in LANGS:
        for event in events:
            said = progress_words(event, step, lang)
            if said is None or str(event.get("what", "")).startswith("inference: "):
                continue  # (the inference's own sentence is core's words already)
            assert "[" not in said and not any(tag in said for tag in tags if "." in tag or "_" in tag), said
            assert said.split(": ", 1)[-1] not in tags, said
