"""Count the log message catalogue: entries per ONNX Runtime release, per binding, per project.

Reads resources/signatures/*.json through the engine's loader (core/readers/logs/signatures.py) and
prints a Markdown section for docs/log-catalogue.md. An entry counts for a release when the
release lies in its ``origin.releases``; every entry carries a real example line that the
conformance test (tests/core/logs/test_message_catalogue.py) matches to it, so "covered by a
test example" equals the count.

By hand: ``python scripts/catalogue_counts.py`` (``--write-doc`` replaces the "## Counts" section
of docs/log-catalogue.md with it).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections import Counter
from pathlib import Path

from fallback_doctor.core.readers.logs.signatures import RELEASES, Signature, load_signatures

ROOT = Path(__file__).resolve().parent.parent
ORT = "microsoft/onnxruntime"
BINDINGS = {
    "csharp/": "C# (Microsoft.ML.OnnxRuntime)",
    "java/": "Java (ai.onnxruntime)",
    "js/": "Node / JS (onnxruntime-node, -web)",
    "onnxruntime/python/": "Python (onnxruntime_pybind_state)",
    "onnxruntime/__init__.py": "Python (onnxruntime package)",
    "onnxruntime/capi/": "Python (onnxruntime package)",
}
OTHER_BINDINGS = {
    "pykeio/ort": "Rust (ort)",
    "coreylowman/cudarc": "Rust (cudarc)",
    "yalue/onnxruntime_go": "Go",
    "dotnet/runtime": "C# / .NET (runtime loader)",
    "openjdk/jdk": "Java (JVM loader)",
    "python/cpython": "Python (interpreter)",
}


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def ort_releases() -> list[str]:
    """ONNX Runtime releases from the bundled table (resources/compat/ort_releases.json), 1.11 on."""
    document = json.loads((ROOT / "resources" / "compat" / "ort_releases.json").read_text(encoding="utf-8"))
    found = {".".join(str(item).split(".")[:2]) for item in _versions(document)}
    return sorted((r for r in found if _key(r) >= (1, 11)), key=_key)


def _versions(node: object) -> list[str]:
    if isinstance(node, dict):
        out = [str(k) for k in node if k[:1].isdigit() and "." in k]
        if isinstance(node.get("version"), str):
            out.append(node["version"])
        for value in node.values():
            out.extend(_versions(value))
        return out
    if isinstance(node, list):
        return [v for item in node for v in _versions(item)]
    return []


def in_range(sig: Signature, release: str) -> bool:
    """Whether ``release`` lies in the entry's origin release range."""
    found = RELEASES.match(sig.origin.get("releases", ""))
    if found is None:
        return False
    first, last = found.group("first"), found.group("last")
    return _key(first)[:2] <= _key(release) and (last == "current" or _key(release) <= _key(last)[:2])


def inventory() -> dict[str, object]:
    """The heuristic inventory of failure strings mined from the wheels (compat/ort_ep_messages.json)."""
    path = ROOT / "resources" / "compat" / "ort_ep_messages.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def covered(text: str, signatures: list[Signature]) -> bool:
    """Whether a catalogue entry covers a mined string: its pattern matches it, its example line holds
    it (a fragment of a format string), or its probe and the string overlap."""
    text = text.strip().strip("\"'").strip()
    for sig in signatures:
        probe = sig.origin.get("probe", "")
        if sig.pattern.search(text) or text in sig.example.get("line", ""):
            return True
        if probe and len(probe) >= 12 and (probe in text or text in probe):
            return True
    return False


def binding(sig: Signature) -> str | None:
    """Which binding or language layer prints the entry's message, if any."""
    if sig.origin.get("project") == ORT:
        for prefix, name in BINDINGS.items():
            if sig.origin.get("file", "").startswith(prefix):
                return name
        return None
    return OTHER_BINDINGS.get(sig.origin.get("project", ""))


def main(argv: list[str] | None = None) -> int:
    """Print the counts as Markdown (or write them into docs/log-catalogue.md)."""
    args = sys.argv[1:] if argv is None else argv
    if "--write-doc" in args:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            report()
        doc = ROOT / "docs" / "log-catalogue.md"
        head = doc.read_text(encoding="utf-8").split("## Counts\n", 1)[0]
        doc.write_text(head + "## Counts\n\n" + buffer.getvalue(), encoding="utf-8")
        return 0
    report()
    return 0


def report() -> None:
    """Print the counts as Markdown."""
    base = load_signatures()
    with_origin = [sig for sig in base.signatures if sig.origin]
    ort = [sig for sig in with_origin if sig.origin["project"] == ORT]
    releases = ort_releases()
    mined = inventory()
    messages = list(mined["messages"])  # type: ignore[call-overload]
    is_covered = {item["text"]: covered(item["text"], with_origin) for item in messages}
    print(
        "| ONNX Runtime release | catalogue entries printed by it | of them found in its wheel (probe) "
        "| failure strings mined from its wheels | of them covered by an entry |"
    )
    print("|---|---|---|---|---|")
    for release in releases:
        here = [sig for sig in ort if in_range(sig, release)]
        probed = [sig for sig in here if "probe" in sig.origin]
        strings = [item["text"] for item in messages if release in item["releases"]]
        hit = sum(1 for text in strings if is_covered[text])
        print(f"| {release} | {len(here)} | {len(probed)} | {len(strings)} | {hit} |")
    print()
    gpu = ", ".join(str(release) for release in mined["gpu_wheels"])  # type: ignore[attr-defined]
    print(
        f"Mined strings: {len(messages)} distinct over all releases, {sum(is_covered.values())} covered; "
        f"onnxruntime-gpu wheels read: {gpu} (their releases count GPU-only texts too)."
    )
    print()
    print("| binding | entries |")
    print("|---|---|")
    for name, count in sorted(Counter(b for sig in with_origin if (b := binding(sig))).items()):
        print(f"| {name} | {count} |")
    print()
    print("| project | entries |")
    print("|---|---|")
    for project, count in sorted(Counter(sig.origin["project"] for sig in with_origin).items()):
        print(f"| {project} | {count} |")
    print()
    print(
        f"Entries with an origin: {len(with_origin)} of {len(base.signatures)}; each has an example line "
        "the conformance test matches to it."
    )


if __name__ == "__main__":
    raise SystemExit(main())
