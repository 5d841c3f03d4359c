"""Run every benchmark (benchmarks/bench_*.py) and write the table into docs/performance.md.

    .venv/bin/python benchmarks/run_all.py [--quick] [--only NAME ...] [--no-write]
    make bench

Each benchmark runs as a fresh process with no arguments and ends its output with one JSON
result line (the convention: benchmarks/_common.py, docs/performance.md "How the table is
made"). The table (what, now, peer, ratio, aim, met) goes between the markers
``<!-- run_all:begin -->`` and ``<!-- run_all:end -->`` of docs/performance.md, with the date
and the machine; the rest of that file is written by people. A script that fails, times out or
prints no result line is listed as such, never left out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOC = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "docs" / "performance-results.json"
"""Every benchmark's latest result (with when and where), so ``--only`` updates its rows alone."""
BEGIN, END = "<!-- run_all:begin -->", "<!-- run_all:end -->"
ROW_KEYS = ("what", "now", "peer", "unit", "ratio", "aim", "met", "note")


def discover(only: list[str] | None = None) -> list[Path]:
    """The benchmark scripts, by name (``bench_<name>.py``); ``only`` keeps the named ones."""
    found = sorted(HERE.glob("bench_*.py"))
    if only:
        wanted = {name.removeprefix("bench_").removesuffix(".py") for name in only}
        found = [path for path in found if path.stem.removeprefix("bench_") in wanted]
    return found


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The result line: the last line of ``stdout`` that is a JSON object with rows; else None."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            return None
        if isinstance(data, dict) and isinstance(data.get("rows"), list):
            rows = [_clean_row(item) for item in data["rows"] if isinstance(item, dict)]
            return {"benchmark": str(data.get("benchmark") or ""), "rows": rows}
        return None
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _clean_row(item: dict[str, Any]) -> dict[str, Any]:
    now, peer = _number(item.get("now")), _number(item.get("peer"))
    ratio = _number(item.get("ratio"))
    if ratio is None and now is not None and peer:
        ratio = now / peer
    met = item.get("met")
    return {
        "what": str(item.get("what") or "?"),
        "now": now,
        "peer": peer,
        "unit": str(item.get("unit") or ""),
        "ratio": ratio,
        "aim": str(item.get("aim") or ""),
        "met": met if isinstance(met, bool) else None,
        "note": str(item.get("note") or ""),
    }


def run_one(path: Path, env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """Run one script; its result, or a row saying why there is none."""
    name = path.stem.removeprefix("bench_")
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _failed(name, f"did not finish within {timeout_s:.0f} s", time.monotonic() - started)
    elapsed = time.monotonic() - started
    result = parse_result(done.stdout)
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])[-300:]
        return _failed(name, f"exited with status {done.returncode}: {tail}", elapsed)
    if result is None or not result["rows"]:
        return _failed(name, "no result line (see the convention in docs/performance.md)", elapsed)
    result["benchmark"] = result["benchmark"] or name
    result["seconds"] = round(elapsed, 1)
    return result


def _failed(name: str, why: str, elapsed: float) -> dict[str, Any]:
    return {
        "benchmark": name,
        "seconds": round(elapsed, 1),
        "rows": [_clean_row({"what": f"bench_{name}.py", "note": why})],
    }


def machine() -> str:
    """One line about where the figures were measured."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu
            )
    except OSError:
        pass
    cores = os.cpu_count() or 0
    memory = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            kib = int(handle.readline().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load average {os.getloadavg()[0]:.1f} at the start"
    return (
        f"{cpu}, {cores} cores{memory}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, GPU: {_gpu()}{load}"
    )


def _gpu() -> str:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            count = pynvml.nvmlDeviceGetCount()
            names = [
                str(pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))) for i in range(count)
            ]
        finally:
            pynvml.nvmlShutdown()
        return ", ".join(names) or "none"
    except Exception:  # noqa: BLE001 - no driver, no pynvml: there is no GPU to name
        return "none (no NVIDIA driver)"


def _figure(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    text = f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return f"{text} {unit}".strip()


def render(results: list[dict[str, Any]], when: str, where: str, quick: bool) -> str:
    """The generated section of docs/performance.md (a result measured earlier says when and where)."""
    lines = [
        BEGIN,
        "",
        f"Measured {when} by `benchmarks/run_all.py`{' --quick' if quick else ''} on: {where}.",
    ]
    for result in results:
        if result.get("when", when) != when or result.get("where", where) != where:
            lines.append(
                f"`bench_{result['benchmark']}.py` kept from {result['when']} on: {result['where']}."
            )
    lines += [
        "",
        "| what | now | peer | ratio | aim | met | benchmark |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for item in result["rows"]:
            ratio = f"{item['ratio']:.2f}x" if item["ratio"] is not None else "–"
            met = {True: "yes", False: "**no**", None: "–"}[item["met"]]
            what = item["what"] + (f" ({item['note']})" if item["note"] else "")
            lines.append(
                f"| {_cell(what)} | {_figure(item['now'], item['unit'])} | "
                f"{_figure(item['peer'], item['unit'])} | {ratio} | {_cell(item['aim'])} | {met} | "
                f"`bench_{result['benchmark']}.py` ({result.get('seconds', 0):.0f} s) |"
            )
    lines += ["", END]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_section(section: str, doc: Path = DOC) -> None:
    """Replace the generated section of ``doc`` (or append it when the markers are missing)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Performance\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n## The table\n\n" + section + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


def merge(previous: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fresh results, and the previous ones of benchmarks not run this time (by name)."""
    names = {result["benchmark"] for result in fresh}
    kept = [result for result in previous if result.get("benchmark") not in names]
    return sorted([*kept, *fresh], key=lambda result: str(result.get("benchmark")))


def _previous(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, list):
        return []
    return [
        {**item, "rows": [_clean_row(row) for row in item["rows"] if isinstance(row, dict)]}
        for item in data
        if isinstance(item, dict)
        and isinstance(item.get("rows"), list)
        and "when" in item
        and "where" in item
    ]


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, write it into docs/performance.md (unless --no-write)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (GFD_BENCH_QUICK=1)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these (bench_NAME.py)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per benchmark")
    parser.add_argument("--no-write", action="store_true", help="print the table, do not write the file")
    parser.add_argument("--doc", type=Path, default=DOC, help=argparse.SUPPRESS)
    parser.add_argument("--results", type=Path, default=RESULTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.quick:
        env["GFD_BENCH_QUICK"] = "1"
    where = machine()
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    results = []
    for path in discover(args.only):
        print(f"running {path.name} …", file=sys.stderr, flush=True)
        results.append(run_one(path, env, args.timeout))
    if hasattr(os, "getloadavg"):
        where += f", {os.getloadavg()[0]:.1f} at the end"
    for result in results:
        result.update(when=when, where=where)
    if args.only:
        results = merge(_previous(args.results), results)
    section = render(results, when, where, args.quick)
    print(section)
    if not args.no_write:
        write_section(section, args.doc)
        args.results.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
