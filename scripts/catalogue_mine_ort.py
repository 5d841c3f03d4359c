"""Find in which ONNX Runtime releases each catalogue message is printed, from the released wheels.

For every signature whose ``origin.project`` is ``microsoft/onnxruntime`` and whose origin has a
``probe`` (a literal part of the message as the source writes it, e.g. the format string's
fixed text), look the probe up in the printable strings of each wheel's native libraries
(``strings``-like, at least 6 characters) and its Python files. The releases where it is found
give ``origin.releases`` (``--write`` stores it; the newest wheel read counts as ``current``).

By hand: ``pip download onnxruntime==1.20.1 --no-deps -d wheels/`` for each release, then
``python scripts/catalogue_mine_ort.py wheels/ [win-wheels/ ...] [--write]`` (Linux, Windows and
GPU wheels of a release are read together).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path

SIGNATURES = Path(__file__).resolve().parent.parent / "resources" / "signatures"
PRINTABLE = re.compile(rb"[\x20-\x7e\t]{6,}")
WIDE = re.compile(rb"(?:[\x20-\x7e]\x00){6,}")
"""Windows builds keep some texts as UTF-16 (wide) strings."""


def _version(wheel: Path) -> tuple[int, ...]:
    found = re.match(r"onnxruntime(?:_gpu)?-([0-9.]+?)\.?-", wheel.name)
    if found is None:
        raise SystemExit(f"not an onnxruntime wheel: {wheel}")
    return tuple(int(part) for part in found.group(1).split("."))


def wheel_text(wheel: Path, cache: Path) -> str:
    """The printable strings of a wheel's libraries and its Python files (cached as text)."""
    target = cache / (wheel.name + ".txt")
    if target.exists():
        return target.read_text(encoding="utf-8", errors="replace")
    parts: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".py"):
                parts.append(archive.read(name).decode("utf-8", errors="replace"))
            elif ".so" in name or name.endswith((".pyd", ".dll")):
                data = archive.read(name)
                parts.extend(chunk.decode("ascii") for chunk in PRINTABLE.findall(data))
                parts.extend(chunk.decode("utf-16-le") for chunk in WIDE.findall(data))
    text = "\n".join(parts)
    target.write_text(text, encoding="utf-8")
    return text


FAILURE = re.compile(
    r"\b(?:[Ff]ail(?:ed|ure)?|[Uu]nable|[Cc]annot|[Cc]ould not|not found|not available|not enabled|"
    r"not supported in this build|is missing|mismatch|[Rr]equire[sd]?|Please install|Please reference|"
    r"[Ff]alling back|[Ff]allback)\b"
)
TOPIC = re.compile(
    r"[Pp]rovider|\bEPs?\b|[Ll]oad|[Ll]ibrar|\.dll|\.so\b|CUDA|cuDNN|CUDNN|TensorRT|TRT|API version|"
    r"discovery|[Dd]evice|driver|PATH"
)
NOT_MESSAGE = re.compile(
    r"^\s*(?:#|//|\*|def |if |elif |for |return |raise |self\.|print\(|warnings\.|logger\.|[a-z_]+ ?=)"
    r"|[{};]\s*$|::<lambda|std::|\(\)\s*$|>>>|:param|\"\"\"|[a-z]_[a-z]+\("
)
"""Heuristic filter of the inventory: a failure word and a provider/library/device word, not code."""


def inventory(releases: list[str], texts: list[str]) -> list[dict[str, object]]:
    """Every string of the wheels that reads like a failure message about providers, libraries or devices."""
    found: dict[str, list[str]] = {}
    for release, text in zip(releases, texts, strict=True):
        for line in {part.strip() for part in text.split("\n")}:
            message = 12 <= len(line) <= 300 and " " in line and not NOT_MESSAGE.search(line)
            if message and FAILURE.search(line) and TOPIC.search(line):
                found.setdefault(line, []).append(release)
    return [{"text": line, "releases": found[line]} for line in sorted(found)]


def release_range(found: list[str], releases: list[str]) -> str:
    """``first-last`` of the releases where a probe was found (``current`` when in the newest)."""
    last = "current" if found[-1] == releases[-1] else found[-1]
    return f"{found[0]}-{last}"


def main(argv: list[str] | None = None) -> int:
    """Print (and with --write store) each ONNX Runtime message's release range."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", type=Path, nargs="+", help="folders of wheels (Linux, Windows, GPU)")
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--inventory", type=Path, help="write the heuristic inventory of failure strings here"
    )
    args = parser.parse_args(argv)
    wheels = sorted((w for folder in args.wheels for w in folder.glob("onnxruntime*.whl")), key=_version)
    by_release: dict[str, list[str]] = {}
    for wheel in wheels:
        # One text per major.minor release: a CPU wheel and a GPU wheel of it are read together
        # (GPU-only messages are compiled into onnxruntime-gpu's libraries alone).
        release = ".".join(map(str, _version(wheel)[:2]))
        cache = wheel.parent / "text"
        cache.mkdir(exist_ok=True)
        by_release.setdefault(release, []).append(wheel_text(wheel, cache))
    releases = list(by_release)
    texts = ["\n".join(parts) for parts in by_release.values()]
    read = ", ".join(releases)
    if args.inventory:
        document = {
            "_source": "Strings of the onnxruntime wheels (Linux and Windows CPU wheels of every minor "
            "release read, and the onnxruntime-gpu wheels of the releases in gpu_wheels) that read like a "
            "failure message about "
            "providers, libraries or devices: a failure word and a topic word, not code (the filter is "
            "FAILURE/TOPIC/NOT_MESSAGE in scripts/catalogue_mine_ort.py). Fragments: a C++ message is often "
            "split around its filled-in parts. A heuristic inventory, with kernel and option messages among "
            "it; docs/log-catalogue.md counts how many a catalogue entry covers.",
            "releases_read": releases,
            "gpu_wheels": sorted({".".join(map(str, _version(w)[:2])) for w in wheels if "_gpu" in w.name}),
            "messages": inventory(releases, texts),
        }
        args.inventory.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for path in sorted(SIGNATURES.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        changed = False
        for sig in document.get("signatures", ()):
            origin = sig.get("origin", {})
            probe = origin.get("probe")
            if origin.get("project") != "microsoft/onnxruntime" or not probe:
                continue
            found = [release for release, text in zip(releases, texts, strict=True) if probe in text]
            if not found:
                print(f"{sig['id']}: probe not found in any wheel: {probe!r}", file=sys.stderr)
                continue
            gaps = [
                r
                for r in releases[releases.index(found[0]) : releases.index(found[-1]) + 1]
                if r not in found
            ]
            span = release_range(found, releases)
            print(f"{sig['id']}: {span}" + (f" (absent from {', '.join(gaps)})" if gaps else ""))
            evidence = (
                f"probe found in the wheels of {', '.join(found)} (read: {read})"
                if gaps
                else f"probe found in every wheel read from {found[0]} to {found[-1]} (read: {read})"
            )
            if args.write and (origin.get("releases") != span or origin.get("evidence") != evidence):
                origin["releases"], origin["evidence"] = span, evidence
                changed = True
        if changed:
            path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
